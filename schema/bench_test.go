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

// BenchmarkLoad loads a spec of 10,000 services, next to the baseline of
// hcl parsing the same file alone: decoding and checking should stay of
// the order of parsing.
func BenchmarkLoad(b *testing.B) {
	var src bytes.Buffer
	src.WriteString("project = \"bench\"\n\nvariable \"port_base\" {\n  type    = number\n  default = 10000\n}\n")
	for i := range 10000 {
		fmt.Fprintf(&src, `
service "svc-%d" {
  address = "127.0.0.1"
  port    = var.port_base + %d
  frontend {
    rule = "PathPrefix:/svc-%d"
    forward_auth {
      address               = "http://127.0.0.1:8080/auth"
      auth_response_headers = ["X-Auth-User"]
    }
  }
}
`, i, i, i)
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
