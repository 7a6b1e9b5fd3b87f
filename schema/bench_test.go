package schema_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/provision-dev/provision/schema"
)

// BenchmarkLoad loads a spec of 10,000 services with meta and a check
// each, next to the baseline of hcl parsing the same file alone: decoding
// and checking should stay of the order of parsing. (make bench measures
// the frontend-heavy shape end to end.)
func BenchmarkLoad(b *testing.B) {
	var src bytes.Buffer
	src.WriteString("project = \"bench\"\n\nvariable \"port_base\" {\n  type    = number\n  default = 10000\n}\n")
	for i := range 10000 {
		fmt.Fprintf(&src, `
service "svc-%d" {
  port = var.port_base + %d
  meta = { team = "edge", shard = "%d" }
  check "alive" {
    tcp      = "127.0.0.1:${var.port_base + %d}"
    interval = "10s"
  }
}
`, i, i, i%16, i)
	}
	dir := b.TempDir()
	path := filepath.Join(dir, "main.hcl")
	if err := os.WriteFile(path, src.Bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
	b.Run("baseline-hcl-parse", func(b *testing.B) {
		for b.Loop() {
			if _, diags := hclparse.NewParser().ParseHCLFile(path); diags.HasErrors() {
				b.Fatal(diags)
			}
		}
	})
	b.Run("load", func(b *testing.B) {
		for b.Loop() {
			if _, diags := schema.NewParser().LoadDir(dir, schema.Inputs{}); diags.HasErrors() {
				b.Fatal(diags)
			}
		}
	})
}
