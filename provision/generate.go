package provision

import (
	"bytes"
	"context"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"
)

// GenerateConfig asks every backend for the declarations of the
// undeclared imports and returns them as one spec file in canonical
// layout, or nil when there is nothing to generate.
func GenerateConfig(ctx context.Context, backends []Backend) ([]byte, hcl.Diagnostics) {
	f := hclwrite.NewEmptyFile()
	body := f.Body()
	var diags hcl.Diagnostics
	n := 0
	for _, b := range backends {
		blocks, gdiags := b.Generate(ctx)
		diags = append(diags, gdiags...)
		for _, blk := range blocks {
			if n == 0 {
				body.AppendUnstructuredTokens(Comment(
					"Written by provision plan -generate-config-out from the live objects that the import blocks name.\n" +
						"Review it, keep it with the import blocks, and commit both: the next plan imports these objects."))
			}
			body.AppendNewline()
			body.AppendBlock(blk)
			n++
		}
	}
	if n == 0 || diags.HasErrors() {
		return nil, diags
	}
	return append(bytes.TrimRight(hclwrite.Format(f.Bytes()), "\n"), '\n'), diags
}

// Comment is text as HCL line comments, one "# " line per line.
func Comment(text string) hclwrite.Tokens {
	var toks hclwrite.Tokens
	start := 0
	for i := 0; i <= len(text); i++ {
		if i == len(text) || text[i] == '\n' {
			toks = append(toks, &hclwrite.Token{Type: hclsyntax.TokenComment, Bytes: []byte("# " + text[start:i] + "\n")})
			start = i + 1
		}
	}
	return toks
}
