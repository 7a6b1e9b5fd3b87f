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
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/provision-dev/provision/provision"
	"github.com/provision-dev/provision/schema"
	"github.com/zclconf/go-cty/cty"
	ctyjson "github.com/zclconf/go-cty/cty/json"
)

var _ provision.Generator = (*Backend)(nil)

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
	labels := map[string]bool{}
	for _, im := range b.generate {
		if im.Kind == "document" {
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
		if _, _, refusal := provision.Decide(b.project, provision.Declared{Addr: addr, Noun: "index", Import: im.At()}, lv); refusal != nil {
			diags = append(diags, refusal)
			continue
		}
		blk := hclwrite.NewBlock("index", []string{im.Name})
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

// documentBlock writes the document block of a live document that an
// import block names: its source with the JSON text the dashboard tool
// stores decoded into HCL values, and an object field's keys dotted, so
// that the block plans the import and then no change.
func (b *Backend) documentBlock(f facts, im *schema.Import, labels map[string]bool) (*hclwrite.Block, *hcl.Diagnostic) {
	ref := splitDocPath(im.Name)
	live, exists := f.Documents[im.Name]
	addr := b.docAddr(im.Name)
	if _, _, refusal := provision.Decide(b.project, provision.Declared{Addr: addr, Noun: "document", Import: im.At()},
		provision.LiveObject{Exists: exists, Owner: live.owner(), What: fmt.Sprintf("version %d on cluster %s", live.Version, f.ClusterName)}); refusal != nil {
		return nil, refusal
	}
	label := labelFor(ref.ID)
	for n := 2; labels[ref.Type+"."+label]; n++ {
		label = labelFor(ref.ID) + "_" + strconv.Itoa(n)
	}
	labels[ref.Type+"."+label] = true
	blk := hclwrite.NewBlock("document", []string{ref.Type, label})
	body := blk.Body()
	body.SetAttributeValue("index", cty.StringVal(ref.Index))
	if label != ref.ID {
		body.SetAttributeValue("id", cty.StringVal(ref.ID))
	}
	source := map[string]cty.Value{}
	dotted("", docView(live.Source, nil), source)
	body.SetAttributeValue("source", cty.ObjectVal(source))
	return blk, nil
}

// dotted puts a view's fields into out: an object that is not JSON text
// as its keys dotted ("dashboardSavedObjectMeta.searchSourceJSON").
func dotted(prefix string, view map[string]any, out map[string]cty.Value) {
	for k, v := range view {
		if m, ok := v.(map[string]any); ok && !slices.Contains(schema.JSONTextFields, k) {
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
