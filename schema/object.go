package schema

import (
	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision/addrs"
	"github.com/zclconf/go-cty/cty"
)

// Declaration is what the language knows of a declared object, whatever
// its kind: a kind's own declaration embeds it (kv.Decl), and the loader
// fills in its module instance and its import.
type Declaration struct {
	// Name is the object's identity, the name its address has (a key's
	// path), and NameRange where it is written.
	Name      string
	NameRange hcl.Range
	DeclRange hcl.Range
	Lifecycle Lifecycle
	// Module is the module instance that declares it; the root in the
	// root.
	Module addrs.Module
	// Instance is the for_each instance the object is, nil when its
	// block has no for_each.
	Instance *Instance
	// Import is the import block that takes it over, if any.
	Import *Import
}

// Decl is the declaration itself, which makes a kind's declaration that
// embeds it a Decl.
func (d *Declaration) Decl() *Declaration { return d }

// Decl is one declared object of a kind that its own package decodes
// (KindSchema.Decode).
type Decl interface {
	Decl() *Declaration
}

// Decls are the declared objects of kind k, in block order, as its
// package decoded them (T is its declaration's type).
func Decls[T Decl](cfg *Config, k addrs.Kind) []T { return As[T](cfg.objects[k]) }

// As are objs, declarations of one kind (a Check's), as its package's
// type T.
func As[T Decl](objs []Decl) []T {
	out := make([]T, len(objs))
	for i, o := range objs {
		out[i] = o.(T)
	}
	return out
}

// Declarations are what the language knows of decls, in their order:
// what the engine walks of a kind's declarations.
func Declarations[T Decl](decls []T) []*Declaration {
	out := make([]*Declaration, len(decls))
	for i, d := range decls {
		out[i] = d.Decl()
	}
	return out
}

// Block is one instance of a kind's block, handed to the kind's package
// to decode: the block as written, and its body less for_each with its
// dynamic blocks expanded.
type Block struct {
	*hcl.Block
	Body hcl.Body
	// Each is the for_each instance, nil for a block without for_each.
	Each *Instance
	// ctx is the scope its expressions see (each.key and each.value).
	ctx *hcl.EvalContext
}

// Decoder decodes a block's body in the block's scope (its module's
// variables and locals, each.key and each.value), within the limits of
// one load, and records every diagnostic instead of stopping at the
// first.
type Decoder struct {
	d   *decoder
	cfg *Config
}

// Config is the Config as loaded so far: in Decode, the top level (the
// place blocks) and the objects of the kinds decoded before
// (an early kind's: the indices a document names); in Check, every
// block decoded, and the secrets.
func (d Decoder) Config() *Config { return d.cfg }

// Content decodes body against s.
func (d Decoder) Content(body hcl.Body, s *hcl.BodySchema) *hcl.BodyContent {
	return d.d.content(body, s)
}

// Eval evaluates expr; ok is false when it failed (a diagnostic is
// recorded) or is not wholly known (a variable without a value, reported
// once at the variable). The strings that were sensitive are kept out
// of every output.
func (d Decoder) Eval(expr hcl.Expression) (v cty.Value, ok bool) { return d.d.eval(expr) }

// Value evaluates attr as a value of type ty.
func (d Decoder) Value(attr *hcl.Attribute, ty cty.Type) (cty.Value, bool) {
	return d.d.value(attr, ty)
}

// Override sets *to, and *rng when it is not nil, from attr: a string
// that replaces a default (a key's path written as path = ...). It says
// false when attr failed, which is reported already. A nil or null attr
// keeps the default.
func (d Decoder) Override(attr *hcl.Attribute, to *string, rng *hcl.Range) bool {
	return d.d.override(attr, to, rng)
}

// Errorf records an error at subject, within context.
func (d Decoder) Errorf(subject, context hcl.Range, summary, format string, args ...any) {
	d.d.errorf(subject, context, summary, format, args...)
}

// Duplicate records that the object of what ("key \"apps/x\"") at at
// was declared already, at prev: naming the module instances that
// declare each when a module does.
func (d Decoder) Duplicate(summary, what string, at, prev *Declaration) {
	d.d.diags = append(d.d.diags, duplicateIn(summary, what, at.NameRange, prev.NameRange, at.Module, prev.Module))
}

// Lifecycle decodes the one lifecycle block of the blocks of a kind
// whose ignore_changes may name ig.
func (d Decoder) Lifecycle(ig Ignorable, blocks hcl.Blocks) Lifecycle {
	return d.d.lifecycleBlock(ig, blocks)
}

// Str is attr's value as a string; "" for none, null or an error (which
// is recorded).
func (d Decoder) Str(attr *hcl.Attribute) string { return d.d.str(attr) }

// Bool is attr's value as a bool; false for none, null or an error.
func (d Decoder) Bool(attr *hcl.Attribute) bool { return d.d.boolean(attr) }

// Port is attr's value as a TCP port number, 1 to 65535, or 0 (also
// when it is not given).
func (d Decoder) Port(attr *hcl.Attribute) int { return d.d.port(attr) }

// Strings is attr's value as a list of strings, a null element refused.
func (d Decoder) Strings(attr *hcl.Attribute) []string { return d.d.strList(attr) }

// StringMap is attr's value as a map of strings, a null value refused.
func (d Decoder) StringMap(attr *hcl.Attribute) map[string]string { return d.d.strMap(attr) }

// Marked evaluates expr, keeping the marks of sensitive values: ok is
// false when it names what does not exist or fails (a diagnostic is
// recorded). The value may be unknown.
func (d Decoder) Marked(expr hcl.Expression) (v cty.Value, ok bool) {
	if !d.d.checkRefs(expr) {
		return cty.NilVal, false
	}
	v, diags := d.d.evaluate(expr)
	d.d.diags = append(d.d.diags, diags...)
	return v, !diags.HasErrors()
}

// Secret keeps s, a sensitive string the kind decoded (a proof token),
// out of every output.
func (d Decoder) Secret(s string) { d.d.secrets = append(d.d.secrets, s) }

// Add records diagnostics.
func (d Decoder) Add(diags ...*hcl.Diagnostic) { d.d.diags = append(d.d.diags, diags...) }

// NoErrors runs decode and says whether it recorded no error.
func (d Decoder) NoErrors(decode func()) bool {
	from := len(d.d.diags)
	decode()
	return !d.d.diags[from:].HasErrors()
}

// DuplicateBlock records that a block that may be written once (what
// names it: "frontend block of this service") is written again at at,
// after prev.
func (d Decoder) DuplicateBlock(summary, what string, at, prev hcl.Range) {
	d.d.diags = append(d.d.diags, duplicate(summary, what, at, prev))
}

// Nested is a block inside a kind's block, with the body it was written
// as (Raw: a dynamic block's content) and the iteration of the dynamic
// block that made it ("check.key = \"health\""; "" for a block written
// out).
type Nested struct {
	*hcl.Block
	Raw  hcl.Body
	Iter string
}

// Blocks are the blocks of type typ in c, the content of the body
// written as raw, each with the dynamic iteration that made it.
func (d Decoder) Blocks(raw hcl.Body, c *hcl.BodyContent, typ string) []Nested {
	return d.d.blocksOf(raw, c, typ)
}

// Once decodes, with decode, the first block of type typ in c, the
// content of the body written as raw (a dynamic block's iterations
// included), and refuses each other one as a duplicate of it: the
// "<typ> block of <of>" ("of this service").
func (d Decoder) Once(raw hcl.Body, c *hcl.BodyContent, typ, of string, decode func(b Nested)) {
	var first *hcl.Range
	for _, b := range d.Blocks(raw, c, typ) {
		d.Within(b.Iter, func() {
			if first != nil {
				d.DuplicateBlock("Duplicate "+typ+" block", typ+" block of "+of, b.DefRange, *first)
				return
			}
			first = b.DefRange.Ptr()
			decode(b)
		})
	}
}

// Within runs decode, each diagnostic it records saying which iteration
// (Nested.Iter) it belongs to.
func (d Decoder) Within(iter string, decode func()) { d.d.within(iter, decode) }

// OnlyBlock is the content of the first of blocks, under s: a second is
// refused as a duplicate.
func (d Decoder) OnlyBlock(blocks hcl.Blocks, s *hcl.BodySchema) *hcl.BodyContent {
	return d.d.onlyBlock(blocks, s)
}

// NoCredentials refuses at attr a URL, s, that carries credentials (user
// information, or a query parameter named like a secret): specs are
// committed and plans are shared.
func (d Decoder) NoCredentials(attr *hcl.Attribute, s string) { d.d.noCredentials(attr, s) }

// Args decodes the arguments of c (a body's content under a schema
// WithArgs made) that fields describe, into their wire form, by wire
// name; path names them in diagnostics ("check.health.").
func (d Decoder) Args(fields []Arg, c *hcl.BodyContent, path string) map[string]any {
	return d.d.args(fields, c, path)
}

// Alike is the value of an earlier block of this load that decoded to
// the same as v (the same JSON), or v: most services of an estate
// declare the same weights and tagged addresses, and at 100,000 services
// a copy of them each is much of what a load keeps
// (docs/internals/performance.md). Neither v nor what it returns may be
// changed after.
func (d Decoder) Alike(v map[string]any) map[string]any { return d.d.alike.of(v) }

// SameBlock says whether a and b are instances of one block with
// for_each in one module instance: two declarations of one object there
// are two of its instances.
func SameBlock(a, b *Declaration) bool {
	return sameBlock(a.Instance, b.Instance, a.DeclRange, b.DeclRange, a.Module, b.Module)
}

// In runs decode in b's scope (each.key and each.value; the diagnostics
// it records name the instance), for a kind that decodes its blocks
// together (KindSchema.DecodeAll), and leaves it after.
func (d Decoder) In(b Block, decode func()) {
	ctx, each := d.d.ctx, d.d.each
	d.d.instance(unit{block: b.Block, body: b.Body, ctx: b.ctx, each: b.Each}, decode)
	d.d.ctx, d.d.each = ctx, each
}

// Spread calls decode(part, i) for i from 0 to n-1 side by side, each
// part a Decoder of its own whose diagnostics and secrets join d's in
// order; decode writes nothing another call reads. The work limit is
// crossed where a decode one by one would cross it.
func (d Decoder) Spread(n int, decode func(part Decoder, i int)) {
	d.d.spread(n, func(part *decoder, i int) { decode(Decoder{d: part, cfg: d.cfg}, i) })
}

// Define defines the namespace name (a kind's KindSchema.Namespace) as v
// for the expressions decoded after, in this module instance.
func (d Decoder) Define(name string, v cty.Value) {
	if d.d.namespaces == nil {
		d.d.namespaces = map[string]cty.Value{}
	}
	d.d.namespaces[name] = v
	d.d.ctx.Variables[name] = v
}

// KeyRanges are where each key of an object constructor, expr, is
// written.
func (d Decoder) KeyRanges(expr hcl.Expression) map[string]hcl.Range {
	return nestedKeyRanges(expr, d.d.ctx, "", false)
}

// Source is the text of the specs at r; nil when r is in no file read.
func (d Decoder) Source(r hcl.Range) []byte {
	f := d.d.parser.Files()[r.Filename]
	if f == nil || r.End.Byte > len(f.Bytes) || r.Start.Byte >= r.End.Byte {
		return nil
	}
	return f.Bytes[r.Start.Byte:r.End.Byte]
}
