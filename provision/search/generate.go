package search

import (
	"context"
	"encoding/json"
	"maps"
	"slices"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/provision-dev/provision/provision"
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
	for _, im := range b.generate {
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
