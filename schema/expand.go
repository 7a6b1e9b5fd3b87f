package schema

import (
	"fmt"
	"runtime"
	"slices"
	"strconv"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/dynblock"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/provision-dev/provision/provision/addrs"
	"github.com/provision-dev/provision/provision/parallel"
	"github.com/zclconf/go-cty/cty"
)

// Instance is one instance of a block with for_each (service, index,
// document or import): the key it was made for (each.key).
type Instance struct {
	Key string
	// Counted: the instance is one of a place block's count, its Key
	// the index ("0").
	Counted bool
}

// String is the instance as a person reads it: each.key = "api", or
// count.index = 0.
func (i *Instance) String() string {
	if i.Counted {
		return "count.index = " + i.Key
	}
	return "each.key = " + strconv.Quote(i.Key)
}

// KeyPtr is the key, or nil for no instance (a block without for_each),
// as a plan's change carries it.
func (i *Instance) KeyPtr() *string {
	if i == nil {
		return nil
	}
	return &i.Key
}

// unit is one object's block to decode: a block, or one instance of a
// block with for_each, with the context its expressions see.
type unit struct {
	block *hcl.Block
	// body is the block's body less for_each, its dynamic blocks expanded.
	body hcl.Body
	ctx  *hcl.EvalContext
	each *Instance
}

// asBlock is the unit as its kind's package is handed it.
func (u unit) asBlock() Block { return Block{Block: u.block, Body: u.body, Each: u.each, ctx: u.ctx} }

var forEachSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "for_each"}}}

// expand turns blocks into units: one per block, or one per element of
// its for_each, in the for_each's key order.
func (d *decoder) expand(blocks []*hcl.Block) []unit {
	var out []unit
	for _, b := range blocks {
		c, body, diags := b.Body.PartialContent(forEachSchema)
		d.diags = append(d.diags, diags...)
		attr, ok := c.Attributes["for_each"]
		if !ok {
			out = append(out, unit{block: b, body: d.expandDynamic(body, d.ctx), ctx: d.ctx})
			continue
		}
		for _, e := range d.forEach(b, attr) {
			ctx := d.ctx.NewChild()
			ctx.Variables = map[string]cty.Value{"each": cty.ObjectVal(map[string]cty.Value{"key": cty.StringVal(e.key), "value": e.value})}
			out = append(out, unit{block: b, body: d.expandDynamic(body, ctx), ctx: ctx, each: &Instance{Key: e.key}})
		}
	}
	return out
}

// expandDynamic is body with its dynamic blocks expanded in ctx
// (dynblock), or body itself when every block in it, at any depth, is
// of a type the schemas expect inside a service or an index: dynblock
// extends the schema of every body it decodes, which was a third of
// decoding a large spec's services. A block of any other type (dynamic,
// or misspelt) goes through dynblock, whose diagnostic may suggest
// "dynamic".
func (d *decoder) expandDynamic(body hcl.Body, ctx *hcl.EvalContext) hcl.Body {
	if sb, ok := body.(*hclsyntax.Body); ok && !d.lang.unexpectedBlocks(sb) {
		return body
	}
	return dynblock.Expand(body, ctx)
}

// unexpectedBlocks: a block in body, at any depth, is of none of the
// types the kinds' blocks hold (KindSchema.Nested).
func (l *Language) unexpectedBlocks(body *hclsyntax.Body) bool {
	return slices.ContainsFunc(body.Blocks, func(b *hclsyntax.Block) bool { return !l.nested[b.Type] || l.unexpectedBlocks(b.Body) })
}

type element struct {
	key   string
	value cty.Value
}

// forEach evaluates a block's for_each: a map or object (each.key is
// the key, each.value the value), or a set of strings (both are the
// string). It must be known when the specs are loaded, and may not be
// sensitive: its keys become IDs and names that every plan shows.
func (d *decoder) forEach(b *hcl.Block, attr *hcl.Attribute) []element {
	if !d.checkRefs(attr.Expr) {
		return nil
	}
	v, diags := d.evaluate(attr.Expr)
	d.diags = append(d.diags, diags...)
	if diags.HasErrors() {
		return nil
	}
	bad := func(summary, format string, args ...any) []element {
		d.errorf(attr.Expr.Range(), b.DefRange, summary, format, args...)
		return nil
	}
	if v.IsMarked() {
		return bad("Sensitive value in for_each",
			"The for_each of %s uses a sensitive value. Its keys become service IDs, index names and document IDs, which every plan shows; keep secrets out of for_each (a sensitive value may still be used inside the block, through each.value, where it stays hidden).", blockName(b))
	}
	ty := v.Type()
	set := ty.IsSetType() && ty.ElementType() == cty.String
	if !v.IsKnown() || !set && !v.IsWhollyKnown() {
		return nil // a variable without a value, reported there
	}
	switch {
	case v.IsNull():
		return bad("Invalid for_each argument", "The for_each of %s is null. Give it a map, an object or a set of strings; {} makes no instance.", blockName(b))
	case ty.IsMapType() || ty.IsObjectType():
		var out []element
		for it := v.ElementIterator(); it.Next(); {
			k, e := it.Element()
			out = append(out, element{k.AsString(), e})
		}
		return out
	case set:
		// Iterated once: each iteration of a set sorts it.
		var out []element
		for it := v.ElementIterator(); it.Next(); {
			_, e := it.Element()
			switch {
			case !e.IsKnown():
				return nil // a variable without a value, reported there
			case e.IsNull():
				return bad("Invalid for_each argument", "The set given to the for_each of %s holds a null; each element is an instance's key.", blockName(b))
			}
			out = append(out, element{e.AsString(), e})
		}
		return out
	case ty.IsListType() || ty.IsTupleType():
		return bad("Invalid for_each argument",
			"The for_each of %s is a list. A list's elements are known by position, so removing one would renumber, replace and delete the ones after it; give a map, or a set of strings with toset(...).", blockName(b))
	}
	return bad("Invalid for_each argument", "The for_each of %s is %s; give a map, an object, or a set of strings with toset(...).", blockName(b), TypeName(v))
}

// blockName is a block as a person names it: service "app".
func blockName(b *hcl.Block) string {
	s := b.Type
	for _, l := range b.Labels {
		s += " " + strconv.Quote(l)
	}
	return s
}

// blocksOf are the blocks of type typ in c, the content of the body
// written as raw, each with the dynamic iteration that made it. dynblock
// keeps the iteration to itself, so it is found again here: the blocks
// come in the order of raw's blocks, a dynamic block's in its for_each's
// order. Where that cannot be told (a for_each that only an enclosing
// iterator makes known), the rest are left unnamed.
func (d *decoder) blocksOf(raw hcl.Body, c *hcl.BodyContent, typ string) []Nested {
	got := c.Blocks.OfType(typ)
	out := make([]Nested, len(got))
	for i, b := range got {
		out[i] = Nested{Block: b, Raw: b.Body}
	}
	sb, ok := raw.(*hclsyntax.Body)
	if !ok {
		return out
	}
	i := 0
	for _, rb := range sb.Blocks {
		switch {
		case i >= len(out):
			return out
		case rb.Type == typ:
			out[i].Raw = rb.Body
			i++
		case rb.Type == "dynamic" && len(rb.Labels) == 1 && rb.Labels[0] == typ:
			keys, name, content, ok := d.dynamicKeys(rb)
			if !ok {
				return out
			}
			for _, k := range keys {
				if i < len(out) {
					out[i].Raw, out[i].Iter = content, name+".key = "+k
				}
				i++
			}
		}
	}
	return out
}

// dynamicKeys are the keys of a dynamic block's for_each, as written in a
// diagnostic, with the iterator's name and the content block's body. It
// records no diagnostic: dynblock reports the block's problems.
func (d *decoder) dynamicKeys(rb *hclsyntax.Block) ([]string, string, hcl.Body, bool) {
	name := rb.Labels[0]
	var content hcl.Body
	for _, cb := range rb.Body.Blocks {
		if cb.Type == "content" {
			content = cb.Body
		}
	}
	if it, ok := rb.Body.Attributes["iterator"]; ok {
		if tr, diags := hcl.AbsTraversalForExpr(it.Expr); !diags.HasErrors() {
			name = tr.RootName()
		}
	}
	fe, ok := rb.Body.Attributes["for_each"]
	if !ok {
		return nil, "", nil, false
	}
	v, diags := d.evaluate(fe.Expr)
	if diags.HasErrors() || !v.IsWhollyKnown() || v.IsNull() || !v.CanIterateElements() {
		return nil, "", nil, false
	}
	v, _ = v.Unmark()
	var keys []string
	for it := v.ElementIterator(); it.Next(); {
		k, _ := it.Element()
		keys = append(keys, keyString(k))
	}
	return keys, name, content, true
}

// keyString writes a key as HCL would: "api", or 0 for a list's.
func keyString(k cty.Value) string {
	if k.Type() == cty.String {
		return strconv.Quote(k.AsString())
	}
	if k.Type() == cty.Number {
		return k.AsBigFloat().Text('f', -1)
	}
	return fmt.Sprintf("%#v", k)
}

// within runs decode and says in each diagnostic it records which
// iteration (of for_each or of a dynamic block) it belongs to: the
// instances of a block share its lines, so the range alone is not enough.
func (d *decoder) within(iter string, decode func()) {
	from := len(d.diags)
	decode()
	if iter == "" {
		return
	}
	for _, diag := range d.diags[from:] {
		diag.Detail += " (In the iteration " + iter + ".)"
	}
}

// sameBlock says whether two declarations are instances of one block with
// for_each, in one module instance (the instances of two module
// instances are two declarations, duplicateIn's).
func sameBlock(a, b *Instance, ra, rb hcl.Range, ma, mb addrs.Module) bool {
	return a != nil && b != nil && ra == rb && ma == mb
}

// spread calls decode(part, i) for i from 0 to n-1 on every core, in
// runs of at least 256, each run with a decoder of its own (part) whose
// diagnostics and secrets join d's in order; fewer than two runs' worth
// (a module instance's one service) are decoded with d itself. Which call crosses the work
// limit first depends on the order the runs went, so when the budget
// runs out the calls are made again one by one, with d, from the budget
// they started with: the error is at the first crossing in file order.
// (A budget spent before them stays spent: nothing they count is known,
// and no call reports it.) decode writes nothing another call reads.
func (d *decoder) spread(n int, decode func(part *decoder, i int)) {
	parts := make([]*decoder, min(runtime.GOMAXPROCS(0), n/256+1))
	if len(parts) == 1 { // one run: d's own, in order, on this goroutine
		ctx, each := d.ctx, d.each
		for i := range n {
			decode(d, i)
		}
		d.ctx, d.each = ctx, each
		return
	}
	values, bytes, spent := d.bg.values.Load(), d.bg.bytes.Load(), d.bg.spent.Load()
	for w := range parts {
		parts[w] = &decoder{lang: d.lang, vars: d.vars, locals: d.locals, bg: d.bg, alike: d.alike, namespaces: d.namespaces, placed: d.placed}
	}
	parallel.Do(len(parts), len(parts), func(w int) {
		for i := w * n / len(parts); i < (w+1)*n/len(parts); i++ {
			decode(parts[w], i)
		}
	})
	if spent || !d.bg.spent.Load() {
		for _, p := range parts {
			d.diags = append(d.diags, p.diags...)
			d.secrets = append(d.secrets, p.secrets...)
		}
		return
	}
	d.bg.values.Store(values)
	d.bg.bytes.Store(bytes)
	d.bg.spent.Store(false)
	ctx := d.ctx
	for i := range n {
		decode(d, i)
	}
	d.ctx, d.each = ctx, nil
}

// instance decodes one unit with its context, and names its instance in
// the diagnostics.
func (d *decoder) instance(u unit, decode func()) {
	d.ctx, d.each = u.ctx, u.each
	iter := ""
	if u.each != nil {
		iter = u.each.String()
	}
	d.within(iter, decode)
}
