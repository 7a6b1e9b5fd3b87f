package schema

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// Import takes over a live object that was made by hand: the plan puts
// provision's ownership marks on it instead of refusing it.
type Import struct {
	Kind string // "service", "index" or "document"
	Name string // the service ID, the index name, or a document's <index>/<type>/<id>
	// Declared is false when no block declares the object; that is only
	// allowed with Inputs.GenerateConfig, which writes the declaration.
	Declared  bool
	ToRange   hcl.Range
	DeclRange hcl.Range
}

// Addr renders the address as the CLI prints it.
func (i *Import) Addr() string { return FormatAddr(i.Kind, i.Name) }

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
	Attributes: []hcl.AttributeSchema{{Name: "to", Required: true}},
}

// importBlock decodes import { to = service.ID } or
// import { to = index[".name"] }. The address is a traversal, not a
// string, as in Terraform, so that it reads like the CLI's addresses.
func (d *decoder) importBlock(b *hcl.Block) *Import {
	c := d.content(b.Body, importSchema)
	attr, ok := c.Attributes["to"]
	if !ok {
		return nil
	}
	im := &Import{ToRange: attr.Expr.Range(), DeclRange: b.DefRange}
	bad := func(detail string) *Import {
		d.errorf(attr.Expr.Range(), b.DefRange, "Invalid import address",
			"%s An import address is written as the CLI prints addresses: service.<id>, index[\"<name>\"] (index.<name> for a name without dots) or document[\"<index>/<type>/<id>\"].", detail)
		return nil
	}
	tr, diags := hcl.AbsTraversalForExpr(attr.Expr)
	if diags.HasErrors() || len(tr) != 2 {
		return bad("The value of to is not an address.")
	}
	im.Kind = tr.RootName()
	if im.Kind != "service" && im.Kind != "index" && im.Kind != "document" {
		return bad(fmt.Sprintf("%q is not a kind of object provision manages; the kinds are service, index and document.", im.Kind))
	}
	switch step := tr[1].(type) {
	case hcl.TraverseAttr:
		im.Name = step.Name
	case hcl.TraverseIndex:
		if step.Key.Type() != cty.String || step.Key.IsNull() {
			return bad("The name in brackets must be a quoted string.")
		}
		im.Name = step.Key.AsString()
	default:
		return bad("The value of to is not an address.")
	}
	if im.Name == "" {
		return bad("The name is empty.")
	}
	if parts := strings.SplitN(im.Name, "/", 3); im.Kind == "document" && (len(parts) != 3 || slices.Contains(parts, "")) {
		return bad(fmt.Sprintf("%q is not a document's <index>/<type>/<id>.", im.Name))
	}
	return im
}

// checkImports attaches each import block to the declaration it names and
// reports duplicates and addresses that name nothing declared (unless the
// declarations are to be generated).
func (d *decoder) checkImports(cfg *Config, imports []*Import, generate bool) {
	services := map[string]*Service{}
	for _, s := range cfg.Services {
		services[s.ID] = s
	}
	indices := map[string][]*Index{}
	for _, ix := range cfg.Indices {
		indices[ix.Name] = append(indices[ix.Name], ix)
	}
	documents := map[string]*Document{}
	for _, doc := range cfg.Documents {
		documents[doc.Path()] = doc
	}
	seen := map[string]*Import{}
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
		switch {
		case im.Kind == "service" && services[im.Name] != nil:
			services[im.Name].Import, im.Declared = im, true
		case im.Kind == "document" && documents[im.Name] != nil:
			documents[im.Name].Import, im.Declared = im, true
		case im.Kind == "index" && len(indices[im.Name]) > 0:
			for _, ix := range indices[im.Name] {
				ix.Import = im
			}
			im.Declared = true
		case generate && im.Kind == "index" && len(cfg.Searches) != 1:
			d.errorf(im.ToRange, im.DeclRange, "Import of an undeclared index needs one search cluster",
				"The declaration of %s is to be generated, but %d search blocks are declared, so it is not known which cluster holds the index. Declare exactly one search block, or declare the index block yourself.",
				im.Addr(), len(cfg.Searches))
		case generate && im.Kind == "service" && len(cfg.Agents) > 1:
			d.errorf(im.ToRange, im.DeclRange, "Import of an undeclared service needs one agent",
				"The declaration of %s is to be generated, but %d agent blocks are declared, so it is not known which node's agent holds the registration. Declare the service block yourself, with its agent.",
				im.Addr(), len(cfg.Agents))
		case generate && im.Kind == "document" && len(cfg.Searches) != 1:
			d.errorf(im.ToRange, im.DeclRange, "Import of an undeclared document needs one search cluster",
				"The declaration of %s is to be generated, but %d search blocks are declared, so it is not known which cluster holds the document. Declare exactly one search block, or declare the document block yourself.",
				im.Addr(), len(cfg.Searches))
		case !generate:
			what := map[string]string{"service": "service block with id", "index": "index block named", "document": "document block at"}[im.Kind]
			d.errorf(im.ToRange, im.DeclRange, "Import of an undeclared object",
				"No %s %q is declared, so there is nothing to import %s into. Declare it, or run provision plan -generate-config-out=FILE to write its declaration from the live object.",
				what, im.Name, im.Addr())
		}
	}
}
