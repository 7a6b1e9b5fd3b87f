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
