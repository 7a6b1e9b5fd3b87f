package schema

import (
	"fmt"
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
// name.) A file they find endless (a comment or a heredoc that never
// ends) is one hcl refuses.
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
		"/*\n}\n/*\n}\n", "a = <<EOT\nx\n", "a = <<-EOT\n  x\n  EOT\nb = <<EOT\n", "a = \"/*\"\nb = 1", "a = <<EOT\n/*\nEOT\n",
		"a = x <<y\n", "ñ = 1 /* x",
	} {
		f.Add([]byte(src))
	}
	unbounded := math.MaxInt
	f.Fuzz(func(t *testing.T, src []byte) {
		for _, lim := range []limits{{1, 1, 1}, {2, 3, 2}, {4, 2, 3}, specLimits, {1, unbounded, 1}, {3, unbounded, 2}} {
			bytes, _, _ := nestingOf(src, lim, 0, nil)
			tokens := tokenNesting(src, "f.hcl", hcl.InitialPos, lim)
			switch {
			case bytes == within && tokens != nil:
				t.Fatalf("at %+v the bytes find %q within the limits, the tokens: %s", lim, src, tokens.Summary)
			case bytes == beyond && tokens == nil && lim.operators == unbounded:
				t.Fatalf("at %+v the bytes find %q beyond the limits, the tokens within", lim, src)
			}
		}
		var firsts []string
		v, at, cuts := nestingOf(src, specLimits, 1, func(_ int, name []byte) { firsts = append(firsts, string(name)) })
		if v == endless {
			if _, diags := hclsyntax.ParseConfig(src, "f.hcl", hcl.InitialPos); !diags.HasErrors() {
				t.Fatalf("the bytes find %q endless at %d, hcl parses it", src, at)
			}
		}
		// Pieces that parse are the whole: the same items, at the same
		// places, and a whole that parses too.
		if pieces, _ := parsePieces(src, "f.hcl", cuts, nil); pieces != nil {
			f, diags := hclsyntax.ParseConfig(src, "f.hcl", hcl.InitialPos)
			if diags.HasErrors() {
				t.Fatalf("the pieces of %q parse, the whole does not: %s", src, diags)
			}
			if got, want := itemsOf(pieces), itemsOf(f.Body.(*hclsyntax.Body)); !slices.Equal(got, want) || pieces.SrcRange != f.Body.(*hclsyntax.Body).SrcRange {
				t.Fatalf("the pieces of %q hold %q in %s, the whole %q in %s", src, got, pieces.SrcRange, want, f.Body.(*hclsyntax.Body).SrcRange)
			}
			// The names the bytes find first in each item are the
			// items' own: what a piece holds is known before it parses.
			var names []string
			for name := range pieces.Attributes {
				names = append(names, name)
			}
			for _, b := range pieces.Blocks {
				names = append(names, b.Type)
			}
			slices.Sort(names)
			slices.Sort(firsts)
			if !slices.Equal(firsts, names) {
				t.Fatalf("in %q the bytes find items beginning %q, hcl %q", src, firsts, names)
			}
		}
	})
}

// itemsOf names the items of body and where they are, in order.
func itemsOf(body *hclsyntax.Body) []string {
	var out []string
	for name, a := range body.Attributes {
		out = append(out, fmt.Sprintf("%s = at %s", name, a.SrcRange))
	}
	for _, b := range body.Blocks {
		out = append(out, fmt.Sprintf("%s %q at %s", b.Type, b.Labels, b.Range()))
	}
	slices.Sort(out)
	return out
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
		if v, _, _ := nestingOf(b, specLimits, 0, nil); v != within {
			t.Errorf("%s: %d, want within", path, v)
		}
	}
	service := "service \"svc-%d\" {\n  port = var.port_base + 1\n  meta = { team = \"edge\" } # owner\n  frontend {\n    rule = \"PathPrefix:/svc-${var.n}\"\n  }\n}\n"
	if v, _, _ := nestingOf([]byte(strings.Repeat(service, 1000)), specLimits, 0, nil); v != within {
		t.Errorf("1,000 services: %d, want within", v)
	}
}
