package schema

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/provision-dev/provision/provision/addrs"
	"github.com/zclconf/go-cty/cty"
)

// Import takes over a live object that was made by hand: the plan puts
// provision's ownership marks on it instead of refusing it.
type Import struct {
	// Addr is the object the block names. Its Module is the module
	// instance the address names, which must be the one that declares the
	// object; the root when it names none (the object is then found
	// wherever it is declared). It has no In.
	addrs.Addr
	// Declared is false when no block declares the object; that is only
	// allowed with Inputs.GenerateConfig, which writes the declaration.
	Declared bool
	// ReplaceRouters (replace_routers = true) lets the import of a service
	// change the routers a proxy serves for it (a router renamed, removed
	// or added by its declared tags); without it such an import is
	// refused, since a take-over changes nothing but the marks.
	ReplaceRouters bool
	ToRange        hcl.Range
	DeclRange      hcl.Range
}

// At is where the import block names the object; nil for no import, so
// that a declaration's Import can be passed as is.
func (i *Import) At() *hcl.Range {
	if i == nil {
		return nil
	}
	return i.ToRange.Ptr()
}

var importSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "to", Required: true}, {Name: "for_each"}, {Name: "replace_routers"}},
}

// importBlocks decodes import { to = service.ID } or
// import { to = index[".name"] }, or, with for_each, one import per
// element (Terraform 1.7's): to = document[".dashboard/${each.value}"].
// The address is a traversal, not a string, as in Terraform, so that it
// reads like the CLI's addresses; only the name in brackets may be an
// expression.
func (d *decoder) importBlocks(b *hcl.Block) []*Import {
	c := d.content(b.Body, importSchema)
	attr, ok := c.Attributes["to"]
	if !ok {
		return nil
	}
	replace := false
	if r, ok := c.Attributes["replace_routers"]; ok {
		replace, _ = d.literalBool(r, "replace_routers is true or false, written as such.")
	}
	var out []*Import
	d.eachOf(b, c, func() {
		if a, ok := d.address(b, attr, "import"); ok {
			out = append(out, &Import{Addr: a, ReplaceRouters: replace, ToRange: attr.Expr.Range(), DeclRange: b.DefRange})
		}
	})
	return out
}

// eachOf calls one once for a block without for_each, and once per
// element of its for_each, with each set, for one with it.
func (d *decoder) eachOf(b *hcl.Block, c *hcl.BodyContent, one func()) {
	fe, each := c.Attributes["for_each"]
	if !each {
		one()
		return
	}
	ctx := d.ctx
	for _, e := range d.forEach(b, fe) {
		d.ctx = ctx.NewChild()
		d.ctx.Variables = map[string]cty.Value{"each": cty.ObjectVal(map[string]cty.Value{"key": cty.StringVal(e.key), "value": e.value})}
		d.each = &Instance{Key: e.key}
		d.within(d.each.String(), one)
	}
	d.ctx, d.each = ctx, nil
}

// address decodes the address an import block's to or a removed block's
// from names: a kind, a name, and the module instance before them, if any.
// The traversal is written out as text and read by the language's
// addrs.Set (Set.Parse), the one parser of addresses.
func (d *decoder) address(b *hcl.Block, attr *hcl.Attribute, block string) (addrs.Addr, bool) {
	bad := func(detail string) (addrs.Addr, bool) {
		d.errorf(attr.Expr.Range(), b.DefRange, fmt.Sprintf("Invalid %s address", block),
			"%s The address in %s is written as the CLI prints addresses: %s.", detail, block, d.lang.set.Forms())
		return addrs.Addr{}, false
	}
	var key *cty.Value
	tr, diags := hcl.AbsTraversalForExpr(attr.Expr)
	if ix, isIndex := attr.Expr.(*hclsyntax.IndexExpr); diags.HasErrors() && isIndex {
		// kind[<expression>]: the name is computed (each.value).
		tr, diags = hcl.AbsTraversalForExpr(ix.Collection)
		v, ok := d.eval(ix.Key)
		if !diags.HasErrors() && !ok {
			return addrs.Addr{}, false
		}
		key = &v
		tr = append(tr, hcl.TraverseIndex{})
	}
	if diags.HasErrors() {
		return bad(fmt.Sprintf("The value of %s is not an address.", attr.Name))
	}
	text, err := traversalText(tr, key)
	if err != nil {
		return bad(upper(err.Error()) + ".")
	}
	a, err := d.lang.set.Parse(text)
	k := kindIn(d.lang.kinds, a.Kind)
	switch {
	case err != nil:
		return bad(upper(err.Error()) + ".")
	case k.KindSchema == nil || a.In != "":
		return bad(fmt.Sprintf("The value of %s is not an address.", attr.Name))
	case a.Name == "":
		return bad("The name is empty.")
	}
	if k.BadName != nil {
		if why := k.BadName(a.Name); why != "" {
			return bad(why)
		}
	}
	return a, true
}

// checkImports attaches each import block to the declaration it names and
// reports duplicates and addresses that name nothing declared (unless the
// declarations are to be generated).
func (d *decoder) checkImports(cfg *Config, imports []*Import, generate bool) {
	seen := map[addrs.Addr]*Import{}
	// positions are, by kind, where each name is in the kind's declared
	// objects: found once, not once per import block. An import names no
	// place: of a kind whose address without its place is the default
	// place's (a key: the project's own datacenter), only those.
	positions := map[addrs.Kind]map[string][]int{}
	objects := map[addrs.Kind][]object{}
	at := func(k definedKind, name string) []int {
		if positions[k.Kind] == nil {
			byName := map[string][]int{}
			objects[k.Kind] = k.declared(cfg)
			for i, obj := range objects[k.Kind] {
				if obj.place == "" || !k.Kind.DefaultPlace() {
					byName[obj.name] = append(byName[obj.name], i)
				}
			}
			positions[k.Kind] = byName
		}
		return positions[k.Kind][name]
	}
	for _, im := range imports {
		if im == nil {
			continue
		}
		if prev, dup := seen[im.Addr]; dup {
			d.diags = append(d.diags, duplicate("Duplicate import block", fmt.Sprintf("import of %s", im.Addr), im.ToRange, prev.ToRange))
			continue
		}
		seen[im.Addr] = im
		cfg.Imports = append(cfg.Imports, im)
		k := cfg.schemaOf(im.Kind)
		if found := at(k, im.Name); len(found) > 0 {
			k.attach(cfg, im, found)
			im.Declared = true
			// An address without its module names the object wherever it
			// is declared (identities are unique), as -target's does.
			if m := objects[im.Kind][found[0]].module; im.Module != addrs.Root && m != im.Module {
				d.errorf(im.ToRange, im.DeclRange, "Import into another module",
					"The import block names %s, but %s is declared by %s. Write the address the plan shows for it.", im.Addr, addrs.Addr{Kind: im.Kind, Name: im.Name}, cmp.Or(m.String(), "the root specs"))
			}
			continue
		}
		if !generate {
			d.errorf(im.ToRange, im.DeclRange, "Import of an undeclared object",
				"No %s %q is declared, so there is nothing to import %s into. Declare it, or run provision plan -generate-config-out=FILE to write its declaration from the live object.",
				k.Noun, im.Name, im.Addr)
		} else if summary, detail := k.ungenerable(cfg); summary != "" {
			d.errorf(im.ToRange, im.DeclRange, summary, "The declaration of %s is to be generated, but %s", im.Addr, detail)
		}
	}
}

// ImportsOf are the import blocks that name objects of the kinds ks, in
// block order: what those kinds' backends take over.
func (cfg *Config) ImportsOf(ks ...addrs.Kind) []*Import {
	return slices.DeleteFunc(slices.Clone(cfg.Imports), func(im *Import) bool { return !slices.Contains(ks, im.Kind) })
}
