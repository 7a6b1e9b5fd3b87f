package schema_test

import (
	"bufio"
	"os"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/provision-dev/provision/schema"
	"github.com/zclconf/go-cty/cty"
)

// TestTerraformExamples: every console example of the pages of
// Terraform's functions (website/docs/language/functions/*.mdx of
// hashicorp/terraform, each case under the line naming its page, in
// testdata/terraform-functions.txt) gives Terraform's result, of
// Terraform's type: a value, "error" for an example the page says fails,
// "sensitive" for a sensitive result.
func TestTerraformExamples(t *testing.T) {
	f, err := os.Open("testdata/terraform-functions.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ctx := &hcl.EvalContext{Functions: schema.Functions}
	eval := func(src string) (cty.Value, hcl.Diagnostics) {
		expr, diags := hclsyntax.ParseExpression([]byte(src), "example", hcl.InitialPos)
		if diags.HasErrors() {
			return cty.NilVal, diags
		}
		return expr.Value(ctx)
	}
	page, cases, agree := "", 0, 0
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		if p, ok := strings.CutPrefix(text, "# "); ok {
			if _, at, ok := strings.Cut(p, ": website/"); ok {
				page = "website/" + at
			}
			continue
		}
		expr, want, ok := strings.Cut(text, " => ")
		if !ok {
			continue
		}
		cases++
		got, diags := eval(expr)
		switch {
		case want == "error":
			if !diags.HasErrors() {
				t.Errorf("%s (line %d): %s is %#v; the page says it fails", page, line, expr, got)
				continue
			}
		case diags.HasErrors():
			t.Errorf("%s (line %d): %s: %s", page, line, expr, diags)
			continue
		case want == "sensitive":
			if !got.HasMark("sensitive") {
				t.Errorf("%s (line %d): %s is not sensitive", page, line, expr)
				continue
			}
		default:
			w, wdiags := eval(want)
			if wdiags.HasErrors() {
				t.Fatalf("line %d: the expected %s does not evaluate: %s", line, want, wdiags)
			}
			if !sameValue(got, w) {
				t.Errorf("%s (line %d): %s is %#v (%s), want %s (%s)", page, line, expr, got, got.Type().FriendlyName(), want, w.Type().FriendlyName())
				continue
			}
		}
		agree++
	}
	if cases < 200 {
		t.Fatalf("%d cases read, fewer than the file holds", cases)
	}
	t.Logf("%d of Terraform's documented examples, %d agree", cases, agree)
}

// sameValue is whether got is want, of want's type; an empty collection
// of an element type no literal can write (setproduct's of an empty
// list) is of the same kind and empty.
func sameValue(got, want cty.Value) bool {
	got, _ = got.UnmarkDeep()
	if got.Type().Equals(want.Type()) {
		return got.Equals(want).True()
	}
	empty := func(v cty.Value) bool { return v.IsKnown() && !v.IsNull() && v.LengthInt() == 0 }
	return got.Type().IsListType() && want.Type().IsListType() && empty(got) && empty(want)
}

// TestTerraformEdges: the semantics the examples leave out: keys and
// searchset of matchkeys in one type, unknown and sensitive values, an
// infinity and its opposite, a fileset pattern with a class in braces or
// an unclosed one (which must end).
func TestTerraformEdges(t *testing.T) {
	ctx := &hcl.EvalContext{Functions: schema.Functions, Variables: map[string]cty.Value{
		"unknown_set": cty.UnknownVal(cty.Set(cty.String)),
		"two_unknown": cty.SetVal([]cty.Value{cty.UnknownVal(cty.String), cty.UnknownVal(cty.String)}),
		"unknown":     cty.UnknownVal(cty.String),
		"unknown_obj": cty.UnknownVal(cty.Object(map[string]cty.Type{"a": cty.String})),
		"secret_obj":  cty.ObjectVal(map[string]cty.Value{"a": cty.StringVal("x")}).Mark("sensitive"),
	}}
	for expr, want := range map[string]string{
		`matchkeys(["a", "b"], [1, 2], ["1"])`: `cty.ListVal([]cty.Value{cty.StringVal("a")})`,
		`one(two_unknown)`:                     `cty.UnknownVal(cty.String)`,
		`issensitive(unknown)`:                 `cty.UnknownVal(cty.Bool)`,
		`length(unknown_obj)`:                  `cty.NumberIntVal(1)`,
		`issensitive(length(secret_obj))`:      `cty.True`,
		`sum([1, 2.5])`:                        `cty.NumberFloatVal(3.5)`,
	} {
		e, diags := hclsyntax.ParseExpression([]byte(expr), "edge", hcl.InitialPos)
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		got, diags := e.Value(ctx)
		if diags.HasErrors() {
			t.Errorf("%s: %s", expr, diags)
			continue
		}
		if got.GoString() != want {
			t.Errorf("%s = %s, want %s", expr, got.GoString(), want)
		}
	}
	e, _ := hclsyntax.ParseExpression([]byte(`sum([1/0, -1/0])`), "edge", hcl.InitialPos)
	if _, diags := e.Value(ctx); !diags.HasErrors() || !strings.Contains(diags.Error(), "not a number") {
		t.Errorf("sum of both infinities: %s", diags)
	}
}
