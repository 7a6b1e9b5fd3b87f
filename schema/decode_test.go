package schema

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// TestLiteral: an expression taken as written has the value hcl gives it,
// and what is not a constant (a reference, an interpolation, a long or
// nested list, an object with a computed or repeated key) is left to the
// general way.
func TestLiteral(t *testing.T) {
	ctx := &hcl.EvalContext{Variables: map[string]cty.Value{"var": cty.ObjectVal(map[string]cty.Value{"x": cty.StringVal("x")})}}
	for _, tt := range []struct {
		src     string
		literal bool
	}{
		{`8080`, true},
		{`"edge"`, true},
		{`true`, true},
		{`null`, true},
		{`["X-Auth-User"]`, true},
		{`["X-Auth-User", "X-Auth-Role", 3, false]`, true},
		{`[]`, false},
		{`["a", var.x]`, false},
		{`["a-${var.x}"]`, false},
		{`[["a"]]`, false},
		{`{ team = "edge" }`, true},
		{`{ wan = { address = "198.51.100.5", port = 80 } }`, true},
		{`{ "X-Probe" = "1", passing = 10 }`, true},
		{`{ team = var.x }`, false},
		{`{ (var.x) = 1 }`, false},
		{`{ a = 1, a = 2 }`, false},
		{`{ a = ["b"] }`, false},
		{"[" + strings.Repeat(`"h", `, shortList) + "]", true},
		{"[" + strings.Repeat(`"h", `, shortList+1) + "]", false},
	} {
		expr, diags := hclsyntax.ParseExpression([]byte(tt.src), "t.hcl", hcl.InitialPos)
		if diags.HasErrors() {
			t.Fatalf("%s: %s", tt.src, diags)
		}
		got, ok := literal(expr)
		if ok != tt.literal {
			t.Errorf("%s: taken as written: %v, want %v", tt.src, ok, tt.literal)
			continue
		}
		if want, _ := expr.Value(ctx); ok && !got.RawEquals(want) {
			t.Errorf("%s: %#v, hcl gives %#v", tt.src, got, want)
		}
	}
}

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
	cfg, diags := NewParser().LoadFiles([]string{path}, Inputs{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if f := cfg.Services[0].Frontend; f == nil || f.ForwardAuth == nil || f.ForwardAuth.Address != "http://127.0.0.1:8080/auth" {
		t.Errorf("frontend %+v, want the forward_auth its dynamic block makes", f)
	}
}

// TestMisspeltDynamic: a misspelt dynamic block is suggested the right
// name, as dynblock's schema does.
func TestMisspeltDynamic(t *testing.T) {
	path := filepath.Join(t.TempDir(), "main.hcl")
	src := "project = \"x\"\n\nservice \"api\" {\n  port = 8080\n  dynamc \"check\" {\n    for_each = []\n    content {}\n  }\n}\n"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	_, diags := NewParser().LoadFiles([]string{path}, Inputs{})
	if len(diags) != 1 || !strings.Contains(diags[0].Detail, `Did you mean "dynamic"?`) {
		t.Errorf("diagnostics %s, want one that suggests \"dynamic\"", diags)
	}
}

// TestKeyForEach: key blocks take for_each as the other kinds do: each
// instance's path is "<label>/<each.key>", or its path attribute; an
// instance whose path is not a key's is refused at its attribute, and two
// instances of one path are one duplicate.
func TestKeyForEach(t *testing.T) {
	for _, tt := range []struct {
		name, src string
		paths     []string
		diags     []string
	}{
		{"label and key", `key "apps/edge" {
  for_each = { limits = { rate = 100 }, mode = "on" }
  value    = each.value
}`, []string{"apps/edge/limits", "apps/edge/mode"}, nil},
		{"path attribute", `key "flags" {
  for_each = toset(["a", "b"])
  path     = "apps/${each.key}/flag"
  value    = true
}`, []string{"apps/a/flag", "apps/b/flag"}, nil},
		{"bad path", `key "k" {
  for_each = toset(["a"])
  path     = "/abs/${each.key}"
  value    = 1
}`, nil, []string{"main.hcl:5,14-32: Invalid key path"}},
		{"one path twice", `key "k" {
  for_each = toset(["a", "b"])
  path     = "apps/same"
  value    = 1
}`, nil, []string{"main.hcl:5,14-25: Duplicate key block"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "main.hcl")
			if err := os.WriteFile(path, []byte("project = \"x\"\n\n"+tt.src+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			cfg, diags := NewParser().LoadFiles([]string{path}, Inputs{})
			var got []string
			for _, d := range diags {
				got = append(got, filepath.Base(d.Subject.String())+": "+d.Summary)
			}
			if diff := cmp.Diff(tt.diags, got); diff != "" {
				t.Fatalf("diagnostics (-want +got):\n%s", diff)
			}
			if tt.diags != nil {
				return
			}
			var paths []string
			for _, k := range cfg.Keys {
				paths = append(paths, k.Path)
			}
			if diff := cmp.Diff(tt.paths, paths); diff != "" {
				t.Errorf("paths (-want +got):\n%s", diff)
			}
		})
	}
}
