package search

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision/plans"
	"github.com/provision-dev/provision/schema"
	"github.com/zclconf/go-cty/cty"
)

// Path is the document's place, as Elasticsearch's API names it:
// <index>/<type>/<id>. It is also the name in its address.
func (d *DocumentDecl) Path() string { return d.Index + "/" + d.Type + "/" + d.ID }

// Ref is one saved object a document's source names by id.
type Ref struct {
	Field string   // where: "savedSearchId", "panelsJSON[0].id"
	Types []string // the types it may be
	ID    string
	Range hcl.Range // where the spec writes it; empty for a live document
}

// JSONTextFields are the fields the dashboard tool stores as JSON text in
// a string (Kibana 4.x's saved-object classes type them "json": visState
// in _saved_vis.js, panelsJSON, optionsJSON and uiStateJSON in
// _saved_dashboard.js, fields and fieldFormatMap in _index_pattern.js,
// customFormats in 4.0's): a raw string given
// to one of them must be JSON, and is compared as JSON.
var JSONTextFields = []string{"visState", "panelsJSON", "searchSourceJSON", "fields", "customFormats", "fieldFormatMap", "uiStateJSON", "optionsJSON"}

// savedObjectMeta are the names of the object that holds searchSourceJSON:
// the seed's, and the tool's own.
var savedObjectMeta = []string{"dashboardSavedObjectMeta", "kibanaSavedObjectMeta"}

// SourceRefs finds the saved objects a document's source names: a
// search's savedSearchId, the index pattern of searchSourceJSON.index and
// of a config's defaultIndex, each panel of panelsJSON by its id and type.
// JSON text that does not parse names nothing.
func SourceRefs(source map[string]any) []Ref {
	var refs []Ref
	if id, ok := source["savedSearchId"].(string); ok && id != "" {
		refs = append(refs, Ref{Field: "savedSearchId", Types: []string{"search"}, ID: id})
	}
	if id, ok := source["defaultIndex"].(string); ok && id != "" {
		refs = append(refs, Ref{Field: "defaultIndex", Types: []string{"index-pattern"}, ID: id})
	}
	for _, meta := range savedObjectMeta {
		m, _ := source[meta].(map[string]any)
		var ss map[string]any
		if text, ok := m["searchSourceJSON"].(string); ok && json.Unmarshal([]byte(text), &ss) == nil {
			if id, ok := ss["index"].(string); ok && id != "" {
				refs = append(refs, Ref{Field: meta + ".searchSourceJSON.index", Types: []string{"index-pattern"}, ID: id})
			}
		}
	}
	var panels []map[string]any
	if text, ok := source["panelsJSON"].(string); ok && json.Unmarshal([]byte(text), &panels) == nil {
		for i, p := range panels {
			id, _ := p["id"].(string)
			typ, _ := p["type"].(string)
			if id == "" {
				continue
			}
			types := []string{"visualization", "search"}
			if slices.Contains(types, typ) {
				types = []string{typ}
			}
			refs = append(refs, Ref{Field: fmt.Sprintf("panelsJSON[%d].id", i), Types: types, ID: id})
		}
	}
	return refs
}

var documentSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "index"}, {Name: "id"}, {Name: "source", Required: true}},
	Blocks:     []hcl.BlockHeaderSchema{{Type: "lifecycle"}},
}

// MarkField is the field of a document's source where provision writes
// its ownership marks.
const MarkField = "provision"

// documentBlocks decodes the document blocks in two passes: first every
// document's id and index, which make document.<type>.<label> (with .id,
// .index and .type; a map of instances for a block with for_each); then
// every source, which may refer to them.
func documentBlocks(d decoder, blocks []schema.Block) []schema.Decl {
	indices := Indices(d.Config())
	docs := make([]*DocumentDecl, len(blocks))
	contents := make([]*hcl.BodyContent, len(blocks))
	for i, blk := range blocks {
		b := blk.Block
		doc := &DocumentDecl{Type: b.Labels[0], Label: b.Labels[1], ID: b.Labels[1], IDRange: b.LabelRanges[1],
			Declaration: schema.Declaration{DeclRange: b.DefRange, Instance: blk.Each}}
		docs[i] = doc
		d.In(blk, func() {
			if blk.Each != nil {
				doc.ID += "-" + blk.Each.Key
			}
			c := d.Content(blk.Body, documentSchema)
			contents[i] = c
			doc.Lifecycle = d.Lifecycle(documentIgnorable, c.Blocks.OfType("lifecycle"))
			if d.Override(c.Attributes["id"], &doc.ID, &doc.IDRange) && (doc.ID == "" || len(doc.ID) > 512) {
				d.Errorf(doc.IDRange, doc.DeclRange, "Invalid document id", "A document's id is 1 to 512 bytes, as Elasticsearch takes it; this one is %d.", len(doc.ID))
			}
			if attr, ok := c.Attributes["index"]; ok {
				doc.Index, doc.IndexRange = d.Str(attr), attr.Expr.Range()
				if doc.Index == "" {
					d.Errorf(doc.IndexRange, doc.DeclRange, "Invalid document index", "index names a declared index; leave it out to take the one index that maps the type %q.", doc.Type)
				}
			}
		})
		d.documentIndex(doc, indices)
		doc.Name, doc.NameRange = doc.Path(), doc.IDRange
	}
	d.Define(documentNamespace, documentValues(docs))
	// The sources, most of a document's decoding, side by side.
	d.Spread(len(blocks), func(part schema.Decoder, i int) {
		if attr, ok := contents[i].Attributes["source"]; ok {
			part.In(blocks[i], func() { decoder{part}.source(docs[i], attr, indices) })
		}
	})
	out := make([]schema.Decl, len(docs))
	for i, doc := range docs {
		out[i] = doc
	}
	return out
}

// documentValues is document.<type>.<label> for every document: an
// object of its id, index and type, or, for a block with for_each, a map
// of them by key.
func documentValues(docs []*DocumentDecl) cty.Value {
	types := map[string]map[string]cty.Value{}
	instances := map[string]map[string]map[string]cty.Value{}
	for _, doc := range docs {
		v := cty.ObjectVal(map[string]cty.Value{"id": cty.StringVal(doc.ID), "index": cty.StringVal(doc.Index), "type": cty.StringVal(doc.Type)})
		if types[doc.Type] == nil {
			types[doc.Type], instances[doc.Type] = map[string]cty.Value{}, map[string]map[string]cty.Value{}
		}
		if doc.Instance == nil {
			types[doc.Type][doc.Label] = v
			continue
		}
		if instances[doc.Type][doc.Label] == nil {
			instances[doc.Type][doc.Label] = map[string]cty.Value{}
		}
		instances[doc.Type][doc.Label][doc.Instance.Key] = v
	}
	out := map[string]cty.Value{}
	for t, labels := range types {
		for label, m := range instances[t] {
			labels[label] = cty.MapVal(m)
		}
		out[t] = cty.ObjectVal(labels)
	}
	return cty.ObjectVal(out)
}

// documentIndex finds the document's index: the one it names, or the one
// declared index that maps its type.
func (d decoder) documentIndex(doc *DocumentDecl, indices []*IndexDecl) {
	if doc.Index != "" {
		return
	}
	var mapping []string
	for _, ix := range indices {
		if slices.ContainsFunc(ix.Mappings, func(m *Mapping) bool { return m.Type == doc.Type }) {
			mapping = append(mapping, ix.Name)
		}
	}
	switch len(mapping) {
	case 1:
		doc.Index = mapping[0]
	case 0:
		d.Errorf(doc.DeclRange, doc.DeclRange, "No index maps the document's type",
			"No declared index has a mapping type %q, so there is no index to write this %s into. Declare the type in an index's mapping blocks.", doc.Type, doc.Type)
	default:
		d.Errorf(doc.DeclRange, doc.DeclRange, "Several indices map the document's type",
			"The indices %s all map the type %q; say which one with index = \"<name>\".", strings.Join(mapping, ", "), doc.Type)
	}
}

// source decodes a document's source against its type's declared
// mapping: every key a field of it (a dotted key is a nested field), every
// value one the field can hold. A string field given an object, or a list
// that holds objects or lists, stores it as compact JSON text.
func (d decoder) source(doc *DocumentDecl, attr *hcl.Attribute, indices []*IndexDecl) {
	doc.SourceRange = attr.Expr.Range()
	v, ok := d.Eval(attr.Expr)
	if !ok || v.IsNull() {
		return
	}
	if !v.Type().IsObjectType() && !v.Type().IsMapType() {
		d.Errorf(attr.Expr.Range(), attr.Range, "Invalid document source",
			"source is an object of the document's fields, as in { title = \"logs-*\" }; this expression is %s.", schema.TypeName(v))
		return
	}
	var mapping *Mapping
	for _, ix := range indices {
		if ix.Name != doc.Index {
			continue
		}
		for _, m := range ix.Mappings {
			if m.Type == doc.Type {
				mapping = m
			}
		}
	}
	if mapping == nil {
		if doc.Index != "" {
			d.Errorf(firstOf(doc.IndexRange, doc.DeclRange), doc.DeclRange, "No such mapping type",
				"The index %q declares no mapping type %q, and a document must be of a declared type: Elasticsearch 2.x would otherwise add the type and its fields to the live mapping unreviewed.", doc.Index, doc.Type)
		}
		return
	}
	fields := d.KeyRanges(attr.Expr)
	doc.Source = map[string]any{}
	values := goValue(v).(map[string]any)
	for _, key := range slices.Sorted(maps.Keys(values)) {
		at := fields[key]
		if at.Filename == "" {
			at = attr.Expr.Range()
		}
		d.sourceField(doc, mapping, key, values[key], at)
	}
	doc.Refs = SourceRefs(doc.Source)
	for i := range doc.Refs {
		doc.Refs[i].Range = rangeOf(fields, doc.Refs[i].Field, doc.SourceRange)
	}
}

// rangeOf is where the spec writes the key of source that holds a
// dotted path; or, when it is not written out, the whole source.
func rangeOf(fields map[string]hcl.Range, path string, source hcl.Range) hcl.Range {
	for key, r := range fields {
		if path == key || strings.HasPrefix(path, key+".") || strings.HasPrefix(path, key+"[") {
			return r
		}
	}
	return source
}

// sourceField puts one key of a source into the document, checked
// against the mapping.
func (d decoder) sourceField(doc *DocumentDecl, mapping *Mapping, key string, value any, at hcl.Range) {
	parts := strings.Split(key, ".")
	fields := mapping.Properties
	into := doc.Source
	for i, name := range parts {
		f := fieldNamed(fields, name)
		if f == nil {
			have := make([]string, 0, len(fields))
			for _, f := range fields {
				have = append(have, f.Name)
			}
			sort.Strings(have)
			d.Errorf(at, doc.DeclRange, "Field not in the mapping",
				"The type %q of index %q declares no field %q (it declares %s). Elasticsearch 2.x would add it to the live mapping silently, a mapping change nobody reviewed: declare the field in the mapping, or leave it out.",
				doc.Type, doc.Index, strings.Join(parts[:i+1], "."), plans.OrNone(have, "no field"))
			return
		}
		if i == len(parts)-1 {
			if v, ok := d.fieldValueOf(doc, f, strings.Join(parts, "."), value, at); ok {
				into[name] = v
			}
			return
		}
		if len(f.Properties) == 0 {
			d.Errorf(at, doc.DeclRange, "Not an object field",
				"The key %q puts a value inside %q, which is a %s field, not an object.", key, strings.Join(parts[:i+1], "."), f.Type())
			return
		}
		next, _ := into[name].(map[string]any)
		if next == nil {
			next = map[string]any{}
			into[name] = next
		}
		into, fields = next, f.Properties
	}
}

func fieldNamed(fields []*Field, name string) *Field {
	for _, f := range fields {
		if f.Name == name {
			return f
		}
	}
	return nil
}

// fieldValueOf checks that a value fits its field and returns it as it is
// written: JSON text for an object in a string field, the fields of an
// object field checked in turn.
func (d decoder) fieldValueOf(doc *DocumentDecl, f *Field, path string, value any, at hcl.Range) (any, bool) {
	bad := func(what string) (any, bool) {
		d.Errorf(at, doc.DeclRange, "Value does not fit the field",
			"The field %q of type %q is mapped as %s, and %s; Elasticsearch would refuse the document (400 mapper_parsing_exception).", path, doc.Type, f.Type(), what)
		return nil, false
	}
	if value == nil {
		return nil, true
	}
	switch t := f.Type(); t {
	case "string", "text", "keyword":
		switch v := value.(type) {
		case map[string]any:
			return d.jsonText(doc, path, v)
		case []any:
			if slices.Contains(JSONTextFields, lastName(path)) || slices.ContainsFunc(v, func(e any) bool {
				switch e.(type) {
				case map[string]any, []any:
					return true
				}
				return false
			}) {
				return d.jsonText(doc, path, v)
			}
		case string:
			if slices.Contains(JSONTextFields, lastName(path)) {
				if !json.Valid([]byte(v)) {
					d.Errorf(at, doc.DeclRange, "Invalid JSON text",
						"The field %q holds JSON text for the dashboard tool, and this string is not JSON. Write the value as an HCL object or list instead, and provision stores it as JSON.", path)
					return nil, false
				}
				doc.JSONFields = append(doc.JSONFields, path)
			}
		}
		return value, true
	case "integer", "long", "short", "byte":
		if n, ok := asNumber(value); !ok || n != float64(int64(n)) {
			return bad(fmt.Sprintf("%s is not a whole number", describe(value)))
		}
	case "float", "double", "half_float", "scaled_float":
		if _, ok := asNumber(value); !ok {
			return bad(fmt.Sprintf("%s is not a number", describe(value)))
		}
	case "boolean":
		if _, ok := value.(bool); !ok {
			return bad(fmt.Sprintf("%s is not true or false", describe(value)))
		}
	case "object", "nested":
		if len(f.Properties) == 0 {
			return value, true
		}
		m, ok := value.(map[string]any)
		if !ok {
			return bad(fmt.Sprintf("%s is not an object of its fields", describe(value)))
		}
		out := map[string]any{}
		for _, k := range slices.Sorted(maps.Keys(m)) {
			sub := fieldNamed(f.Properties, k)
			if sub == nil {
				d.Errorf(at, doc.DeclRange, "Field not in the mapping",
					"The type %q of index %q declares no field %q. Elasticsearch 2.x would add it to the live mapping silently: declare the field in the mapping, or leave it out.", doc.Type, doc.Index, path+"."+k)
				continue
			}
			if v, ok := d.fieldValueOf(doc, sub, path+"."+k, m[k], at); ok {
				out[k] = v
			}
		}
		return out, true
	}
	return value, true
}

// jsonText stores a value as the compact JSON text the dashboard tool
// reads, its keys sorted.
func (d decoder) jsonText(doc *DocumentDecl, path string, v any) (any, bool) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, false
	}
	doc.JSONFields = append(doc.JSONFields, path)
	return string(b), true
}

// firstOf is r, or else when r is empty (an attribute not written).
func firstOf(r, orElse hcl.Range) hcl.Range {
	if r.Filename == "" {
		return orElse
	}
	return r
}

func lastName(path string) string { return path[strings.LastIndex(path, ".")+1:] }

// asNumber reads a JSON-ready number, or a string that holds one, as
// Elasticsearch coerces it.
func asNumber(v any) (float64, bool) {
	switch n := v.(type) {
	case int64:
		return float64(n), true
	case float64:
		return n, true
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(n), 64)
		return f, err == nil
	}
	return 0, false
}

func describe(v any) string {
	b, _ := json.Marshal(v)
	s := string(b)
	if len(s) > 60 {
		s = s[:57] + "..."
	}
	return s
}

// checkDocuments reports documents declared twice, resolves the
// references between declared documents (an id and a type that no block
// declares is left to the plan, which looks for it live) and refuses
// cycles among them.
func checkDocuments(d decoder, objs []schema.Decl) {
	docs := schema.As[*DocumentDecl](objs)
	byPath := map[string]*DocumentDecl{}
	byID := map[string][]*DocumentDecl{} // index/id → the declared documents with that id
	for _, doc := range docs {
		if doc.Index == "" {
			continue
		}
		if prev, dup := byPath[doc.Path()]; dup {
			d.Duplicate("Duplicate document", fmt.Sprintf("document %s", doc.Path()), &doc.Declaration, &prev.Declaration)
			continue
		}
		byPath[doc.Path()] = doc
		byID[doc.Index+"/"+doc.ID] = append(byID[doc.Index+"/"+doc.ID], doc)
	}
	for _, doc := range docs {
		for _, ref := range doc.Refs {
			var found *DocumentDecl
			for _, t := range ref.Types {
				if other := byPath[doc.Index+"/"+t+"/"+ref.ID]; other != nil {
					found = other
				}
			}
			switch {
			case found != nil:
				doc.Needs = append(doc.Needs, found)
			default:
				// The tool's IDs are per type (a search and its
				// visualization often share one): an ID declared only
				// with another type is an error where the spec names that
				// document (document.<type>.<label>.id), and otherwise
				// left to the plan, which looks for it live.
				i := slices.IndexFunc(byID[doc.Index+"/"+ref.ID], func(o *DocumentDecl) bool { return d.namesType(ref.Range, o.Type) })
				if i < 0 {
					continue
				}
				other := byID[doc.Index+"/"+ref.ID][i]
				d.Errorf(ref.Range, doc.DeclRange, "Reference to a document of another type",
					"%s names %q, which is declared as a %s (at %s), but it must name a %s.", ref.Field, ref.ID, other.Type, other.DeclRange, strings.Join(ref.Types, " or a "))
			}
		}
	}
	d.documentCycles(docs)
}

// namesType says whether the spec's text at r refers to a document block
// of type typ (document.<typ>.<label>).
func (d decoder) namesType(r hcl.Range, typ string) bool {
	return bytes.Contains(d.Source(r), []byte(documentNamespace+"."+typ+"."))
}

// documentCycles refuses references that go round: such documents have
// no order to be written in.
func (d decoder) documentCycles(docs []*DocumentDecl) {
	const (
		unvisited = iota
		visiting
		done
	)
	state := map[*DocumentDecl]int{}
	var stack []*DocumentDecl
	var visit func(doc *DocumentDecl)
	visit = func(doc *DocumentDecl) {
		state[doc] = visiting
		stack = append(stack, doc)
		for _, next := range doc.Needs {
			switch state[next] {
			case unvisited:
				visit(next)
			case visiting:
				start := slices.Index(stack, next)
				var chain []string
				for _, c := range stack[start:] {
					chain = append(chain, c.Path())
				}
				chain = append(chain, next.Path())
				for _, c := range stack[start:] {
					d.Errorf(c.DeclRange, c.DeclRange, "Cycle in document references",
						"The documents name each other in a loop: %s. Each is written after the ones it names, so a loop has no order; remove one of the references.", strings.Join(chain, " → "))
				}
			}
		}
		stack = stack[:len(stack)-1]
		state[doc] = done
	}
	for _, doc := range docs {
		if state[doc] == unvisited {
			visit(doc)
		}
	}
}
