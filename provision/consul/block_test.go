package consul

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/provision-dev/provision/schema"
)

// TestNestedDynamic: a dynamic block two levels down in a service is
// expanded (a body is decoded without dynblock only when no block in it,
// at any depth, is dynamic).
func TestNestedDynamic(t *testing.T) {
	path := filepath.Join(t.TempDir(), "main.hcl")
	src := `project = "x"

locals {
  auths = ["http://127.0.0.1:8080/auth"]
}

service "api" {
  port = 8080
  frontend {
    rule = "PathPrefix:/api"
    dynamic "forward_auth" {
      for_each = local.auths
      content {
        address = forward_auth.value
      }
    }
  }
}
`
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, diags := schema.NewParser().LoadFiles([]string{path}, schema.Inputs{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if f := Services(cfg)[0].Frontend; f == nil || f.ForwardAuth == nil || f.ForwardAuth.Address != "http://127.0.0.1:8080/auth" {
		t.Errorf("frontend %+v, want the forward_auth its dynamic block makes", f)
	}
}
