package schema

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision/addrs"
	"github.com/zclconf/go-cty/cty"
)

// Lifecycle is what a lifecycle block of a service, key, index or
// document says, as Terraform's: prevent_destroy and ignore_changes. The
// zero Lifecycle is a block without one.
type Lifecycle struct {
	// PreventDestroy is written on the live object with its ownership
	// marks, so that it holds after the block is gone: no plan deletes
	// the object until a plan with prevent_destroy = false is applied, or
	// a removed block lets it go. nil when the block does not say: the
	// live object's protection is kept as it is.
	PreventDestroy *bool
	// Ignore are the attribute paths whose live values a plan keeps:
	// left out of the diff, carried over by the writes. IgnoreAll
	// ignores every attribute (ignore_changes = all).
	Ignore    []Path
	IgnoreAll bool
	DeclRange hcl.Range
}

// Path is an attribute path of ignore_changes, as written: meta,
// meta["owner"], source.panelsJSON.
type Path struct {
	Steps []string
	// Text is the path as written (meta["owner"], not meta.owner).
	Text  string
	Range hcl.Range
}

func (p Path) String() string { return p.Text }

// Protects says whether the object is to be protected, given whether the
// live one is: as the block says, else as it is.
func (l Lifecycle) Protects(live bool) bool {
	if l.PreventDestroy != nil {
		return *l.PreventDestroy
	}
	return live
}

// Ignores says whether the attribute path steps is ignored: all is, and
// so is every path under an ignored one.
func (l Lifecycle) Ignores(steps ...string) bool {
	if l.IgnoreAll {
		return true
	}
	return slices.ContainsFunc(l.Ignore, func(p Path) bool {
		return len(p.Steps) <= len(steps) && slices.Equal(p.Steps, steps[:len(p.Steps)])
	})
}

// IgnoredPaths are the ignored paths as a plan shows them: ["all"], or
// each path as written.
func (l Lifecycle) IgnoredPaths() []string {
	if l.IgnoreAll {
		return []string{"all"}
	}
	var out []string
	for _, p := range l.Ignore {
		out = append(out, p.String())
	}
	return out
}

// Ignorable are the attributes of a kind's block that ignore_changes may
// name (Roots), and how deep a path under each may go (-1: any depth);
// Marked is the attribute whose field MarkField holds the ownership
// marks (a document's source.provision), which no path may name; Noun
// names the block for a person.
type Ignorable struct {
	Noun              string
	Roots             map[string]int
	Marked, MarkField string
}

var lifecycleSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "prevent_destroy"}, {Name: "ignore_changes"}}}

// lifecycleBlock decodes the one lifecycle block of a block whose kind's
// ignorable attributes are ig; its
// values may not refer to anything (they are read before any object is
// planned, as Terraform's).
func (d *decoder) lifecycleBlock(ig Ignorable, blocks hcl.Blocks) Lifecycle {
	var l Lifecycle
	c := d.onlyBlock(blocks, lifecycleSchema)
	if c == nil {
		return l
	}
	l.DeclRange = blocks[0].DefRange
	if attr, ok := c.Attributes["prevent_destroy"]; ok {
		if v, ok := d.literalBool(attr, "prevent_destroy is true or false, written as such: it is read before any variable."); ok {
			l.PreventDestroy = &v
		}
	}
	if attr, ok := c.Attributes["ignore_changes"]; ok {
		d.ignoreChanges(ig, attr, &l)
	}
	return l
}

// onlyBlock is the content of the first of blocks (of one type, which a
// block holds once), nil for none; another is a duplicate.
func (d *decoder) onlyBlock(blocks hcl.Blocks, schema *hcl.BodySchema) *hcl.BodyContent {
	if len(blocks) == 0 {
		return nil
	}
	for _, b := range blocks[1:] {
		d.diags = append(d.diags, duplicate(fmt.Sprintf("Duplicate %s block", b.Type), b.Type+" block", b.DefRange, blocks[0].DefRange))
	}
	return d.content(blocks[0].Body, schema)
}

// literalBool is attr's value, true or false written as such (it is read
// before anything may be referred to); an error with detail otherwise.
func (d *decoder) literalBool(attr *hcl.Attribute, detail string) (bool, bool) {
	v, diags := attr.Expr.Value(nil)
	if diags.HasErrors() || v.Type() != cty.Bool || v.IsNull() {
		d.errorf(attr.Expr.Range(), attr.Range, "Invalid "+attr.Name, "%s", detail)
		return false, false
	}
	return v.True(), true
}

// ignoreChanges decodes ignore_changes = all or a list of paths under the
// ignorable attributes of its block's kind.
func (d *decoder) ignoreChanges(ig Ignorable, attr *hcl.Attribute, l *Lifecycle) {
	roots := ig.Roots
	names := slices.Sorted(func(yield func(string) bool) {
		for k := range roots {
			if !yield(k) {
				return
			}
		}
	})
	bad := func(at hcl.Range, why string) {
		d.errorf(at, attr.Range, "Invalid ignore_changes",
			"%s ignore_changes is all, or a list of attribute paths of the %s: %s (the ownership marks can never be ignored).", why, ig.Noun, strings.Join(names, ", "))
	}
	if tr, diags := hcl.AbsTraversalForExpr(attr.Expr); !diags.HasErrors() && len(tr) == 1 && tr.RootName() == "all" {
		l.IgnoreAll = true
		return
	}
	exprs, diags := hcl.ExprList(attr.Expr)
	if diags.HasErrors() {
		bad(attr.Expr.Range(), "The value is not a list.")
		return
	}
paths:
	for _, e := range exprs {
		tr, diags := hcl.AbsTraversalForExpr(e)
		if diags.HasErrors() {
			bad(e.Range(), "An element is not an attribute path.")
			continue
		}
		p := Path{Steps: []string{tr.RootName()}, Text: tr.RootName(), Range: e.Range()}
		for _, step := range tr[1:] {
			switch s := step.(type) {
			case hcl.TraverseAttr:
				p.Steps = append(p.Steps, s.Name)
				p.Text += "." + s.Name
			case hcl.TraverseIndex:
				if s.Key.Type() != cty.String {
					bad(e.Range(), fmt.Sprintf("The path %s has an index that is not a string.", p))
					continue paths
				}
				p.Steps = append(p.Steps, s.Key.AsString())
				p.Text += "[" + strconv.Quote(s.Key.AsString()) + "]"
			}
		}
		depth, ok := roots[p.Steps[0]]
		switch {
		case !ok:
			bad(e.Range(), fmt.Sprintf("%q is not an attribute ignore_changes can name.", p.Steps[0]))
		case depth >= 0 && len(p.Steps)-1 > depth:
			bad(e.Range(), fmt.Sprintf("The path %s goes deeper than %s can.", p, p.Steps[0]))
		case p.Steps[0] == ig.Marked && len(p.Steps) > 1 && p.Steps[1] == ig.MarkField:
			bad(e.Range(), fmt.Sprintf("%s.%s holds the ownership marks.", ig.Marked, ig.MarkField))
		default:
			l.Ignore = append(l.Ignore, p)
		}
	}
}

// Removed is a removed block, as Terraform 1.7's: an object the project
// owns that no block declares any more, let go of (Destroy false: its
// marks are taken off and it is left live, as if made by hand) or
// deleted (Destroy true, the default), which a protection refuses.
type Removed struct {
	// Addr is the object the block names, by its kind and name alone.
	addrs.Addr
	// Destroy is the lifecycle block's destroy: true unless it says false.
	Destroy   bool
	FromRange hcl.Range
	DeclRange hcl.Range
}

var removedSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "from", Required: true}, {Name: "for_each"}},
	Blocks:     []hcl.BlockHeaderSchema{{Type: "lifecycle"}},
}

var removedLifecycleSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "destroy", Required: true}}}

// removedBlocks decodes removed { from = <address>  lifecycle { destroy =
// false } }, one per element with for_each.
func (d *decoder) removedBlocks(b *hcl.Block) []*Removed {
	c := d.content(b.Body, removedSchema)
	attr, ok := c.Attributes["from"]
	if !ok {
		return nil
	}
	destroy := true
	if lc := d.onlyBlock(c.Blocks.OfType("lifecycle"), removedLifecycleSchema); lc != nil {
		if a, ok := lc.Attributes["destroy"]; ok {
			if v, ok := d.literalBool(a, "destroy is true (the object is deleted) or false (it is left live without provision's marks), written as such."); ok {
				destroy = v
			}
		}
	}
	var out []*Removed
	d.eachOf(b, c, func() {
		if a, ok := d.address(b, attr, "removed"); ok { // an object no block declares is addressed by its kind and name
			out = append(out, &Removed{Addr: addrs.Addr{Kind: a.Kind, Name: a.Name}, Destroy: destroy, FromRange: attr.Expr.Range(), DeclRange: b.DefRange})
		}
	})
	return out
}

// checkRemoved reports removed blocks that name an object still declared,
// and two that name one object.
func (d *decoder) checkRemoved(cfg *Config, removed []*Removed) {
	seen := map[addrs.Addr]*Removed{}
	for _, r := range removed {
		if prev, dup := seen[r.Addr]; dup {
			d.diags = append(d.diags, duplicate("Duplicate removed block", fmt.Sprintf("removed block of %s", r.Addr), r.FromRange, prev.FromRange))
			continue
		}
		seen[r.Addr] = r
		k := cfg.schemaOf(r.Kind)
		if slices.ContainsFunc(k.declared(cfg), func(o object) bool { return o.name == r.Name }) {
			d.errorf(r.FromRange, r.DeclRange, "Removed object still declared",
				"%s is named by this removed block and declared by a %s %q. A removed block is for an object no block declares any more: remove its declaration, or this block.", r.Addr, k.Noun, r.Name)
			continue
		}
		cfg.Removed = append(cfg.Removed, r)
	}
}

// RemovedOfKinds are the removed blocks that name objects of the kinds
// ks, in block order: what those kinds' backends forget or delete.
func (cfg *Config) RemovedOfKinds(ks ...addrs.Kind) []*Removed {
	return slices.DeleteFunc(slices.Clone(cfg.Removed), func(r *Removed) bool { return !slices.Contains(ks, r.Kind) })
}

// RemovedOf is the removed block that names the object of kind and name;
// nil when none does.
func (cfg *Config) RemovedOf(kind addrs.Kind, name string) *Removed {
	return RemovedOf(cfg.Removed, kind, name)
}

// RemovedOf is the block of removed that names the object of kind and
// name; nil when none does.
func RemovedOf(removed []*Removed, kind addrs.Kind, name string) *Removed {
	i := slices.IndexFunc(removed, func(r *Removed) bool { return r.Kind == kind && r.Name == name })
	if i < 0 {
		return nil
	}
	return removed[i]
}
