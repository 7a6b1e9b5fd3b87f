package schema

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// FuzzNesting holds the byte scan of a file (nestingOf) to the token scan
// (tokenNesting) at small limits, where arbitrary input crosses them
// often: a file the bytes find within the limits must pass the tokens'
// check (else a file nested too deeply would reach hcl's parser). Where
// operators are not bounded, the bytes count exactly what the tokens
// count, so a file they find beyond the limits must fail the check too.
// (They may count more operators than the tokens hold: "-" inside a
// name.) Of a file within the limits that hcl parses, the bytes also
// name its top-level items, in order (LoadFiles sorts pieces by them),
// and a file they find plain holds nothing budget.bound wraps.
func FuzzNesting(f *testing.F) {
	seeds, _ := filepath.Glob("../specs/*.hcl")
	more, _ := filepath.Glob("../testdata/*/*.hcl")
	for _, path := range append(seeds, more...) {
		if b, err := os.ReadFile(path); err == nil {
			f.Add(b)
		}
	}
	for _, src := range []string{
		`a = "${x}" # }`, `a = "$${x" // ]`, `a = "%%{" /* } */`, `a = "\" ${ {b = [1]}["b"] }"`,
		"a = x ? y ? 1 : 2 : 3\nb = !!c", "a = [1,\n2 + 3 - 4]", `a = "${~ x ~}"`,
		`a = "%{ if x }${y}%{ endif }"`, "a = <<EOT\n${x}\nEOT\n", "a = 1e-5 - -2", `a = "\`,
		"a = \"x\n\"", "a = {/* unterminated", "a = ( ]", "}", "a = \"${ [ }\"", "a = x => y >= z == w != v",
	} {
		f.Add([]byte(src))
	}
	unbounded := math.MaxInt
	f.Fuzz(func(t *testing.T, src []byte) {
		for _, lim := range []limits{{1, 1, 1}, {2, 3, 2}, {4, 2, 3}, specLimits, {1, unbounded, 1}, {3, unbounded, 2}} {
			bytes, tokens := nestingOf(src, lim, nil), tokenNesting(src, "f.hcl", hcl.InitialPos, lim)
			switch {
			case bytes == within && tokens != nil:
				t.Fatalf("at %+v the bytes find %q within the limits, the tokens: %s", lim, src, tokens.Summary)
			case bytes == beyond && tokens == nil && lim.operators == unbounded:
				t.Fatalf("at %+v the bytes find %q beyond the limits, the tokens within", lim, src)
			}
		}
		var names []string
		if nestingOf(src, specLimits, func(n []byte) { names = append(names, string(n)) }) != within {
			return
		}
		f, diags := hclsyntax.ParseConfig(src, "f.hcl", hcl.InitialPos)
		if diags.HasErrors() {
			return
		}
		body := f.Body.(*hclsyntax.Body)
		if want := itemNames(body); !slices.Equal(names, want) {
			t.Fatalf("the bytes of %q name the items %q, hcl %q", src, names, want)
		}
		pc := &piece{src: src}
		pc.scan()
		w := &boundWalker{}
		hclsyntax.Walk(body, w)
		literalTemplates := !slices.ContainsFunc(w.templates, func(t *hclsyntax.TemplateExpr) bool {
			return slices.ContainsFunc(t.Parts, func(e hclsyntax.Expression) bool { _, ok := e.(*hclsyntax.LiteralValueExpr); return !ok })
		})
		if pc.plain && (len(w.fors) > 0 || len(w.calls) > 0 || !literalTemplates) {
			t.Fatalf("the bytes of %q are plain, the syntax holds %d for expressions, %d calls, templates all literal: %v", src, len(w.fors), len(w.calls), literalTemplates)
		}
	})
}

// itemNames are the names that begin the items of body, in order.
func itemNames(body *hclsyntax.Body) []string {
	type item struct {
		at   int
		name string
	}
	var items []item
	for _, a := range body.Attributes {
		items = append(items, item{a.NameRange.Start.Byte, a.Name})
	}
	for _, b := range body.Blocks {
		items = append(items, item{b.TypeRange.Start.Byte, b.Type})
	}
	slices.SortFunc(items, func(a, b item) int { return a.at - b.at })
	var names []string
	for _, it := range items {
		names = append(names, it.name)
	}
	return names
}

// TestNestingOfSpecs: the bytes of real specs are enough, so that they
// are lexed once, by hcl's parser: the shipped specs, the language's
// test specs and the services the benchmarks declare.
func TestNestingOfSpecs(t *testing.T) {
	paths, _ := filepath.Glob("../specs/*.hcl")
	paths = append(paths, "../testdata/language/main.hcl", "../testdata/import/index.hcl")
	for _, path := range paths {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if v := nestingOf(b, specLimits, nil); v != within {
			t.Errorf("%s: %d, want within", path, v)
		}
	}
	service := "service \"svc-%d\" {\n  port = var.port_base + 1\n  meta = { team = \"edge\" } # owner\n  frontend {\n    rule = \"PathPrefix:/svc-${var.n}\"\n  }\n}\n"
	if v := nestingOf([]byte(strings.Repeat(service, 1000)), specLimits, nil); v != within {
		t.Errorf("1,000 services: %d, want within", v)
	}
}
