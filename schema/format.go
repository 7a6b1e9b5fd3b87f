package schema

import (
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclwrite"
)

// Format returns src in the canonical layout: hclwrite's indentation and
// alignment of equals signs. A file that does not parse is returned with
// its diagnostics and left unchanged, as is one nested deeper than
// MaxDepth (hclwrite parses with hcl's recursive parser).
func Format(src []byte, filename string) ([]byte, hcl.Diagnostics) {
	if d := tooDeep(src, filename); d != nil {
		return src, hcl.Diagnostics{d}
	}
	f, diags := hclwrite.ParseConfig(src, filename, hcl.InitialPos)
	if diags.HasErrors() {
		return src, diags
	}
	return f.Bytes(), nil
}
