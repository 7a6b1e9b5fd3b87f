package search

import (
	"encoding/json"
	"strings"

	"github.com/provision-dev/provision/provision/addrs"
	"github.com/provision-dev/provision/provision/policies"
	"github.com/provision-dev/provision/schema"
	"github.com/zclconf/go-cty/cty"
)

// IndexPolicy is what a policy sees of an index (resource_policy "index"
// "..."): its name, its search cluster (the search block's name) and its
// mapping, by type, each type's properties as Elasticsearch writes them
// (title = { type = "string" }), less provision's own marks.
var IndexPolicy = policies.Kind{Name: Index.Name(), Attrs: indexAttrs, Of: func(cfg *schema.Config) policies.Reader {
	return func(addr addrs.Addr, view json.RawMessage, _ bool) (cty.Value, error) {
		return indexAttrsOf(cfg, addr, view)
	}
}}

var indexAttrs = cty.Object(map[string]cty.Type{"name": cty.String, "search": cty.String, "mapping": cty.DynamicPseudoType})

func indexAttrsOf(cfg *schema.Config, addr addrs.Addr, view json.RawMessage) (cty.Value, error) {
	var v struct {
		Mappings map[string]struct {
			Properties map[string]any `json:"properties"`
		} `json:"mappings"`
	}
	if view != nil { // an undeclared index deleted: no view
		if err := json.Unmarshal(view, &v); err != nil {
			return cty.NilVal, err
		}
	}
	mapping := map[string]any{}
	for typ, m := range v.Mappings {
		delete(m.Properties, "provision")
		mapping[typ] = map[string]any{"properties": m.Properties}
	}
	m, err := policies.Value(mapping)
	if err != nil {
		return cty.NilVal, err
	}
	return cty.ObjectVal(map[string]cty.Value{"name": cty.StringVal(addr.Name), "search": cty.StringVal(clusterOf(cfg, addr)), "mapping": m}), nil
}

// DocumentPolicy is what a policy sees of a document (resource_policy
// "document" "..."): its index, type and id, its search cluster, and its
// source, less provision's own marks.
var DocumentPolicy = policies.Kind{Name: Document.Name(), Attrs: documentAttrs, Of: func(cfg *schema.Config) policies.Reader {
	return func(addr addrs.Addr, view json.RawMessage, _ bool) (cty.Value, error) {
		return documentAttrsOf(cfg, addr, view)
	}
}}

var documentAttrs = cty.Object(map[string]cty.Type{"index": cty.String, "type": cty.String, "id": cty.String, "search": cty.String, "source": cty.DynamicPseudoType})

func documentAttrsOf(cfg *schema.Config, addr addrs.Addr, view json.RawMessage) (cty.Value, error) {
	source := map[string]any{}
	if view != nil {
		if err := json.Unmarshal(view, &source); err != nil {
			return cty.NilVal, err
		}
	}
	delete(source, "provision")
	src, err := policies.Value(source)
	if err != nil {
		return cty.NilVal, err
	}
	parts := strings.SplitN(addr.Name, "/", 3)
	for len(parts) < 3 {
		parts = append(parts, "")
	}
	return cty.ObjectVal(map[string]cty.Value{"index": cty.StringVal(parts[0]), "type": cty.StringVal(parts[1]), "id": cty.StringVal(parts[2]),
		"search": cty.StringVal(clusterOf(cfg, addr)), "source": src}), nil
}

// clusterOf is the name of the search block an object of addr lives on:
// its address's, or the specs' one search block's.
func clusterOf(cfg *schema.Config, addr addrs.Addr) string {
	if name, ok := strings.CutPrefix(addr.In, SearchPlace.Type+"."); ok {
		return name
	}
	if s := Searches(cfg); len(s) == 1 {
		return s[0].Name
	}
	return ""
}
