package search

import (
	"encoding/json"
	"fmt"
	"math/big"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/provision-dev/provision/schema"
	"github.com/zclconf/go-cty/cty"
)

var indexSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "name"}, {Name: "search", Required: true}, {Name: "settings"}},
	Blocks:     []hcl.BlockHeaderSchema{{Type: "mapping", LabelNames: []string{"type"}}, {Type: "lifecycle"}},
}

var mappingSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "properties", Required: true}},
}

// FieldTypes are the field types Elasticsearch 2.x to 7.x know. string is
// 2.x's; 5.x turns it into text or keyword.
var FieldTypes = []string{
	"alias", "binary", "boolean", "byte", "completion", "constant_keyword", "date", "date_nanos",
	"date_range", "dense_vector", "double", "double_range", "flattened", "float", "float_range",
	"geo_point", "geo_shape", "half_float", "histogram", "integer", "integer_range", "ip", "ip_range",
	"join", "keyword", "long", "long_range", "murmur3", "nested", "object", "percolator", "rank_feature",
	"rank_features", "scaled_float", "search_as_you_type", "shape", "short", "string", "text",
	"token_count", "unsigned_long", "version", "wildcard",
}

func knownFieldType(t string) bool {
	i := sort.SearchStrings(FieldTypes, t)
	return i < len(FieldTypes) && FieldTypes[i] == t
}

// decoder decodes an index or a document block: the language's Decoder,
// and the blocks' own parts.
type decoder struct{ schema.Decoder }

// indexBlock decodes one instance of an index block: its name is the
// label, "<label>-<each.key>" for an instance of a block with for_each,
// or its name attribute.
func indexBlock(d decoder, blk schema.Block) *IndexDecl {
	b := blk.Block
	ix := &IndexDecl{Declaration: schema.Declaration{Name: b.Labels[0], DeclRange: b.DefRange, NameRange: b.LabelRanges[0]}}
	if blk.Each != nil {
		ix.Name += "-" + blk.Each.Key
	}
	c := d.Content(blk.Body, indexSchema)
	if d.Override(c.Attributes["name"], &ix.Name, &ix.NameRange) {
		d.checkIndexName(ix, b)
	}
	if attr, ok := c.Attributes["search"]; ok {
		ix.Search, ix.SearchRange = d.Str(attr), attr.Expr.Range()
	}
	ix.Lifecycle = d.Lifecycle(indexIgnorable, c.Blocks.OfType("lifecycle"))
	if attr, ok := c.Attributes["settings"]; ok {
		ix.SettingsRange = attr.Expr.Range()
		if v, ok := d.Value(attr, cty.DynamicPseudoType); ok {
			if m, isMap := goValue(v).(map[string]any); isMap {
				ix.Settings = map[string]string{}
				flattenSettings("index.", m, ix.Settings)
			} else {
				d.Errorf(attr.Expr.Range(), attr.Range, "Invalid settings", "settings is an object of index settings, as in { number_of_replicas = 1, refresh_interval = \"5s\" }.")
			}
		}
	}
	seen := map[string]*Mapping{}
	for _, mb := range d.Blocks(b.Body, c, "mapping") {
		d.Within(mb.Iter, func() {
			m := d.mappingBlock(mb.Block)
			if prev, dup := seen[m.Type]; dup {
				d.DuplicateBlock("Duplicate mapping type", fmt.Sprintf("mapping type %q of index %q", m.Type, ix.Name), mb.LabelRanges[0], prev.DeclRange)
				return
			}
			seen[m.Type] = m
			ix.Mappings = append(ix.Mappings, m)
		})
	}
	if len(ix.Mappings) == 0 {
		d.Errorf(b.LabelRanges[0], b.DefRange, "Index without mapping types",
			"The index %q declares no mapping block. An index declares at least one mapping type: provision marks the index as its own in the first type's _meta when it creates it.", ix.Name)
	}
	return ix
}

func (d decoder) checkIndexName(ix *IndexDecl, b *hcl.Block) {
	if err := checkIndexName(ix.Name); err != nil {
		d.Errorf(ix.NameRange, b.DefRange, "Invalid index name", "The index name %q is refused by Elasticsearch: %s.", ix.Name, err)
	}
}

// flattenSettings writes nested settings as the flat keys Elasticsearch
// reports with flat_settings=true ("index.analysis.analyzer.x.type"), each
// value as the string it reports. A key may name index. itself.
func flattenSettings(prefix string, m map[string]any, out map[string]string) {
	for k, v := range m {
		key := prefix + strings.TrimPrefix(k, "index.")
		switch t := v.(type) {
		case map[string]any:
			flattenSettings(key+".", t, out)
		case []any:
			for i, e := range t {
				out[fmt.Sprintf("%s.%d", key, i)] = fmt.Sprint(e)
			}
		default:
			out[key] = fmt.Sprint(t)
		}
	}
}

// checkIndexName applies Elasticsearch's rules for index names.
func checkIndexName(name string) error {
	switch {
	case name == "" || name == "." || name == "..":
		return fmt.Errorf("it must be a name other than \"\", \".\" and \"..\"")
	case strings.ToLower(name) != name:
		return fmt.Errorf("it must be lowercase")
	case strings.ContainsAny(name, "\\/*?\"<>| ,#:"):
		return fmt.Errorf("it must not hold any of these: \\ / * ? \" < > | space , # : (colon)")
	case strings.ContainsAny(name[:1], "-_+"):
		return fmt.Errorf("it must not start with \"-\", \"_\" or \"+\"")
	case len(name) > 255:
		return fmt.Errorf("it is %d bytes long, and the limit is 255", len(name))
	}
	return nil
}

func (d decoder) mappingBlock(b *hcl.Block) *Mapping {
	m := &Mapping{Type: b.Labels[0], DeclRange: b.DefRange}
	if m.Type == "" || strings.HasPrefix(m.Type, "_") || strings.ContainsAny(m.Type, "#,") {
		d.Errorf(b.LabelRanges[0], b.DefRange, "Invalid mapping type name",
			"The mapping type %q is refused by Elasticsearch: a type name is not empty, does not start with \"_\" and holds no \"#\" or \",\".", m.Type)
	}
	c := d.Content(b.Body, mappingSchema)
	if attr, ok := c.Attributes["properties"]; ok {
		m.Properties = d.properties(attr.Expr)
	}
	return m
}

// properties decodes an object of fields, in declared order. A value is a
// type name or an object passed through as the field's mapping; a dotted
// key ("a.b") declares field b inside object field a. An object written
// out keeps each field's own range; one computed (local.fields, merge(...),
// a dynamic block's iterator) is decoded from its value, in key order,
// every field at the expression.
func (d decoder) properties(expr hcl.Expression) []*Field {
	items, ok := d.propertyItems(expr)
	if !ok {
		return nil
	}
	return d.fields(items)
}

// property is one key of a properties object: written out (expr is the
// value's expression) or computed (val is the value).
type property struct {
	key           string
	keyRange, rng hcl.Range
	expr          hcl.Expression
	val           cty.Value
}

func (d decoder) propertyItems(expr hcl.Expression) ([]property, bool) {
	if _, literal := expr.(*hclsyntax.ObjectConsExpr); literal {
		pairs, _ := hcl.ExprMap(expr)
		items := make([]property, 0, len(pairs))
		for _, kv := range pairs {
			key, ok := d.exprString(kv.Key)
			if !ok {
				continue
			}
			items = append(items, property{key: key, keyRange: kv.Key.Range(), rng: hcl.RangeBetween(kv.Key.Range(), kv.Value.Range()), expr: kv.Value})
		}
		return items, true
	}
	v, ok := d.Eval(expr)
	if !ok {
		return nil, false
	}
	items, ok := valueItems(v, expr.Range())
	if !ok {
		d.Errorf(expr.Range(), expr.Range(), "Invalid properties",
			"properties is an object that maps each field name to a type name, as in { title = \"string\" }, or to a field mapping object; this expression is %s.", schema.TypeName(v))
	}
	return items, ok
}

// valueItems are the properties of a computed object, in key order.
func valueItems(v cty.Value, rng hcl.Range) ([]property, bool) {
	if v.IsNull() || !(v.Type().IsObjectType() || v.Type().IsMapType()) {
		return nil, false
	}
	var items []property
	for it := v.ElementIterator(); it.Next(); {
		k, e := it.Element()
		items = append(items, property{key: k.AsString(), keyRange: rng, rng: rng, val: e})
	}
	return items, true
}

// fields turns properties into fields, nesting the dotted keys.
func (d decoder) fields(items []property) []*Field {
	var fields []*Field
	byName := map[string]*Field{}
	for _, it := range items {
		key, rng := it.key, it.rng
		var f *Field
		if it.expr != nil {
			f = d.field(it.expr, rng)
		} else {
			f = d.fieldValue(it.val, rng)
		}
		if f == nil {
			continue
		}
		parts := strings.Split(key, ".")
		for _, p := range parts {
			if p == "" {
				d.Errorf(it.keyRange, rng, "Invalid field name", "The field name %q has an empty part.", key)
				f = nil
				break
			}
		}
		if f == nil {
			continue
		}
		f.Name = parts[len(parts)-1]
		d.checkFieldParams(key, f.Params, it.keyRange, rng)
		level, index := &fields, byName
		for _, p := range parts[:len(parts)-1] {
			parent := index[p]
			if parent == nil {
				parent = &Field{Name: p, Params: map[string]any{}, Range: it.keyRange}
				*level = append(*level, parent)
				index[p] = parent
			} else if t := parent.Type(); t != "object" && t != "nested" {
				d.Errorf(it.keyRange, rng, "Field is not an object",
					"The key %q puts a field inside %q, which is declared at %s with type %q; only object and nested fields hold properties.", key, p, parent.Range, t)
				f = nil
				break
			}
			level, index = &parent.Properties, childIndex(parent)
		}
		if f == nil {
			continue
		}
		if prev, dup := index[f.Name]; dup {
			d.DuplicateBlock("Duplicate field", fmt.Sprintf("field %q", key), it.keyRange, prev.Range)
			continue
		}
		*level = append(*level, f)
		index[f.Name] = f
	}
	return fields
}

// fieldValue decodes a computed property's value: a type name, or a
// field mapping object whose properties are computed too.
func (d decoder) fieldValue(v cty.Value, rng hcl.Range) *Field {
	f := &Field{Params: map[string]any{}, Range: rng}
	switch {
	case !v.IsNull() && v.Type() == cty.String:
		f.Params["type"] = v.AsString()
	case !v.IsNull() && (v.Type().IsObjectType() || v.Type().IsMapType()):
		for it := v.ElementIterator(); it.Next(); {
			k, e := it.Element()
			if k.AsString() != "properties" {
				f.Params[k.AsString()] = goValue(e)
				continue
			}
			items, ok := valueItems(e, rng)
			if !ok {
				d.Errorf(rng, rng, "Invalid properties", "The properties of a field mapping are an object of fields; got %s.", schema.TypeName(e))
				return nil
			}
			f.Properties = d.fields(items)
		}
	default:
		d.Errorf(rng, rng, "Invalid field", "A field is a type name, as \"string\", or a field mapping object; got %s.", schema.TypeName(v))
		return nil
	}
	return d.checkFieldType(f, rng, rng)
}

// childIndex indexes a field's properties by name.
func childIndex(f *Field) map[string]*Field {
	m := make(map[string]*Field, len(f.Properties))
	for _, c := range f.Properties {
		m[c.Name] = c
	}
	return m
}

// field decodes the value of one property: a type name or a mapping object.
func (d decoder) field(expr hcl.Expression, rng hcl.Range) *Field {
	if _, literal := expr.(*hclsyntax.ObjectConsExpr); !literal {
		v, ok := d.Eval(expr)
		if !ok {
			return nil
		}
		if v.Type() == cty.String && !v.IsNull() {
			return d.checkFieldType(&Field{Params: map[string]any{"type": v.AsString()}, Range: rng}, expr.Range(), rng)
		}
		return d.fieldValue(v, rng)
	}
	f := &Field{Params: map[string]any{}, Range: rng}
	pairs, _ := hcl.ExprMap(expr)
	for _, kv := range pairs {
		key, ok := d.exprString(kv.Key)
		if !ok {
			return nil
		}
		if key == "properties" {
			f.Properties = d.properties(kv.Value)
			continue
		}
		v, ok := d.Eval(kv.Value)
		if !ok {
			return nil
		}
		f.Params[key] = goValue(v)
	}
	return d.checkFieldType(f, expr.Range(), rng)
}

// checkFieldType refuses a field whose type is not Elasticsearch's, and a
// mapping object with neither a type nor properties.
func (d decoder) checkFieldType(f *Field, subject, context hcl.Range) *Field {
	if t, has := f.Params["type"]; has {
		if s, isString := t.(string); !isString || !knownFieldType(s) {
			d.unknownType(fmt.Sprint(t), subject, context)
			return nil
		}
	} else if len(f.Properties) == 0 {
		d.Errorf(subject, context, "Field mapping without type", "A field mapping object needs a type, or properties for an object field.")
		return nil
	}
	return f
}

func (d decoder) unknownType(t string, subject, context hcl.Range) {
	d.Errorf(subject, context, "Unknown field type",
		"%q is not an Elasticsearch field type. Use one of: %s.", t, strings.Join(FieldTypes, ", "))
}

// exprString evaluates expr as a string, recording a diagnostic if it is not.
func (d decoder) exprString(expr hcl.Expression) (string, bool) {
	v, ok := d.Eval(expr)
	if !ok {
		return "", false
	}
	if v.IsNull() || v.Type() != cty.String {
		d.Errorf(expr.Range(), expr.Range(), "Invalid value", "A string is required here.")
		return "", false
	}
	return v.AsString(), true
}

// goValue turns a known cty value into the Go value encoding/json writes.
func goValue(v cty.Value) any {
	if v.IsNull() {
		return nil
	}
	ty := v.Type()
	switch {
	case ty == cty.String:
		return v.AsString()
	case ty == cty.Bool:
		return v.True()
	case ty == cty.Number:
		bf := v.AsBigFloat()
		if i, acc := bf.Int64(); acc == big.Exact {
			return i
		}
		f, _ := bf.Float64()
		return f
	case ty.IsListType() || ty.IsTupleType() || ty.IsSetType():
		out := []any{}
		for _, e := range v.AsValueSlice() {
			out = append(out, goValue(e))
		}
		return out
	default: // object or map
		out := map[string]any{}
		for k, e := range v.AsValueMap() {
			out[k] = goValue(e)
		}
		return out
	}
}

// checkIndices resolves each index's search cluster and reports
// duplicates across files.
func checkIndices(d decoder, cfg *schema.Config, objs []schema.Decl) {
	searches := map[string]*Search{}
	for _, s := range Searches(cfg) {
		if _, dup := searches[s.Name]; !dup {
			searches[s.Name] = s
		}
	}
	type key struct{ search, index string }
	indices := map[key]*IndexDecl{}
	for _, ix := range schema.As[*IndexDecl](objs) {
		if ix.Search != "" && searches[ix.Search] == nil {
			d.Errorf(ix.SearchRange, ix.DeclRange, "Reference to undeclared search cluster",
				"The index %q names the search cluster %q, but there is no search %q {} block (%s).", ix.Name, ix.Search, ix.Search, schema.DeclaredNames(searches))
		}
		d.checkSharedFields(ix)
		k := key{ix.Search, ix.Name}
		if prev, dup := indices[k]; dup {
			if schema.SameBlock(&ix.Declaration, &prev.Declaration) {
				d.Errorf(ix.NameRange, ix.DeclRange, "Duplicate instance index name",
					"The instances %s and %s of this index block both name the index %q. Each instance needs a name of its own: leave name out (it defaults to \"<label>-<each.key>\") or build it from each.key.",
					prev.Instance, ix.Instance, ix.Name)
				continue
			}
			d.Duplicate("Duplicate index", fmt.Sprintf("index %q on search %q", ix.Name, ix.Search), &ix.Declaration, &prev.Declaration)
			continue
		}
		indices[k] = ix
	}
}

// checkSharedFields refuses a field path that two declared types of one
// index map differently: on servers with several types per index (2.x,
// 5.x) the types share a field's mapping, and the server refuses the
// second type after the index and the first type are made; on later
// servers an index has one type anyway.
func (d decoder) checkSharedFields(ix *IndexDecl) {
	type first struct {
		typ   string
		field *Field
	}
	seen := map[string]first{}
	for _, m := range ix.Mappings {
		walkFields("", m.Properties, func(path string, f *Field) {
			prev, ok := seen[path]
			if !ok {
				seen[path] = first{m.Type, f}
				return
			}
			if prev.typ == m.Type || paramsJSON(prev.field) == paramsJSON(f) {
				return
			}
			d.Errorf(f.Range, m.DeclRange, "Field mapped differently in two types",
				"The field %q is %s in type %q and %s in type %q (at %s) of index %q. The types of one index share a field's mapping (Elasticsearch 2.x and 5.x refuse the second type; later versions allow one type), so declare the field the same way in both, or give it another name.",
				path, paramsJSON(f), m.Type, paramsJSON(prev.field), prev.typ, prev.field.Range, ix.Name)
		})
	}
}

// walkFields calls f for every field, nested ones by dotted path.
func walkFields(prefix string, fields []*Field, f func(path string, field *Field)) {
	for _, fl := range fields {
		f(prefix+fl.Name, fl)
		walkFields(prefix+fl.Name+".", fl.Properties, f)
	}
}

// paramsJSON is a field's mapping but its nested properties, as JSON with
// sorted keys.
func paramsJSON(f *Field) string {
	b, _ := json.Marshal(f.Params)
	return string(b)
}
