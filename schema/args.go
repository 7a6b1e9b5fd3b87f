package schema

import (
	"encoding/json"
	"fmt"
	"maps"
	"math/big"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agext/levenshtein"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	ctyjson "github.com/zclconf/go-cty/cty/json"
)

// ArgType is how an argument of a kind's block (a field of a Consul
// registration) is written in a spec and sent on the wire.
type ArgType int

const (
	String    ArgType = iota
	Int               // a whole number
	Bool              //
	Duration          // a Go duration string, "10s"
	Strings           // a list of strings
	StringMap         // a map of strings
	Headers           // a map of lists of strings: an HTTP check's header
	Any               // any value, sent as written: a proxy's opaque config
	Object            // an object of Args: an attribute, or one block
	Objects           // a list of objects of Args: a list, or repeated blocks
	ObjectMap         // a map of objects of Fields, keyed by name
)

// Arg is one argument of a kind's block, as a table of them declares the
// block to the language (as a provider's schema declares a resource's to
// Terraform): its name in a spec, snake_case, and on the wire, the JSON
// the kind's server takes (a Consul registration's fields, whose table
// is consul.RegistrationFields). One table drives the schema of the
// block, its decoding, the request body, the comparison with what the
// server reports, the generated block and pull.
type Arg struct {
	Name string
	Wire string
	Type ArgType
	Args []Arg // of an Object, Objects or ObjectMap
	// Block is the type of a labelled block that writes one element of
	// an Objects field, the label its Name: a sidecar's checks are also
	// check "name" { ... } blocks, as a service's are.
	Block string
	// Enterprise is a field only Consul Enterprise takes: an open-source
	// agent refuses the whole registration ("unknown field").
	Enterprise bool
	// Each checks each element of an Objects field as it is decoded (a
	// sidecar's check, by wire name, its name among them), written at
	// rng; nil for none.
	Each func(d Decoder, el map[string]any, rng hcl.Range)
}

// ArgWired is the field of fields with that wire name.
func ArgWired(fields []Arg, wire string) (Arg, bool) {
	i := slices.IndexFunc(fields, func(f Arg) bool { return f.Wire == wire })
	if i < 0 {
		return Arg{}, false
	}
	return fields[i], true
}

// nests says whether a field may be written as a block.
func (f Arg) nests() bool { return f.Type == Object || f.Type == Objects || f.Type == ObjectMap }

// ArgsSchema is the body schema of fields: each as an attribute, and
// those that nest also as blocks.
func ArgsSchema(fields []Arg) *hcl.BodySchema {
	s := &hcl.BodySchema{}
	for _, f := range fields {
		s.Attributes = append(s.Attributes, hcl.AttributeSchema{Name: f.Name})
		if f.nests() {
			s.Blocks = append(s.Blocks, hcl.BlockHeaderSchema{Type: f.Name})
		}
		if f.Block != "" {
			s.Blocks = append(s.Blocks, hcl.BlockHeaderSchema{Type: f.Block, LabelNames: []string{"name"}})
		}
	}
	return s
}

// WithArgs is the body schema s with the fields' attributes and blocks added.
func WithArgs(s *hcl.BodySchema, fields []Arg) *hcl.BodySchema {
	fs := ArgsSchema(fields)
	return &hcl.BodySchema{Attributes: append(slices.Clone(s.Attributes), fs.Attributes...), Blocks: append(slices.Clone(s.Blocks), fs.Blocks...)}
}

// fields decodes the fields of c, a body's content under a schema that
// with added them to, into their wire form: each written as an attribute
// or, those that nest, as blocks. An Enterprise field is refused at its
// line.
func (d *decoder) args(fields []Arg, c *hcl.BodyContent, path string) map[string]any {
	out := map[string]any{}
	for _, f := range fields {
		at := path + f.Name
		attr, isAttr := c.Attributes[f.Name]
		blocks := c.Blocks.OfType(f.Name)
		_, twice := out[f.Wire]
		switch {
		case twice && isAttr:
			first, _ := ArgWired(fields, f.Wire)
			d.errorf(attr.Range, attr.Range, "Duplicate "+f.Name, "%s is %s under another name, which is set too: write one of them.", at, path+first.Name)
		case isAttr && len(blocks) > 0:
			d.errorf(blocks[0].DefRange, attr.Range, "Duplicate "+f.Name, "%s is set both as an argument (at %s) and as a block: write it once.", at, attr.Range)
		case f.Enterprise && (isAttr || len(blocks) > 0):
			rng := attr.Range
			if !isAttr {
				rng = blocks[0].DefRange
			}
			d.errorf(rng, rng, "Consul Enterprise only", "%s exists in Consul Enterprise only: an open-source agent refuses the whole registration (\"unknown field\"). Leave it out.", at)
		case isAttr:
			v, ok := d.eval(attr.Expr)
			if !ok || v.IsNull() {
				continue
			}
			v, _ = v.Unmark()
			d.keyAttr, d.keyAt = attr.Expr, at
			if w, ok := d.argValue(f, v, attr.Expr.Range(), at); ok {
				out[f.Wire] = w
			}
			d.keyAttr, d.keyRanges = nil, nil
		case len(blocks) > 0:
			if w, ok := d.fieldBlocks(f, blocks, at); ok {
				out[f.Wire] = w
			}
		}
		if f.Block != "" {
			d.labelledBlocks(f, c.Blocks.OfType(f.Block), attr, blocks, at, out)
		}
	}
	return out
}

// labelledBlocks adds the elements of the Objects field f written as
// labelled blocks (check "name" { ... }) to out, each with its label as
// its Name; written beside the field's list (attr) or its unlabelled
// blocks (others), they are refused.
func (d *decoder) labelledBlocks(f Arg, labelled hcl.Blocks, attr *hcl.Attribute, others hcl.Blocks, at string, out map[string]any) {
	if len(labelled) == 0 {
		return
	}
	if attr != nil || len(others) > 0 {
		d.errorf(labelled[0].DefRange, labelled[0].DefRange, "Duplicate "+f.Name, "%s is written both as %s blocks and as %s: write one of them.", at, f.Block, f.Name)
		return
	}
	list := []any{}
	for _, b := range labelled {
		el := d.args(f.Args, d.content(b.Body, ArgsSchema(f.Args)), at+"."+b.Labels[0]+".")
		el["Name"] = b.Labels[0]
		d.checkEach(f, []any{el}, b.DefRange)
		list = append(list, el)
	}
	out[f.Wire] = list
}

// checkEach checks the elements of list, of the Objects field f, written at
// rng (Arg.Each).
func (d *decoder) checkEach(f Arg, list []any, rng hcl.Range) {
	if f.Each == nil {
		return
	}
	for _, el := range list {
		m, _ := el.(map[string]any)
		f.Each(Decoder{d: d}, m, rng)
	}
}

// fieldBlocks decodes a nesting field written as blocks: one for an
// Object, any number for Objects, and for an ObjectMap one block whose
// arguments are its keys.
func (d *decoder) fieldBlocks(f Arg, blocks hcl.Blocks, at string) (any, bool) {
	switch f.Type {
	case Objects:
		var out []any
		for _, b := range blocks {
			el := d.args(f.Args, d.content(b.Body, ArgsSchema(f.Args)), at+".")
			d.checkEach(f, []any{el}, b.DefRange)
			out = append(out, el)
		}
		return out, true
	case ObjectMap:
		if len(blocks) > 1 {
			d.diags = append(d.diags, duplicate("Duplicate "+f.Name+" block", f.Name+" block", blocks[1].DefRange, blocks[0].DefRange))
		}
		attrs, diags := blocks[0].Body.JustAttributes()
		d.diags = append(d.diags, diags...)
		out := map[string]any{}
		for name, attr := range attrs {
			v, ok := d.eval(attr.Expr)
			if !ok || v.IsNull() {
				continue
			}
			v, _ = v.Unmark()
			if w, ok := d.argValue(Arg{Name: f.Name, Type: Object, Args: f.Args}, v, attr.Expr.Range(), at+"."+name); ok {
				out[name] = w
			}
		}
		return out, true
	}
	if len(blocks) > 1 {
		d.diags = append(d.diags, duplicate("Duplicate "+f.Name+" block", f.Name+" block", blocks[1].DefRange, blocks[0].DefRange))
	}
	return d.args(f.Args, d.content(blocks[0].Body, ArgsSchema(f.Args)), at+"."), true
}

// fieldValue converts v, written at rng, to f's wire form; false when it
// does not fit (the diagnostic says why).
func (d *decoder) argValue(f Arg, v cty.Value, rng hcl.Range, at string) (any, bool) {
	bad := func(want string) (any, bool) {
		d.errorf(d.keyRange(rng, at), rng, "Invalid "+f.Name, "%s is %s; got %s.", at, want, TypeName(v))
		return nil, false
	}
	if !v.IsWhollyKnown() {
		return nil, false
	}
	ty := v.Type()
	switch f.Type {
	case String, Duration:
		s, err := toType(v, cty.String)
		if err != nil {
			return bad("a string")
		}
		if f.Type == Duration {
			if dur, err := time.ParseDuration(s.AsString()); err != nil || dur <= 0 {
				d.errorf(d.keyRange(rng, at), rng, "Invalid duration", "%q is not a positive duration such as \"10s\" or \"1m30s\".", s.AsString())
				return nil, false
			}
		}
		return s.AsString(), true
	case Int:
		n, err := toType(v, cty.Number)
		if err != nil {
			return bad("a whole number")
		}
		i, acc := n.AsBigFloat().Int64()
		if acc != big.Exact {
			return bad("a whole number")
		}
		return float64(i), true
	case Bool:
		b, err := toType(v, cty.Bool)
		if err != nil {
			return bad("true or false")
		}
		return b.True(), true
	case Strings:
		l, err := toType(v, cty.List(cty.String))
		if err != nil || slices.ContainsFunc(l.AsValueSlice(), cty.Value.IsNull) {
			return bad("a list of strings")
		}
		out := []any{}
		for _, e := range l.AsValueSlice() {
			out = append(out, e.AsString())
		}
		return out, true
	case StringMap:
		m, err := toType(v, cty.Map(cty.String))
		if err != nil {
			return bad("a map of strings")
		}
		out := map[string]any{}
		for k, e := range m.AsValueMap() {
			if e.IsNull() {
				return bad("a map of strings")
			}
			out[k] = e.AsString()
		}
		return out, true
	case Headers:
		m, err := toType(v, cty.Map(cty.List(cty.String)))
		if err != nil {
			return bad("a map of lists of strings, such as { X-Probe = [\"1\"] }")
		}
		out := map[string]any{}
		for k, e := range m.AsValueMap() {
			if SensitiveKey.MatchString(k) {
				d.errorf(d.keyRange(rng, at), rng, "Credentials in a spec", "%s names the header %q, a credential: specs are committed and plans are shared. Give the check its credentials another way (a file or a local endpoint that needs none).", at, k)
				return nil, false
			}
			vals := []any{}
			for _, x := range e.AsValueSlice() {
				vals = append(vals, x.AsString())
			}
			out[k] = vals
		}
		return out, true
	case Any:
		b, err := ctyjson.Marshal(v, ty)
		if err != nil {
			return bad("a value JSON can carry")
		}
		var out any
		_ = json.Unmarshal(b, &out)
		return out, true
	case Objects:
		if !ty.IsListType() && !ty.IsTupleType() && !ty.IsSetType() {
			return bad("a list of objects")
		}
		out := []any{}
		for i, e := range v.AsValueSlice() {
			w, ok := d.argValue(Arg{Name: f.Name, Type: Object, Args: f.Args}, e, rng, fmt.Sprintf("%s[%d]", at, i))
			if !ok {
				return nil, false
			}
			out = append(out, w)
		}
		d.checkEach(f, out, d.keyRange(rng, at))
		return out, true
	case ObjectMap:
		if !ty.IsObjectType() && !ty.IsMapType() {
			return bad("a map of objects")
		}
		out := map[string]any{}
		for k, e := range v.AsValueMap() {
			w, ok := d.argValue(Arg{Name: f.Name, Type: Object, Args: f.Args}, e, rng, at+"."+k)
			if !ok {
				return nil, false
			}
			out[k] = w
		}
		return out, true
	}
	// Object
	if !ty.IsObjectType() && !ty.IsMapType() {
		return bad("an object")
	}
	out := map[string]any{}
	for k, e := range v.AsValueMap() {
		sub, ok := argNamed(f.Args, k)
		switch {
		case !ok:
			d.errorf(d.keyRange(rng, at+"."+k), rng, "Unsupported argument", "%s has no %q: it takes %s.%s", at, k, names(f.Args), Suggest(k, argNames(f.Args)))
			return nil, false
		case sub.Enterprise:
			d.errorf(d.keyRange(rng, at+"."+k), rng, "Consul Enterprise only", "%s.%s exists in Consul Enterprise only: an open-source agent refuses the whole registration (\"unknown field\"). Leave it out.", at, k)
			return nil, false
		case e.IsNull():
			continue
		}
		w, ok := d.argValue(sub, e, rng, at+"."+k)
		if !ok {
			return nil, false
		}
		out[sub.Wire] = w
	}
	return out, true
}

func argNamed(fields []Arg, name string) (Arg, bool) {
	i := slices.IndexFunc(fields, func(f Arg) bool { return f.Name == name })
	if i < 0 {
		return Arg{}, false
	}
	return fields[i], true
}

// keyRange is where the value at (connect.sidecar_service.kind) is
// written in the object attribute being decoded: its key and value; rng
// when it is not written there (a computed value). The ranges are found
// once, when a diagnostic first asks: most attributes have none.
func (d *decoder) keyRange(rng hcl.Range, at string) hcl.Range {
	if d.keyAttr == nil {
		return rng
	}
	if d.keyRanges == nil {
		d.keyRanges = nestedKeyRanges(d.keyAttr, d.ctx, d.keyAt, true)
	}
	if r, ok := d.keyRanges[at]; ok {
		return r
	}
	return rng
}

// argNames are the fields' names.
func argNames(fields []Arg) []string {
	out := make([]string, len(fields))
	for i, f := range fields {
		out[i] = f.Name
	}
	return out
}

// names lists the fields' names that a spec may write.
func names(fields []Arg) string {
	var out []string
	for _, f := range fields {
		if !f.Enterprise {
			out = append(out, f.Name)
		}
	}
	return strings.Join(out, ", ")
}

// Wire writes m, a registration's fields by wire name, as the JSON
// object the agent takes: the keys of args first, in their order (their
// objects likewise), then any others sorted (a live value provision keeps
// as it is).
func Wire(args []Arg, m map[string]any) json.RawMessage {
	if len(m) == 0 {
		return json.RawMessage("{}") // a plain service's: most of a large plan's
	}
	return appendWire(nil, args, m)
}

// appendWire appends Wire(args, m) to b.
func appendWire(b []byte, args []Arg, m map[string]any) []byte {
	b = append(b, '{')
	var done []string // the keys written, in args' order
	put := func(k string) {
		if len(done) > 0 {
			b = append(b, ',')
		}
		done = append(done, k)
		b = append(AppendJSONString(b, k), ':')
	}
	for _, a := range args {
		if v, ok := m[a.Wire]; ok && !slices.Contains(done, a.Wire) {
			put(a.Wire)
			b = appendWireValue(b, a, v)
		}
	}
	if len(done) < len(m) {
		for _, k := range slices.Sorted(maps.Keys(m)) {
			if !slices.Contains(done, k) {
				put(k)
				b = AppendJSON(b, m[k])
			}
		}
	}
	return append(b, '}')
}

// appendWireValue appends one value of a, its objects in the order of
// a's args.
func appendWireValue(b []byte, a Arg, v any) []byte {
	object := Arg{Type: Object, Args: a.Args}
	switch a.Type {
	case Object:
		if m, ok := v.(map[string]any); ok {
			return appendWire(b, a.Args, m)
		}
	case Objects:
		if l, ok := v.([]any); ok {
			if l == nil {
				l = []any{}
			}
			return appendList(b, l, func(b []byte, e any) []byte { return appendWireValue(b, object, e) })
		}
	case ObjectMap:
		if m, ok := v.(map[string]any); ok {
			if m == nil {
				m = map[string]any{}
			}
			return appendMap(b, m, func(b []byte, e any) []byte {
				n := len(b)
				if b = appendWireValue(b, object, e); len(b) == n {
					b = append(b, "null"...) // json.Marshal's of a value it refuses, within a map
				}
				return b
			})
		}
	}
	return AppendJSON(b, v)
}

// SpecValue is v, a value of a in its wire form, as a spec writes it:
// objects with the names of a's args, their empty values left out; false
// when nothing is left. It is the inverse of the decoding: a generated
// block or a pulled value declares what is live.
func SpecValue(a Arg, v any) (cty.Value, bool) {
	switch a.Type {
	case String, Duration:
		if s, ok := v.(string); ok {
			return cty.StringVal(s), s != ""
		}
	case Int:
		if n, ok := v.(float64); ok {
			return cty.NumberIntVal(int64(n)), n != 0
		}
	case Bool:
		if b, ok := v.(bool); ok {
			return cty.BoolVal(b), b
		}
	case Object:
		m, ok := v.(map[string]any)
		if !ok {
			break
		}
		attrs := map[string]cty.Value{}
		for _, sub := range a.Args {
			if x, ok := m[sub.Wire]; ok {
				if cv, ok := SpecValue(sub, x); ok {
					attrs[sub.Name] = cv
				}
			}
		}
		return cty.ObjectVal(attrs), len(attrs) > 0
	case Objects:
		l, ok := v.([]any)
		if !ok {
			break
		}
		vals := make([]cty.Value, 0, len(l))
		for _, e := range l {
			cv, _ := SpecValue(Arg{Type: Object, Args: a.Args}, e)
			vals = append(vals, cv)
		}
		return cty.TupleVal(vals), len(vals) > 0
	case ObjectMap:
		m, ok := v.(map[string]any)
		if !ok {
			break
		}
		attrs := map[string]cty.Value{}
		for k, e := range m {
			if cv, ok := SpecValue(Arg{Type: Object, Args: a.Args}, e); ok {
				attrs[k] = cv
			}
		}
		return cty.ObjectVal(attrs), len(attrs) > 0
	}
	b, err := json.Marshal(v)
	if err != nil {
		return cty.NilVal, false
	}
	ty, err := ctyjson.ImpliedType(b)
	if err != nil {
		return cty.NilVal, false
	}
	cv, err := ctyjson.Unmarshal(b, ty)
	return cv, err == nil && !cv.IsNull() && (!cv.CanIterateElements() || cv.LengthInt() > 0)
}

// SpecJSON is v, a value of a in its wire form, with the names a spec
// gives its objects' keys (JSON-ready, as pull writes values).
func SpecJSON(a Arg, v any) any {
	switch a.Type {
	case Object:
		m, ok := v.(map[string]any)
		if !ok {
			return v
		}
		out := map[string]any{}
		for k, x := range m {
			if sub, ok := ArgWired(a.Args, k); ok {
				out[sub.Name] = SpecJSON(sub, x)
			} else {
				out[k] = x
			}
		}
		return out
	case Objects:
		l, ok := v.([]any)
		if !ok {
			return v
		}
		out := make([]any, len(l))
		for i, x := range l {
			out[i] = SpecJSON(Arg{Type: Object, Args: a.Args}, x)
		}
		return out
	case ObjectMap:
		m, ok := v.(map[string]any)
		if !ok {
			return v
		}
		out := map[string]any{}
		for k, x := range m {
			out[k] = SpecJSON(Arg{Type: Object, Args: a.Args}, x)
		}
		return out
	}
	return v
}

// nestedKeyRanges is keyRanges at any depth: each key of the object
// expressions in expr (and the elements of its tuples, key[i]) by its
// path from prefix (prefix.key when deep), for a diagnostic at the key.
func nestedKeyRanges(expr hcl.Expression, ctx *hcl.EvalContext, prefix string, deep bool) map[string]hcl.Range {
	out := map[string]hcl.Range{}
	join := func(k string) string {
		if deep {
			return prefix + "." + k
		}
		return k
	}
	switch e := expr.(type) {
	case *hclsyntax.ObjectConsExpr:
		for _, item := range e.Items {
			if k, diags := item.KeyExpr.Value(ctx); !diags.HasErrors() && k.Type() == cty.String && k.IsKnown() && !k.IsNull() {
				path := join(k.AsString())
				out[path] = hcl.RangeBetween(item.KeyExpr.Range(), item.ValueExpr.Range())
				if deep {
					maps.Copy(out, nestedKeyRanges(item.ValueExpr, ctx, path, true))
				}
			}
		}
	case *hclsyntax.TupleConsExpr:
		if deep {
			for i, el := range e.Exprs {
				path := fmt.Sprintf("%s[%d]", prefix, i)
				out[path] = el.Range()
				maps.Copy(out, nestedKeyRanges(el, ctx, path, true))
			}
		}
	}
	return out
}

// TypeName says what a value is, for a diagnostic.
func TypeName(v cty.Value) string {
	if v.IsNull() {
		return "null"
	}
	return "a " + v.Type().FriendlyName()
}

// Suggest is " Did you mean "x"?" for the name of names nearest to s,
// when one is near enough to be a typo; "" otherwise.
func Suggest(s string, names []string) string {
	best, dist := "", 3
	for _, n := range names {
		if d := levenshtein.Distance(s, n, nil); d < dist {
			best, dist = n, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" Did you mean %q?", best)
}

// alike keeps the first of each value Decoder.Alike is given, by its
// JSON text, for the decoders of one load (side by side: Spread).
type alike struct {
	mu   sync.Mutex
	seen map[string]map[string]any
}

func (a *alike) of(v map[string]any) map[string]any {
	key, err := json.Marshal(v)
	if err != nil {
		return v
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if seen, ok := a.seen[string(key)]; ok {
		return seen
	}
	if a.seen == nil {
		a.seen = map[string]map[string]any{}
	}
	a.seen[string(key)] = v
	return v
}
