package search

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/provision-dev/provision/provision/adapter"
	"github.com/provision-dev/provision/schema"
	"github.com/zclconf/go-cty/cty"
	ctyjson "github.com/zclconf/go-cty/cty/json"
)

// Generate writes an index block for every import of an index that no
// block declares, from the live index: every mapping type (in name order)
// with every field as the server reports it. It reads what a plan reads.
func (b *Backend) Generate(ctx context.Context) ([]*hclwrite.Block, hcl.Diagnostics) {
	if len(b.generate) == 0 {
		return nil, nil
	}
	f, err := b.read(ctx)
	if err != nil {
		return nil, hcl.Diagnostics{b.unreadable(err)}
	}
	if diags := b.checkCluster(f); diags.HasErrors() {
		return nil, diags
	}
	var blocks []*hclwrite.Block
	var diags hcl.Diagnostics
	imports := slices.Clone(b.generate)
	slices.SortStableFunc(imports, func(x, y *schema.Import) int {
		if x.Kind != Document || y.Kind != Document {
			return 0
		}
		rx, ry := splitDocPath(x.Name), splitDocPath(y.Name)
		return strings.Compare(rx.Type+"\x00"+rx.ID, ry.Type+"\x00"+ry.ID)
	})
	labels := documentLabels(imports)
	for _, im := range imports {
		if im.Kind == Document {
			blk, refusal := b.documentBlock(f, im, labels)
			if refusal != nil {
				diags = append(diags, refusal)
			} else {
				blocks = append(blocks, blk)
			}
			continue
		}
		live, lv := b.liveOf(f, im.Name)
		addr := b.addr(im.Name)
		if _, _, refusal := adapter.Decide(b.project, adapter.Declared{Addr: addr, Import: im.At()}, lv); refusal != nil {
			diags = append(diags, refusal)
			continue
		}
		blk := hclwrite.NewBlock(Index.Name(), []string{im.Name})
		body := blk.Body()
		body.SetAttributeValue("search", cty.StringVal(b.search.Name))
		for _, t := range slices.Sorted(maps.Keys(live.Mappings)) {
			body.AppendNewline()
			mb := body.AppendNewBlock("mapping", []string{t}).Body()
			mb.SetAttributeValue("properties", cty.ObjectVal(declaration("", live.Mappings[t].Properties)))
		}
		blocks = append(blocks, blk)
	}
	return blocks, diags
}

// declaration turns live fields into the values of a properties object: a
// field with only a type is its type name, an object with only properties
// becomes dotted keys ("a.b"), anything else the field mapping as read.
func declaration(prefix string, fields map[string]liveField) map[string]cty.Value {
	out := map[string]cty.Value{}
	for name, f := range fields {
		switch {
		case name == "" || (f.Type == "" && f.Properties == nil):
			// Not a field a declaration can hold (the server never
			// reports one).
		case len(f.raw) == 1 && f.Type != "":
			out[prefix+name] = cty.StringVal(f.Type)
		case len(f.raw) == 1 && f.Properties != nil:
			maps.Copy(out, declaration(prefix+name+".", f.Properties))
		default:
			raw, _ := json.Marshal(f.raw)
			ty, err := ctyjson.ImpliedType(raw)
			if err == nil {
				var v cty.Value
				if v, err = ctyjson.Unmarshal(raw, ty); err == nil {
					out[prefix+name] = v
				}
			}
		}
	}
	return out
}

// documentLabels are the block labels of the generated documents, by
// <index>/<type>/<id>: the id made a label (labelFor), numbered when two
// of one type would share one.
func documentLabels(imports []*schema.Import) map[string]string {
	out := map[string]string{}
	taken := map[string]bool{}
	for _, im := range imports {
		if im.Kind != Document {
			continue
		}
		ref := splitDocPath(im.Name)
		label := labelFor(ref.ID)
		for n := 2; taken[ref.Type+"."+label]; n++ {
			label = labelFor(ref.ID) + "_" + strconv.Itoa(n)
		}
		taken[ref.Type+"."+label] = true
		out[im.Name] = label
	}
	return out
}

// documentBlock writes the document block of a live document that an
// import block names: its source with the JSON text the dashboard tool
// stores decoded into HCL values, and an object field's keys dotted, so
// that the block plans the import and then no change. A reference to a
// document generated beside it is written as an expression
// (document.search.Errors.id), so that the plan orders them; others stay
// literal ids.
func (b *Backend) documentBlock(f facts, im *schema.Import, labels map[string]string) (*hclwrite.Block, *hcl.Diagnostic) {
	ref := splitDocPath(im.Name)
	live, exists := f.Documents[im.Name]
	addr := b.docAddr(im.Name)
	if _, _, refusal := adapter.Decide(b.project, adapter.Declared{Addr: addr, Import: im.At()},
		adapter.LiveObject{Exists: exists, Owner: f.owner(live), What: fmt.Sprintf("version %d on cluster %s", live.Version, f.ClusterName)}); refusal != nil {
		return nil, refusal
	}
	label := labels[im.Name]
	blk := hclwrite.NewBlock(Document.Name(), []string{ref.Type, label})
	body := blk.Body()
	body.SetAttributeValue("index", cty.StringVal(ref.Index))
	if label != ref.ID {
		body.SetAttributeValue("id", cty.StringVal(ref.ID))
	}
	source := map[string]cty.Value{}
	dotted("", docView(live.Source, nil), source)
	refs := map[string]hcl.Traversal{}
	for _, r := range SourceRefs(live.Source) {
		for _, typ := range r.Types {
			if target, ok := labels[ref.Index+"/"+typ+"/"+r.ID]; ok {
				refs[refPath(r.Field)] = hcl.Traversal{hcl.TraverseRoot{Name: Document.Name()}, hcl.TraverseAttr{Name: typ}, hcl.TraverseAttr{Name: target}, hcl.TraverseAttr{Name: "id"}}
				break
			}
		}
	}
	body.SetAttributeRaw("source", valueTokens(cty.ObjectVal(source), "", refs))
	return blk, nil
}

// refPath is where a reference's field (Ref.Field) sits in a
// generated source, in valueTokens' terms: "savedSearchId",
// "kibanaSavedObjectMeta.searchSourceJSON/index", "panelsJSON/0/id".
func refPath(field string) string {
	if i := strings.Index(field, ".searchSourceJSON."); i >= 0 {
		return field[:i] + ".searchSourceJSON/" + field[i+len(".searchSourceJSON."):]
	}
	field = strings.ReplaceAll(field, "[", "/")
	field = strings.ReplaceAll(field, "].", "/")
	return field
}

// valueTokens writes v as HCL, with the value at each path of refs (keys
// and indices joined by "/") written as that reference instead.
func valueTokens(v cty.Value, path string, refs map[string]hcl.Traversal) hclwrite.Tokens {
	if tr, ok := refs[path]; ok {
		return hclwrite.TokensForTraversal(tr)
	}
	join := func(k string) string {
		if path == "" {
			return k
		}
		return path + "/" + k
	}
	t := v.Type()
	switch {
	case v.IsNull() || !v.IsKnown():
	case t.IsObjectType() || t.IsMapType():
		var attrs []hclwrite.ObjectAttrTokens
		m := v.AsValueMap()
		for _, k := range slices.Sorted(maps.Keys(m)) {
			name := hclwrite.TokensForValue(cty.StringVal(k))
			if hclsyntax.ValidIdentifier(k) {
				name = hclwrite.TokensForIdentifier(k)
			}
			attrs = append(attrs, hclwrite.ObjectAttrTokens{Name: name, Value: valueTokens(m[k], join(k), refs)})
		}
		return hclwrite.TokensForObject(attrs)
	case t.IsTupleType() || t.IsListType():
		var elems []hclwrite.Tokens
		for i, e := range v.AsValueSlice() {
			elems = append(elems, valueTokens(e, join(strconv.Itoa(i)), refs))
		}
		return hclwrite.TokensForTuple(elems)
	}
	return hclwrite.TokensForValue(v)
}

// dotted puts a view's fields into out: an object that is not JSON text
// as its keys dotted ("dashboardSavedObjectMeta.searchSourceJSON").
func dotted(prefix string, view map[string]any, out map[string]cty.Value) {
	for k, v := range view {
		if m, ok := v.(map[string]any); ok && !slices.Contains(JSONTextFields, k) {
			dotted(prefix+k+".", m, out)
			continue
		}
		raw, _ := json.Marshal(v)
		if ty, err := ctyjson.ImpliedType(raw); err == nil {
			if cv, err := ctyjson.Unmarshal(raw, ty); err == nil {
				out[prefix+k] = cv
			}
		}
	}
}

var notLabel = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// labelFor is a block label for an id that document.<type>.<label> can
// name: the id, its other characters made "_".
func labelFor(id string) string {
	l := strings.Trim(notLabel.ReplaceAllString(id, "_"), "_")
	if l == "" || l[0] >= '0' && l[0] <= '9' || l[0] == '-' {
		l = "doc_" + l
	}
	return l
}
