package schema

import (
	"testing"

	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function/stdlib"
)

// TestToCollection: toset and tolist give what cty's own give, for the
// tuples they take a short way with and for those they do not.
func TestToCollection(t *testing.T) {
	tuples := []cty.Value{
		cty.TupleVal([]cty.Value{cty.StringVal("b"), cty.StringVal("a"), cty.StringVal("b")}),
		cty.TupleVal([]cty.Value{cty.NumberIntVal(1), cty.StringVal("1")}),
		cty.TupleVal([]cty.Value{cty.ObjectVal(map[string]cty.Value{"a": cty.NumberIntVal(1)}), cty.ObjectVal(map[string]cty.Value{"a": cty.NumberIntVal(2)})}),
		cty.TupleVal([]cty.Value{cty.StringVal("a"), cty.UnknownVal(cty.String)}),
		cty.TupleVal([]cty.Value{cty.StringVal("a").Mark("sensitive"), cty.StringVal("b")}),
		cty.EmptyTupleVal,
	}
	for name, pair := range map[string][2]func([]cty.Value) (cty.Value, error){
		"toset":  {Functions["toset"].Call, stdlib.MakeToFunc(cty.Set(cty.DynamicPseudoType)).Call},
		"tolist": {Functions["tolist"].Call, stdlib.MakeToFunc(cty.List(cty.DynamicPseudoType)).Call},
	} {
		for _, v := range tuples {
			got, err := pair[0]([]cty.Value{v})
			want, werr := pair[1]([]cty.Value{v})
			if (err == nil) != (werr == nil) || (err == nil && !got.RawEquals(want)) {
				t.Errorf("%s(%#v) = %#v, %v; cty's gives %#v, %v", name, v, got, err, want, werr)
			}
		}
	}
}
