package schema

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

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

// TestMisspeltDynamic: a misspelt dynamic block is suggested the right
// name, as dynblock's schema does.
func TestMisspeltDynamic(t *testing.T) {
	path := filepath.Join(t.TempDir(), "main.hcl")
	src := "project = \"x\"\n\nservice \"api\" {\n  port = 8080\n  dynamc \"check\" {\n    for_each = []\n    content {}\n  }\n}\n"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	_, diags := NewParser(Everything).LoadFiles([]string{path}, Inputs{})
	if len(diags) != 1 || !strings.Contains(diags[0].Detail, `Did you mean "dynamic"?`) {
		t.Errorf("diagnostics %s, want one that suggests \"dynamic\"", diags)
	}
}
