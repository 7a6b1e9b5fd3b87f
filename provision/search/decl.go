package search

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision/addrs"
	"github.com/provision-dev/provision/schema"
	"github.com/zclconf/go-cty/cty"
)

// Index and Document are the kinds of a search cluster's objects: an
// index (index "<name>" { ... }, index["<name>"]) and a document in one
// (document "<type>" "<label>" { ... }, document["<index>/<type>/<id>"]),
// after search.<name>. where several clusters are declared. This package
// decodes their blocks (IndexDecl, DocumentDecl): the indices before the
// module calls and the other kinds, the documents all at once, their
// sources naming one another (document.<type>.<label>). IndexBlock and
// DocumentBlock are the blocks a binary's language names.
var (
	Index, IndexBlock = schema.NewKind(addrs.KindSpec{Name: "index", Place: "search", Form: `index["<name>"] (index.<name> for a name without dots)`, Order: 20}, &schema.KindSchema{
		Noun:   "index block named",
		Labels: []string{"name"},
		Decode: func(d schema.Decoder, b schema.Block) schema.Decl { return indexBlock(decoder{d}, b) },
		Check:  func(d schema.Decoder, objs []schema.Decl) { checkIndices(decoder{d}, d.Config(), objs) },
		Places: func(_ *schema.Config, objs []schema.Decl) []string {
			out := make([]string, len(objs))
			for i, o := range objs {
				out[i] = o.(*IndexDecl).Search
			}
			return out
		},
		Ungenerable: oneSearch("index"),
		Nested:      []*hcl.BodySchema{indexSchema},
		Early:       true,
	})
	Document, DocumentBlock = schema.NewKind(addrs.KindSpec{Name: "document", Place: "search", Form: `document["<index>/<type>/<id>"]`, Order: 30}, &schema.KindSchema{
		Noun:   "document block at",
		Labels: []string{"type", "name"},
		BadName: func(name string) string {
			if parts := strings.SplitN(name, "/", 3); len(parts) != 3 || slices.Contains(parts, "") {
				return fmt.Sprintf("%q is not a document's <index>/<type>/<id>.", name)
			}
			return ""
		},
		DecodeAll: func(d schema.Decoder, blocks []schema.Block) []schema.Decl { return documentBlocks(decoder{d}, blocks) },
		Check:     func(d schema.Decoder, objs []schema.Decl) { checkDocuments(decoder{d}, objs) },
		Places:    documentPlaces,
		Pulled: func(_ schema.Decl, live, declared map[string]any) []schema.PullAttr {
			return []schema.PullAttr{{Name: "source", Live: live, Decl: declared, Dotted: true}}
		},
		Ungenerable: oneSearch("document"),
		Namespace:   documentNamespace,
		CheckRef:    checkDocumentRef,
	})
)

// Indices are the index blocks cfg declares, in block order.
func Indices(cfg *schema.Config) []*IndexDecl { return schema.Decls[*IndexDecl](cfg, Index) }

// Documents are the document blocks cfg declares, in block order.
func Documents(cfg *schema.Config) []*DocumentDecl {
	return schema.Decls[*DocumentDecl](cfg, Document)
}

// IndexDecl is an index with its mapping types, created on a Search
// cluster, as an index block declares it: its Declaration's Name is the
// index's name.
type IndexDecl struct {
	schema.Declaration
	Search      string
	SearchRange hcl.Range
	Mappings    []*Mapping
	// Settings are the declared index settings as flat keys
	// ("index.number_of_replicas") with the string values the server
	// reports; nil when the block has no settings.
	Settings      map[string]string
	SettingsRange hcl.Range
}

// Mapping is one mapping type of an index.
type Mapping struct {
	Type       string
	Properties []*Field // in declared order
	DeclRange  hcl.Range
}

// Field is one property of a mapping. Params holds the field's mapping
// other than its properties (always "type" for a leaf), as JSON-ready values.
type Field struct {
	Name       string
	Params     map[string]any
	Properties []*Field // nested fields of an object field
	Range      hcl.Range
}

// Type is the field's mapping type; "object" for a field that only holds
// nested properties.
func (f *Field) Type() string {
	if t, ok := f.Params["type"].(string); ok {
		return t
	}
	return "object"
}

// DocumentDecl is a saved object of the dashboard tool (an index pattern, a
// search, a visualization, a dashboard, a config): a document of a mapping
// type of a declared index, written on the member cluster where the tool,
// behind its read-only tribe node, cannot write.
//
// Its Declaration's Name is its Path, and its NameRange where its id is
// written.
type DocumentDecl struct {
	schema.Declaration
	Type  string // the mapping type, the block's first label
	Label string // the block's second label
	ID    string // the document's _id: the label, "<label>-<each.key>", or id
	Index string
	// Source is the document as written, JSON-ready: a string field given
	// an object or a list of objects holds it as compact JSON text.
	Source map[string]any
	// JSONFields are the dotted paths of the string fields of Source that
	// hold JSON text; they are compared as JSON, not as text.
	JSONFields []string
	// Refs are the saved objects Source names; Needs, those of them
	// declared in the specs, which are written first.
	Refs  []Ref
	Needs []*DocumentDecl

	IDRange, IndexRange, SourceRange hcl.Range
}

// indexIgnorable and documentIgnorable are the indices' and the
// documents' ignorable attributes.
var (
	indexIgnorable    = schema.Ignorable{Noun: "index", Roots: map[string]int{"settings": 1}}
	documentIgnorable = schema.Ignorable{Noun: "document", Roots: map[string]int{"source": -1}, Marked: "source", MarkField: MarkField}
)

// oneSearch: the declaration of an undeclared object of a search cluster
// is generated only when one search block is declared.
func oneSearch(noun string) func(cfg *schema.Config) (string, string) {
	return func(cfg *schema.Config) (string, string) {
		if len(Searches(cfg)) != 1 {
			return "Import of an undeclared " + noun + " needs one search cluster",
				fmt.Sprintf("%d search blocks are declared, so it is not known which cluster holds the %s. Declare exactly one search block, or declare the %s block yourself.", len(Searches(cfg)), noun, noun)
		}
		return "", ""
	}
}

// documentPlaces are the search clusters of the documents' indices.
func documentPlaces(cfg *schema.Config, objs []schema.Decl) []string {
	search := map[string]string{}
	for _, ix := range Indices(cfg) {
		search[ix.Name] = ix.Search
	}
	out := make([]string, len(objs))
	for i, o := range objs {
		out[i] = search[o.(*DocumentDecl).Index]
	}
	return out
}

// documentNamespace is how an expression names a declared document:
// document.<type>.<label>, with its id, index and type.
const documentNamespace = "document"

// checkDocumentRef says what is wrong with tr, a reference to a declared
// document, where the documents are ns (cty.NilVal outside a document's
// source).
func checkDocumentRef(tr hcl.Traversal, ns cty.Value) (summary, detail string) {
	if ns == cty.NilVal {
		return "Reference to a document outside a source",
			"document.<type>.<label>.id names a declared document in another document's source; it cannot be used here."
	}
	step := func(i int) string {
		if len(tr) > i {
			if a, isAttr := tr[i].(hcl.TraverseAttr); isAttr {
				return a.Name
			}
		}
		return ""
	}
	typ, label := step(1), step(2)
	if typ == "" || label == "" {
		return "Invalid document reference", "A document is referred to as document.<type>.<label>, as in document.index-pattern.logs.id."
	}
	if !ns.Type().HasAttribute(typ) || !ns.GetAttr(typ).Type().HasAttribute(label) {
		return "Reference to undeclared document",
			fmt.Sprintf("No document %q %q {} block is declared, so document.%s.%s names nothing.", typ, label, typ, label)
	}
	return "", ""
}
