package schema_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/provision-dev/provision/schema"
)

// TestFormatTooDeep: fmt refuses a file nested deeper than MaxDepth with
// a located error instead of overflowing hcl's recursive parser (a
// hundred thousand "[" killed the process after 16 s).
func TestFormatTooDeep(t *testing.T) {
	src := []byte("project = \"x\"\n\nlocals {\n  a = " + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + "\n}\n")
	out, diags := schema.Format(src, "deep.hcl")
	if len(diags) != 1 || diags[0].Summary != "Expression nested too deeply" || diags[0].Subject.Start.Line != 4 || string(out) != string(src) {
		t.Fatalf("Format of a file nested 100,000 deep: %v", diags)
	}
}

// TestLimitsLeaveRoom: a spec of the size the benchmarks declare (10,000
// services from a for expression over a setproduct, with templates) is
// far inside the limits.
func TestLimitsLeaveRoom(t *testing.T) {
	const n = 10000
	src := fmt.Sprintf(`project = "x"

locals {
  services = { for p in setproduct(range(%d), range(100)) : "svc-${p[0]}-${p[1]}" => { port = 10000 + p[0] * 100 + p[1], tags = [for t in ["a", "b", "c"] : "${t}-${p[1]}"] } }
}

service "svc" {
  for_each = local.services
  port     = each.value.port
  tags     = each.value.tags
}
`, n/100)
	path := filepath.Join(t.TempDir(), "main.hcl")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, diags := schema.NewParser().LoadFiles([]string{path}, schema.Inputs{})
	if diags.HasErrors() || len(cfg.Services) != n {
		t.Fatalf("%d services, %v", len(cfg.Services), diags)
	}
}
