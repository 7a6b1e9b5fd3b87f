package schema

import (
	"cmp"
	"fmt"
	"regexp"
	"strconv"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// Import takes over a live object that was made by hand: the plan puts
// provision's ownership marks on it instead of refusing it.
type Import struct {
	Kind string // a kind of Kinds: "service", "index", "document", "key"
	Name string // the service ID, the index name, a document's <index>/<type>/<id>, a key's path
	// Module is the module instance the address names, which must be the
	// one that declares the object; empty when it names none (the object
	// is then found wherever it is declared).
	Module string
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

// Addr renders the address as the CLI prints it.
func (i *Import) Addr() string {
	if i.Module != "" {
		return i.Module + "." + FormatAddr(i.Kind, i.Name)
	}
	return FormatAddr(i.Kind, i.Name)
}

// At is where the import block names the object; nil for no import, so
// that a declaration's Import can be passed as is.
func (i *Import) At() *hcl.Range {
	if i == nil {
		return nil
	}
	return i.ToRange.Ptr()
}

var bareName = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_-]*$`)

// FormatAddr renders the address of an object as a user writes it after
// -target and in an import block: service.gated-api-1, index[".dashboard"]
// (a name that is not a plain identifier is quoted).
func FormatAddr(kind, name string) string {
	if bareName.MatchString(name) {
		return kind + "." + name
	}
	return kind + "[" + strconv.Quote(name) + "]"
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
		if kind, name, module, ok := d.address(b, attr, "import"); ok {
			out = append(out, &Import{Kind: kind, Name: name, Module: module, ReplaceRouters: replace, ToRange: attr.Expr.Range(), DeclRange: b.DefRange})
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
func (d *decoder) address(b *hcl.Block, attr *hcl.Attribute, block string) (kind, name, module string, ok bool) {
	bad := func(detail string) (string, string, string, bool) {
		d.errorf(attr.Expr.Range(), b.DefRange, fmt.Sprintf("Invalid %s address", block),
			"%s The address in %s is written as the CLI prints addresses: %s.", detail, block, AddrForms())
		return "", "", "", false
	}
	var key hcl.Expression
	tr, diags := hcl.AbsTraversalForExpr(attr.Expr)
	if ix, isIndex := attr.Expr.(*hclsyntax.IndexExpr); diags.HasErrors() && isIndex {
		// kind[<expression>]: the name is computed (each.value).
		tr, diags = hcl.AbsTraversalForExpr(ix.Collection)
		key = ix.Key
		tr = append(tr, hcl.TraverseIndex{})
	}
	if !diags.HasErrors() {
		module, tr = cutModule(tr)
	}
	if diags.HasErrors() || len(tr) != 2 {
		return bad(fmt.Sprintf("The value of %s is not an address.", attr.Name))
	}
	kind = tr.RootName()
	k, known := kindOf(kind)
	if !known {
		return bad(fmt.Sprintf("%q is not a kind of object provision manages; the kinds are %s.", kind, kindNames()))
	}
	switch step := tr[1].(type) {
	case hcl.TraverseAttr:
		name = step.Name
	case hcl.TraverseIndex:
		v := step.Key
		if key != nil {
			if v, ok = d.eval(key); !ok {
				return "", "", "", false
			}
		}
		if v.Type() != cty.String || v.IsNull() {
			return bad("The name in brackets must be a string.")
		}
		name = v.AsString()
	default:
		return bad(fmt.Sprintf("The value of %s is not an address.", attr.Name))
	}
	if name == "" {
		return bad("The name is empty.")
	}
	if why := k.badName(name); why != "" {
		return bad(why)
	}
	return kind, name, module, true
}

// cutModule cuts the module instances (module.NAME, module.NAME["KEY"],
// module.NAME[N], repeated) off the front of an address's traversal, and
// returns them as addresses write them, and the object's traversal, its
// kind the root.
func cutModule(tr hcl.Traversal) (string, hcl.Traversal) {
	module := ""
	for len(tr) > 2 && tr.RootName() == "module" {
		name, ok := tr[1].(hcl.TraverseAttr)
		if !ok {
			break
		}
		step, rest := "module."+name.Name, tr[2:]
		if ix, isIndex := rest[0].(hcl.TraverseIndex); isIndex && len(rest) > 1 {
			switch {
			case ix.Key.Type() == cty.String:
				step += "[" + strconv.Quote(ix.Key.AsString()) + "]"
			case ix.Key.Type() == cty.Number:
				step += "[" + ix.Key.AsBigFloat().Text('f', -1) + "]"
			}
			rest = rest[1:]
		}
		kind, ok := rest[0].(hcl.TraverseAttr)
		if !ok {
			break
		}
		if module != "" {
			module += "."
		}
		module += step
		tr = append(hcl.Traversal{hcl.TraverseRoot{Name: kind.Name, SrcRange: kind.SrcRange}}, rest[1:]...)
	}
	return module, tr
}

// checkImports attaches each import block to the declaration it names and
// reports duplicates and addresses that name nothing declared (unless the
// declarations are to be generated).
func (d *decoder) checkImports(cfg *Config, imports []*Import, generate bool) {
	seen := map[string]*Import{}
	modules := cfg.Modules()
	// positions are, by kind, where each name is in the kind's declared
	// objects: found once, not once per import block.
	positions := map[string]map[string][]int{}
	at := func(k Kind, name string) []int {
		if positions[k.Name] == nil {
			byName := map[string][]int{}
			for i, obj := range k.declared(cfg) {
				byName[obj.name] = append(byName[obj.name], i)
			}
			positions[k.Name] = byName
		}
		return positions[k.Name][name]
	}
	for _, im := range imports {
		if im == nil {
			continue
		}
		if prev, dup := seen[im.Addr()]; dup {
			d.diags = append(d.diags, duplicate("Duplicate import block", fmt.Sprintf("import of %s", im.Addr()), im.ToRange, prev.ToRange))
			continue
		}
		seen[im.Addr()] = im
		cfg.Imports = append(cfg.Imports, im)
		k, _ := kindOf(im.Kind)
		if found := at(k, im.Name); len(found) > 0 {
			k.attach(cfg, im, found)
			im.Declared = true
			// An address without its module names the object wherever it
			// is declared (identities are unique), as -target's does.
			if m := modules[[2]string{im.Kind, im.Name}]; im.Module != "" && m != im.Module {
				d.errorf(im.ToRange, im.DeclRange, "Import into another module",
					"The import block names %s, but %s is declared by %s. Write the address the plan shows for it.", im.Addr(), FormatAddr(im.Kind, im.Name), cmp.Or(m, "the root specs"))
			}
			continue
		}
		if !generate {
			d.errorf(im.ToRange, im.DeclRange, "Import of an undeclared object",
				"No %s %q is declared, so there is nothing to import %s into. Declare it, or run provision plan -generate-config-out=FILE to write its declaration from the live object.",
				k.block, im.Name, im.Addr())
		} else if summary, detail := k.ungenerable(cfg); summary != "" {
			d.errorf(im.ToRange, im.DeclRange, summary, "The declaration of %s is to be generated, but %s", im.Addr(), detail)
		}
	}
}
