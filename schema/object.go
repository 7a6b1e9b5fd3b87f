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
func Decls[T Decl](cfg *Config, k addrs.Kind) []T {
	objs := cfg.objects[k]
	out := make([]T, len(objs))
	for i, o := range objs {
		out[i] = o.(T)
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
}

// Decoder decodes a block's body in the block's scope (its module's
// variables and locals, each.key and each.value), within the limits of
// one load, and records every diagnostic instead of stopping at the
// first.
type Decoder struct{ d *decoder }

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
