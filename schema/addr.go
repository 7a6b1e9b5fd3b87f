package schema

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// traversalText writes an address written as a traversal (an import
// block's to) as addrs.Set.Parse reads it; key, when set, is the value of a
// computed name in brackets (kind[each.value]). It fails on a name in
// brackets that is not a string.
func traversalText(tr hcl.Traversal, key *cty.Value) (string, error) {
	var b strings.Builder
	for i, step := range tr {
		switch step := step.(type) {
		case hcl.TraverseRoot:
			b.WriteString(step.Name)
		case hcl.TraverseAttr:
			b.WriteString("." + step.Name)
		case hcl.TraverseIndex:
			v := step.Key
			if key != nil && i == len(tr)-1 {
				v = *key
			}
			switch {
			case v.IsNull() || !v.IsKnown():
				return "", fmt.Errorf("the name in brackets must be a string")
			case v.Type() == cty.String:
				b.WriteString("[" + strconv.Quote(v.AsString()) + "]")
			case v.Type() == cty.Number && i < len(tr)-1:
				b.WriteString("[" + v.AsBigFloat().Text('f', -1) + "]")
			default:
				return "", fmt.Errorf("the name in brackets must be a string")
			}
		default:
			return "", fmt.Errorf("it is not an address")
		}
	}
	return b.String(), nil
}

// upper starts a sentence made of an error's text.
func upper(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
