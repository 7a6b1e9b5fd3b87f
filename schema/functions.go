package schema

import (
	"maps"

	"github.com/hashicorp/hcl/v2/ext/tryfunc"
	"github.com/hashicorp/hcl/v2/ext/typeexpr"
	ctyyaml "github.com/zclconf/go-cty-yaml"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"
)

// Functions is the fixed table of functions a spec may call, by name, but
// those that read the specs' own files (FileFunctions): Terraform's
// functions, with Terraform's meaning. Most are a library's (cty's stdlib
// and yaml, hcl's try and can, typeexpr's convert, go-cty-funcs), the
// rest terraformFunctions. None reads the clock, the environment, a file
// or a random source, so that the same specs always make the same plan
// (Unrepeatable). Where tools differ on a name, Terraform's meaning wins:
// reverse reverses a list (strrev a string), length counts a string's
// characters, a collection's elements and an object's attributes,
// coalesce skips empty strings, replace takes /regexp/, and index finds a
// value's position (cty's index, an element by its key, is left out).
var Functions = withTerraform(map[string]function.Function{
	// Strings.
	"chomp":         stdlib.ChompFunc,
	"format":        stdlib.FormatFunc,
	"formatlist":    stdlib.FormatListFunc,
	"indent":        stdlib.IndentFunc,
	"join":          stdlib.JoinFunc,
	"lower":         stdlib.LowerFunc,
	"regex":         stdlib.RegexFunc,
	"regexall":      stdlib.RegexAllFunc,
	"regex_replace": stdlib.RegexReplaceFunc,
	"split":         stdlib.SplitFunc,
	"strlen":        stdlib.StrlenFunc,
	"strrev":        stdlib.ReverseFunc,
	"substr":        stdlib.SubstrFunc,
	"title":         stdlib.TitleFunc,
	"trim":          stdlib.TrimFunc,
	"trimprefix":    stdlib.TrimPrefixFunc,
	"trimspace":     stdlib.TrimSpaceFunc,
	"trimsuffix":    stdlib.TrimSuffixFunc,
	"upper":         stdlib.UpperFunc,

	// Collections.
	"chunklist":       stdlib.ChunklistFunc,
	"coalescelist":    stdlib.CoalesceListFunc,
	"compact":         stdlib.CompactFunc,
	"concat":          stdlib.ConcatFunc,
	"contains":        stdlib.ContainsFunc,
	"distinct":        stdlib.DistinctFunc,
	"element":         stdlib.ElementFunc,
	"flatten":         stdlib.FlattenFunc,
	"keys":            stdlib.KeysFunc,
	"length":          lengthFunc,
	"lookup":          stdlib.LookupFunc,
	"merge":           stdlib.MergeFunc,
	"range":           stdlib.RangeFunc,
	"reverse":         stdlib.ReverseListFunc,
	"setintersection": stdlib.SetIntersectionFunc,
	"setproduct":      stdlib.SetProductFunc,
	"setsubtract":     stdlib.SetSubtractFunc,
	"setunion":        stdlib.SetUnionFunc,
	"slice":           stdlib.SliceFunc,
	"sort":            stdlib.SortFunc,
	"values":          stdlib.ValuesFunc,
	"zipmap":          stdlib.ZipmapFunc,

	// Numbers.
	"abs":      stdlib.AbsoluteFunc,
	"ceil":     stdlib.CeilFunc,
	"floor":    stdlib.FloorFunc,
	"log":      stdlib.LogFunc,
	"max":      stdlib.MaxFunc,
	"min":      stdlib.MinFunc,
	"parseint": stdlib.ParseIntFunc,
	"pow":      stdlib.PowFunc,
	"signum":   stdlib.SignumFunc,

	// Encodings.
	"csvdecode":  stdlib.CSVDecodeFunc,
	"jsondecode": stdlib.JSONDecodeFunc,
	"jsonencode": stdlib.JSONEncodeFunc,
	"yamldecode": ctyyaml.YAMLDecodeFunc,
	"yamlencode": ctyyaml.YAMLEncodeFunc,

	// Types.
	"tobool":   stdlib.MakeToFunc(cty.Bool),
	"tolist":   toCollection(stdlib.MakeToFunc(cty.List(cty.DynamicPseudoType)), cty.ListVal),
	"tomap":    stdlib.MakeToFunc(cty.Map(cty.DynamicPseudoType)),
	"tonumber": stdlib.MakeToFunc(cty.Number),
	"toset":    toCollection(stdlib.MakeToFunc(cty.Set(cty.DynamicPseudoType)), cty.SetVal),
	"tostring": stdlib.MakeToFunc(cty.String),
	"convert":  typeexpr.ConvertFunc,
	"try":      tryfunc.TryFunc,
	"can":      tryfunc.CanFunc,
})

// withTerraform is table with Terraform's functions that cty lacks or
// means otherwise (terraformFunctions), and those left out by design
// (Unrepeatable) as functions that say why.
func withTerraform(table map[string]function.Function) map[string]function.Function {
	maps.Copy(table, terraformFunctions)
	for name, why := range Unrepeatable {
		table[name] = unrepeatable(name, why)
	}
	return table
}

// lengthFunc is stdlib's length for collections and strlen for a string,
// as Terraform's length: length("api") is 3, length({a = 1}) is 1.
var lengthFunc = function.New(&function.Spec{
	Description: "The number of elements of a collection, or of characters of a string.",
	Params: []function.Parameter{{
		Name:             "value",
		Type:             cty.DynamicPseudoType,
		AllowDynamicType: true,
		AllowUnknown:     true,
		AllowMarked:      true,
	}},
	Type: function.StaticReturnType(cty.Number),
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		switch ty := args[0].Type(); {
		case ty == cty.String:
			return stdlib.Strlen(args[0])
		case ty.IsObjectType():
			// An object's attributes are known from its type, known or not.
			_, marks := args[0].Unmark()
			return cty.NumberIntVal(int64(len(ty.AttributeTypes()))).WithMarks(marks), nil
		}
		return stdlib.Length(args[0])
	},
	RefineResult: func(b *cty.RefinementBuilder) *cty.RefinementBuilder { return b.NotNull() },
})

// toCollection is stdlib's tolist or toset (std) with a short way for a
// tuple whose elements are all of one type, as a for expression gives:
// cty's conversion unifies the elements' types by sorting them, which was
// a fifth of the load of import { for_each = toset([for ...]) } over
// 1,000 documents. Any other value goes through std.
func toCollection(std function.Function, collect func([]cty.Value) cty.Value) function.Function {
	return function.New(&function.Spec{
		Params: std.Params(),
		Type: func(args []cty.Value) (cty.Type, error) {
			if elems, ok := oneTyped(args[0]); ok {
				return collect(elems).Type(), nil
			}
			return std.ReturnTypeForValues(args)
		},
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			if elems, ok := oneTyped(args[0]); ok {
				return collect(elems), nil
			}
			return std.Call(args)
		},
	})
}

// oneTyped are the elements of v when v is a known, unmarked, non-empty
// tuple of elements of one type.
func oneTyped(v cty.Value) ([]cty.Value, bool) {
	ty := v.Type()
	if !ty.IsTupleType() || v.IsNull() || !v.IsWhollyKnown() || v.ContainsMarked() || len(ty.TupleElementTypes()) == 0 {
		return nil, false
	}
	types := ty.TupleElementTypes()
	for _, t := range types[1:] {
		if !t.Equals(types[0]) {
			return nil, false
		}
	}
	return v.AsValueSlice(), true
}
