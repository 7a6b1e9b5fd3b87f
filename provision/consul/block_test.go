package consul

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/provision-dev/provision/schema"
)

// TestNestedDynamic: a dynamic block two levels down in a service is
// expanded (a body is decoded without dynblock only when no block in it,
// at any depth, is dynamic).
func TestNestedDynamic(t *testing.T) {
	cfg := loadSpec(t, `project = "x"

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
`)
	if f := Services(cfg)[0].Frontend; f == nil || f.ForwardAuth == nil || f.ForwardAuth.Address != "http://127.0.0.1:8080/auth" {
		t.Errorf("frontend %+v, want the forward_auth its dynamic block makes", f)
	}
}

// TestFieldsAlike: services that declare the same other fields share one
// decoded value of them (Decoder.Alike), one per distinct value, each
// still as declared; a module's services share the root's.
func TestFieldsAlike(t *testing.T) {
	dir := t.TempDir()
	service := func(name, weights string) string {
		return fmt.Sprintf("service %q {\n  port    = 80\n  weights = %s\n}\n", name, weights)
	}
	root := "project = \"p\"\n\n" + service("a", "{ passing = 10, warning = 1 }") + service("b", "{ passing = 10, warning = 1 }") +
		service("c", "{ passing = 5, warning = 1 }") + "module \"m\" {\n  source = \"./m\"\n}\n"
	for path, src := range map[string]string{"main.hcl": root, "m/main.hcl": service("d", "{ passing = 10, warning = 1 }")} {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, path)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, path), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg, diags := schema.NewParser(testLanguage).LoadDir(dir, schema.Inputs{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	fields := map[string]map[string]any{}
	for _, s := range Services(cfg) {
		fields[s.Service] = s.Fields
	}
	same := func(x, y string) bool {
		return reflect.ValueOf(fields[x]).UnsafePointer() == reflect.ValueOf(fields[y]).UnsafePointer()
	}
	if !same("a", "b") || !same("a", "d") || same("a", "c") {
		t.Errorf("shared: a and b %v, a and d %v, a and c %v; want true, true, false", same("a", "b"), same("a", "d"), same("a", "c"))
	}
	if w := fields["c"]["Weights"]; !reflect.DeepEqual(w, map[string]any{"Passing": 5.0, "Warning": 1.0}) {
		t.Errorf("c's weights %v", w)
	}
}
