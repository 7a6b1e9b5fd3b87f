package schema

import (
	"bytes"
	"compress/gzip"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"errors"
	"fmt"
	"hash"
	"math/big"
	"regexp"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/hashicorp/go-cty-funcs/cidr"
	"github.com/hashicorp/go-cty-funcs/collection"
	"github.com/hashicorp/go-cty-funcs/crypto"
	"github.com/hashicorp/go-cty-funcs/encoding"
	"github.com/hashicorp/go-cty-funcs/filesystem"
	"github.com/hashicorp/go-cty-funcs/uuid"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"
	xencoding "golang.org/x/text/encoding"
	"golang.org/x/text/encoding/ianaindex"
)

// The functions of Terraform's language that cty's stdlib lacks or means
// otherwise, as Terraform's pages (website/docs/language/functions/*.mdx
// of hashicorp/terraform) define them; their examples are the tests
// (testdata/terraform-functions.txt). Those of HashiCorp's go-cty-funcs
// (Terraform's, extracted for Packer) are taken as they are, but its
// base64decode, which logs what it decodes.
var terraformFunctions = map[string]function.Function{
	// Strings.
	"startswith":  stringTest("prefix", strings.HasPrefix),
	"endswith":    stringTest("suffix", strings.HasSuffix),
	"strcontains": stringTest("substr", strings.Contains),
	"replace":     replaceFunc,

	// Collections.
	"alltrue":   boolsFunc(true),
	"anytrue":   boolsFunc(false),
	"coalesce":  collection.CoalesceFunc,
	"index":     indexFunc,
	"matchkeys": matchkeysFunc,
	"one":       oneFunc,
	"sum":       sumFunc,
	"transpose": transposeFunc,

	// Encodings.
	"base64decode":     base64DecodeFunc,
	"base64encode":     encoding.Base64EncodeFunc,
	"base64gzip":       base64GzipFunc,
	"textencodebase64": textEncodeBase64Func,
	"textdecodebase64": textDecodeBase64Func,
	"urlencode":        encoding.URLEncodeFunc,

	// Paths, as strings: no file is read.
	"basename": filesystem.BasenameFunc,
	"dirname":  filesystem.DirnameFunc,

	// Dates.
	"formatdate": stdlib.FormatDateFunc,
	"timeadd":    stdlib.TimeAddFunc,
	"timecmp":    timecmpFunc,

	// Hashes.
	"md5":          crypto.Md5Func,
	"sha1":         crypto.Sha1Func,
	"sha256":       crypto.Sha256Func,
	"sha512":       crypto.Sha512Func,
	"base64sha256": base64Hash("sha256"),
	"base64sha512": base64Hash("sha512"),
	"uuidv5":       uuid.V5Func,

	// Networks.
	"cidrhost":    cidr.HostFunc,
	"cidrnetmask": cidr.NetmaskFunc,
	"cidrsubnet":  cidr.SubnetFunc,
	"cidrsubnets": cidr.SubnetsFunc,

	// Sensitivity.
	"sensitive":    sensitiveFunc,
	"nonsensitive": nonsensitiveFunc,
	"issensitive":  issensitiveFunc,
}

// Unrepeatable are Terraform's functions that provision leaves out: each
// reads the clock, a random source or the machine, and the same specs
// must make the same plan on every machine (a golden file, a saved plan
// checked again before it applies). Each is a function that fails saying
// so, rather than an unknown name.
var Unrepeatable = map[string]string{
	"timestamp":     "reads the clock",
	"plantimestamp": "reads the clock",
	"uuid":          "is random",
	"bcrypt":        "is random (a new salt each call)",
	"abspath":       "names a path of the machine that plans",
	"pathexpand":    "reads the home directory of the machine that plans",
}

func unrepeatable(name, why string) function.Function {
	return function.New(&function.Spec{
		VarParam: &function.Parameter{Name: "args", Type: cty.DynamicPseudoType, AllowNull: true, AllowUnknown: true, AllowDynamicType: true},
		Type:     function.StaticReturnType(cty.DynamicPseudoType),
		Impl: func([]cty.Value, cty.Type) (cty.Value, error) {
			return cty.NilVal, fmt.Errorf("provision leaves out Terraform's %s: it %s, and the same specs must make the same plan on every machine", name, why)
		},
	})
}

func stringTest(second string, test func(s, t string) bool) function.Function {
	return function.New(&function.Spec{
		Params: []function.Parameter{{Name: "str", Type: cty.String}, {Name: second, Type: cty.String}},
		Type:   function.StaticReturnType(cty.Bool),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			return cty.BoolVal(test(args[0].AsString(), args[1].AsString())), nil
		},
		RefineResult: func(b *cty.RefinementBuilder) *cty.RefinementBuilder { return b.NotNull() },
	})
}

// replaceFunc is Terraform's replace: a substring wrapped in slashes is a
// regular expression, its replacement may name its groups ($1).
var replaceFunc = function.New(&function.Spec{
	Params: []function.Parameter{{Name: "str", Type: cty.String}, {Name: "substr", Type: cty.String}, {Name: "replace", Type: cty.String}},
	Type:   function.StaticReturnType(cty.String),
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		str, substr, repl := args[0].AsString(), args[1].AsString(), args[2].AsString()
		if len(substr) > 1 && substr[0] == '/' && substr[len(substr)-1] == '/' {
			re, err := regexp.Compile(substr[1 : len(substr)-1])
			if err != nil {
				return cty.NilVal, err
			}
			return cty.StringVal(re.ReplaceAllString(str, repl)), nil
		}
		return cty.StringVal(strings.ReplaceAll(str, substr, repl)), nil
	},
})

// boolsFunc is alltrue (all true) or anytrue (!all): whether every, or
// any, element of a list of bools is true; a null element is false.
func boolsFunc(all bool) function.Function {
	return function.New(&function.Spec{
		Params: []function.Parameter{{Name: "list", Type: cty.List(cty.Bool)}},
		Type:   function.StaticReturnType(cty.Bool),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			unknown := false
			for it := args[0].ElementIterator(); it.Next(); {
				_, v := it.Element()
				switch {
				case !v.IsKnown():
					unknown = true
				case v.IsNull() || v.False():
					if all {
						return cty.False, nil
					}
				default:
					if !all {
						return cty.True, nil
					}
				}
			}
			if unknown {
				return cty.UnknownVal(cty.Bool), nil
			}
			return cty.BoolVal(all), nil
		},
	})
}

var indexFunc = function.New(&function.Spec{
	Params: []function.Parameter{{Name: "list", Type: cty.DynamicPseudoType}, {Name: "value", Type: cty.DynamicPseudoType}},
	Type:   function.StaticReturnType(cty.Number),
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		list := args[0]
		if !(list.Type().IsListType() || list.Type().IsTupleType()) {
			return cty.NilVal, errors.New("argument must be a list or tuple")
		}
		if !list.IsKnown() {
			return cty.UnknownVal(cty.Number), nil
		}
		if list.LengthInt() == 0 {
			return cty.NilVal, errors.New("cannot search an empty list")
		}
		for it := list.ElementIterator(); it.Next(); {
			i, v := it.Element()
			eq, err := stdlib.Equal(v, args[1])
			if err != nil {
				return cty.NilVal, err
			}
			if !eq.IsKnown() {
				return cty.UnknownVal(cty.Number), nil
			}
			if eq.True() {
				return i, nil
			}
		}
		return cty.NilVal, errors.New("item not found")
	},
})

var matchkeysFunc = function.New(&function.Spec{
	Params: []function.Parameter{
		{Name: "values", Type: cty.List(cty.DynamicPseudoType)},
		{Name: "keys", Type: cty.List(cty.DynamicPseudoType)},
		{Name: "searchset", Type: cty.List(cty.DynamicPseudoType)},
	},
	Type: func(args []cty.Value) (cty.Type, error) {
		ty, _ := convert.UnifyUnsafe([]cty.Type{args[1].Type(), args[2].Type()})
		if ty == cty.NilType {
			return cty.NilType, errors.New("keys and searchset must be of the same type")
		}
		return args[0].Type(), nil
	},
	Impl: func(args []cty.Value, retType cty.Type) (cty.Value, error) {
		if !args[0].IsKnown() || !args[1].IsKnown() || !args[2].IsKnown() {
			return cty.UnknownVal(retType), nil
		}
		// As Terraform's: keys and searchset compared in the type both
		// convert to (matchkeys(v, [1, 2], ["1"]) matches 1).
		ty, _ := convert.UnifyUnsafe([]cty.Type{args[1].Type(), args[2].Type()})
		for i := 1; i <= 2; i++ {
			conv, err := convert.Convert(args[i], ty)
			if err != nil {
				return cty.NilVal, function.NewArgError(i, err)
			}
			args[i] = conv
		}
		if args[0].LengthInt() != args[1].LengthInt() {
			return cty.ListValEmpty(retType.ElementType()), errors.New("length of keys and values should be equal")
		}
		var out []cty.Value
		values := args[0].AsValueSlice()
		for i, k := range args[1].AsValueSlice() {
			for it := args[2].ElementIterator(); it.Next(); {
				_, s := it.Element()
				eq, err := stdlib.Equal(k, s)
				if err != nil {
					return cty.NilVal, err
				}
				if !eq.IsKnown() {
					return cty.UnknownVal(retType), nil
				}
				if eq.True() {
					out = append(out, values[i])
					break
				}
			}
		}
		if len(out) == 0 {
			return cty.ListValEmpty(retType.ElementType()), nil
		}
		return cty.ListVal(out), nil
	},
})

// oneFunc is Terraform's one: the element of a collection of one, null
// of its element type for none, an error for more.
var oneFunc = function.New(&function.Spec{
	Params: []function.Parameter{{Name: "list", Type: cty.DynamicPseudoType}},
	Type: func(args []cty.Value) (cty.Type, error) {
		ty := args[0].Type()
		switch {
		case ty.IsListType() || ty.IsSetType():
			return ty.ElementType(), nil
		case ty.IsTupleType():
			elems := ty.TupleElementTypes()
			switch len(elems) {
			case 0:
				return cty.DynamicPseudoType, nil
			case 1:
				return elems[0], nil
			}
			return cty.NilType, errors.New("must be a list, set, or tuple value with either zero or one elements")
		case ty == cty.DynamicPseudoType:
			return cty.DynamicPseudoType, nil
		}
		return cty.NilType, errors.New("must be a list, set, or tuple value with either zero or one elements")
	},
	Impl: func(args []cty.Value, retType cty.Type) (cty.Value, error) {
		v := args[0]
		if !v.IsKnown() || v.Type().IsSetType() && !v.IsWhollyKnown() {
			return cty.UnknownVal(retType), nil // a set's unknown elements may be one
		}
		if v.IsNull() {
			return cty.NilVal, errors.New("argument must not be null")
		}
		switch v.LengthInt() {
		case 0:
			return cty.NullVal(retType), nil
		case 1:
			it := v.ElementIterator()
			it.Next()
			_, e := it.Element()
			return e, nil
		}
		return cty.NilVal, errors.New("must be a list, set, or tuple value with either zero or one elements")
	},
})

var sumFunc = function.New(&function.Spec{
	Params: []function.Parameter{{Name: "list", Type: cty.DynamicPseudoType}},
	Type:   function.StaticReturnType(cty.Number),
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		ty := args[0].Type()
		if !ty.IsListType() && !ty.IsSetType() && !ty.IsTupleType() {
			return cty.NilVal, errors.New("argument must be list, set, or tuple")
		}
		if !args[0].IsKnown() {
			return cty.UnknownVal(cty.Number), nil
		}
		if args[0].LengthInt() == 0 {
			return cty.NilVal, errors.New("cannot find the sum of an empty list")
		}
		total := new(big.Float)
		for it := args[0].ElementIterator(); it.Next(); {
			_, v := it.Element()
			n, err := convert.Convert(v, cty.Number)
			switch {
			case err != nil:
				return cty.NilVal, errors.New("argument must be a list of numbers")
			case !n.IsKnown():
				return cty.UnknownVal(cty.Number), nil
			case n.IsNull():
				return cty.NilVal, errors.New("argument must be list, set, or tuple of number values")
			}
			f := n.AsBigFloat()
			if total.IsInf() && f.IsInf() && total.Sign() != f.Sign() {
				return cty.NilVal, errors.New("the sum of an infinity and its opposite is not a number")
			}
			total.Add(total, f)
		}
		return cty.NumberVal(total), nil
	},
})

var transposeFunc = function.New(&function.Spec{
	Params: []function.Parameter{{Name: "values", Type: cty.Map(cty.List(cty.String))}},
	Type:   function.StaticReturnType(cty.Map(cty.List(cty.String))),
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		byValue := map[string][]string{}
		for it := args[0].ElementIterator(); it.Next(); {
			k, list := it.Element()
			if !list.IsKnown() {
				return cty.UnknownVal(cty.Map(cty.List(cty.String))), nil
			}
			for lit := list.ElementIterator(); lit.Next(); {
				_, v := lit.Element()
				if !v.IsKnown() {
					return cty.UnknownVal(cty.Map(cty.List(cty.String))), nil
				}
				if v.IsNull() {
					return cty.NilVal, errors.New("input lists must not contain null values")
				}
				byValue[v.AsString()] = append(byValue[v.AsString()], k.AsString())
			}
		}
		if len(byValue) == 0 {
			return cty.MapValEmpty(cty.List(cty.String)), nil
		}
		out := map[string]cty.Value{}
		for v, keys := range byValue {
			sort.Strings(keys)
			elems := make([]cty.Value, len(keys))
			for i, k := range keys {
				elems[i] = cty.StringVal(k)
			}
			out[v] = cty.ListVal(elems)
		}
		return cty.MapVal(out), nil
	},
})

func stringFunc(impl func(string) (string, error)) function.Function {
	return function.New(&function.Spec{
		Params: []function.Parameter{{Name: "str", Type: cty.String}},
		Type:   function.StaticReturnType(cty.String),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			s, err := impl(args[0].AsString())
			if err != nil {
				return cty.UnknownVal(cty.String), err
			}
			return cty.StringVal(s), nil
		},
	})
}

// base64DecodeFunc is Terraform's base64decode; its error never quotes
// the text, which may be a secret.
var base64DecodeFunc = stringFunc(func(s string) (string, error) {
	b, err := base64.StdEncoding.DecodeString(s)
	switch {
	case err != nil:
		return "", errors.New("the string is not base64 (RFC 4648, standard alphabet)")
	case !utf8.Valid(b):
		return "", errors.New("the decoded bytes are not UTF-8 text: a string holds text")
	}
	return string(b), nil
})

var base64GzipFunc = stringFunc(func(s string) (string, error) {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	if _, err := w.Write([]byte(s)); err != nil {
		return "", err
	}
	if err := w.Close(); err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(b.Bytes()), nil
})

func base64Hash(name string) function.Function {
	return stringFunc(func(s string) (string, error) {
		return base64.StdEncoding.EncodeToString(digestOf(name, []byte(s))), nil
	})
}

var textEncodeBase64Func = textFunc("string", func(s, name string, enc xencoding.Encoding) (string, error) {
	b, err := enc.NewEncoder().Bytes([]byte(s))
	if err != nil {
		return "", fmt.Errorf("the string holds characters that %s cannot represent", name)
	}
	return base64.StdEncoding.EncodeToString(b), nil
})

var textDecodeBase64Func = textFunc("source", func(s, name string, enc xencoding.Encoding) (string, error) {
	raw, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return "", errors.New("the string is not base64 (RFC 4648, standard alphabet)")
	}
	b, err := enc.NewDecoder().Bytes(raw)
	if err != nil || !utf8.Valid(b) {
		return "", fmt.Errorf("the bytes are not text in %s", name)
	}
	return string(b), nil
})

// textFunc is textencodebase64 or textdecodebase64: conv of its first
// argument (named first) in the encoding its second names.
func textFunc(first string, conv func(s, name string, enc xencoding.Encoding) (string, error)) function.Function {
	return function.New(&function.Spec{
		Params: []function.Parameter{{Name: first, Type: cty.String}, {Name: "encoding", Type: cty.String}},
		Type:   function.StaticReturnType(cty.String),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			name := args[1].AsString()
			enc, err := textEncoding(name)
			if err != nil {
				return cty.UnknownVal(cty.String), function.NewArgError(1, err)
			}
			out, err := conv(args[0].AsString(), name, enc)
			if err != nil {
				return cty.UnknownVal(cty.String), function.NewArgError(0, err)
			}
			return cty.StringVal(out), nil
		},
	})
}

func textEncoding(name string) (xencoding.Encoding, error) {
	enc, err := ianaindex.IANA.Encoding(name)
	if err != nil || enc == nil {
		return nil, fmt.Errorf("%q is not an encoding name of IANA's registry that this build supports", name)
	}
	return enc, nil
}

// digestOf is the digest of b by the hash named.
func digestOf(name string, b []byte) []byte {
	var h hash.Hash
	switch name {
	case "md5":
		h = md5.New()
	case "sha1":
		h = sha1.New()
	case "sha256":
		h = sha256.New()
	default:
		h = sha512.New()
	}
	h.Write(b)
	return h.Sum(nil)
}

var timecmpFunc = function.New(&function.Spec{
	Params: []function.Parameter{{Name: "timestamp_a", Type: cty.String}, {Name: "timestamp_b", Type: cty.String}},
	Type:   function.StaticReturnType(cty.Number),
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		var ts [2]time.Time
		for i := range ts {
			t, err := time.Parse(time.RFC3339, args[i].AsString())
			if err != nil {
				return cty.UnknownVal(cty.Number), function.NewArgErrorf(i, "%q is not an RFC 3339 timestamp", args[i].AsString())
			}
			ts[i] = t
		}
		return cty.NumberIntVal(int64(ts[0].Compare(ts[1]))), nil
	},
})

var sensitiveFunc = function.New(&function.Spec{
	Params: []function.Parameter{{Name: "value", Type: cty.DynamicPseudoType, AllowUnknown: true, AllowNull: true, AllowMarked: true, AllowDynamicType: true}},
	Type:   func(args []cty.Value) (cty.Type, error) { return args[0].Type(), nil },
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		return args[0].Mark(sensitiveMark), nil
	},
})

var nonsensitiveFunc = function.New(&function.Spec{
	Params: []function.Parameter{{Name: "value", Type: cty.DynamicPseudoType, AllowUnknown: true, AllowNull: true, AllowMarked: true, AllowDynamicType: true}},
	Type:   func(args []cty.Value) (cty.Type, error) { return args[0].Type(), nil },
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		v, marks := args[0].Unmark()
		delete(marks, sensitiveMark)
		return v.WithMarks(marks), nil
	},
})

var issensitiveFunc = function.New(&function.Spec{
	Params: []function.Parameter{{Name: "value", Type: cty.DynamicPseudoType, AllowUnknown: true, AllowNull: true, AllowMarked: true, AllowDynamicType: true}},
	Type:   function.StaticReturnType(cty.Bool),
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		if args[0].HasMark(sensitiveMark) {
			return cty.True, nil
		}
		if !args[0].IsKnown() {
			return cty.UnknownVal(cty.Bool), nil // it may yet be
		}
		return cty.False, nil
	},
})
