package consul

import (
	"encoding/json"
	"strings"

	"github.com/provision-dev/provision/provision/addrs"
	"github.com/provision-dev/provision/provision/policies"
	"github.com/provision-dev/provision/provision/traefik/labels"
	"github.com/provision-dev/provision/schema"
	"github.com/zclconf/go-cty/cty"
)

// ServicePolicy is what a policy sees of a service (resource_policy
// "service" "..."), as the specs name its attributes: id, name, address,
// port, tags (the spec's own, without the proxy's), meta (without
// provision's marks), frontend (rule and forward_auth's address; null
// without one), checks (by name: each check's fields as a check block
// names them: the declared ones; a live service's checks are kept by its
// agent apart from the registration, and not read back, so prior_attrs
// and a delete's attrs have none) and agent (the agent block's instance;
// "" for Consul's one agent or an external node).
var ServicePolicy = policies.Kind{Name: Service.Name(), Attrs: serviceAttrs, Of: serviceAttrsOf}

var serviceAttrs = cty.Object(map[string]cty.Type{
	"id": cty.String, "name": cty.String, "address": cty.String, "port": cty.Number,
	"tags": cty.List(cty.String), "meta": cty.Map(cty.String),
	"frontend": cty.Object(map[string]cty.Type{"rule": cty.String, "forward_auth": cty.Object(map[string]cty.Type{"address": cty.String})}),
	"checks":   cty.DynamicPseudoType,
	"agent":    cty.String,
	"routers":  cty.List(routerType),
})

// routerType is a router as Traefik 2 and 3 read it from the tags
// (labels.Decode).
var routerType = cty.Object(map[string]cty.Type{
	"name": cty.String, "protocol": cty.String, "rule": cty.String, "entrypoints": cty.List(cty.String), "middlewares": cty.List(cty.String), "service": cty.String,
})

func serviceAttrsOf(cfg *schema.Config) policies.Reader {
	prefix := ProxyOf(cfg).Prefix
	byID := map[string]*Decl{}
	for _, s := range Services(cfg) {
		byID[s.Name] = s
	}
	return func(addr addrs.Addr, view json.RawMessage, declared bool) (cty.Value, error) {
		r := registration{ID: addr.Name}
		if view != nil {
			if err := json.Unmarshal(view, &r); err != nil {
				return cty.NilVal, err
			}
		}
		if s := byID[addr.Name]; declared && s != nil {
			return serviceAttrsFrom(prefix, addr, r, s.Tags, s.Frontend, s.Checks)
		}
		// A live registration: its frontend read back from its tags, as an
		// import reads it.
		f, plain, unread := ReadTags(prefix, r.Tags)
		return serviceAttrsFrom(prefix, addr, r, append(plain, unread...), f, nil)
	}
}

// serviceAttrsFrom are a service's attributes: its registration's, with
// its own tags, frontend and checks given apart.
func serviceAttrsFrom(prefix string, addr addrs.Addr, r registration, own []string, f *Frontend, checkList []*Check) (cty.Value, error) {
	tags := []cty.Value{}
	for _, t := range own {
		tags = append(tags, cty.StringVal(t))
	}
	meta := map[string]cty.Value{}
	for k, v := range r.Meta {
		if !schema.ProvisionMeta(k) {
			meta[k] = cty.StringVal(v)
		}
	}
	frontend := cty.NullVal(serviceAttrs.AttributeType("frontend"))
	if f != nil && f.Rule != nil {
		auth := cty.NullVal(cty.Object(map[string]cty.Type{"address": cty.String}))
		if f.ForwardAuth != nil {
			auth = cty.ObjectVal(map[string]cty.Value{"address": cty.StringVal(f.ForwardAuth.Address)})
		}
		frontend = cty.ObjectVal(map[string]cty.Value{"rule": cty.StringVal(f.Rule.String()), "forward_auth": auth})
	}
	checks := map[string]cty.Value{}
	for _, c := range checkList {
		fields := map[string]any{}
		for wire, v := range c.Def {
			if a, ok := schema.ArgWired(CheckFields, wire); ok {
				fields[a.Name] = v
			}
		}
		v, err := policies.Value(fields)
		if err != nil {
			return cty.NilVal, err
		}
		checks[c.Name] = v
	}
	agent, _ := strings.CutPrefix(addr.In, AgentPlace.Type+".")
	routers := []cty.Value{}
	if routes, err := labels.Decode(prefix, r.Tags); err == nil { // tags Traefik cannot read route nothing
		for _, rt := range routes.Routers {
			routers = append(routers, cty.ObjectVal(map[string]cty.Value{"name": cty.StringVal(rt.Name), "protocol": cty.StringVal(string(rt.Protocol)), "rule": cty.StringVal(rt.Rule),
				"entrypoints": listOf(cty.String, ctyStrings(rt.EntryPoints)), "middlewares": listOf(cty.String, ctyStrings(rt.Middlewares)), "service": cty.StringVal(rt.Service)}))
		}
	}
	return cty.ObjectVal(map[string]cty.Value{
		"id": cty.StringVal(r.ID), "name": cty.StringVal(r.Name), "address": cty.StringVal(r.Address), "port": cty.NumberIntVal(int64(r.Port)),
		"tags": listOf(cty.String, tags), "meta": mapOrEmpty(meta), "frontend": frontend, "checks": cty.ObjectVal(checks), "agent": cty.StringVal(agent),
		"routers": listOf(routerType, routers),
	}), nil
}

// ctyStrings are ss as cty strings.
func ctyStrings(ss []string) []cty.Value {
	out := make([]cty.Value, len(ss))
	for i, s := range ss {
		out[i] = cty.StringVal(s)
	}
	return out
}

// listOf is the list of vs, of elements of type t (the empty list of t
// when there are none).
func listOf(t cty.Type, vs []cty.Value) cty.Value {
	if len(vs) == 0 {
		return cty.ListValEmpty(t)
	}
	return cty.ListVal(vs)
}

func mapOrEmpty(m map[string]cty.Value) cty.Value {
	if len(m) == 0 {
		return cty.MapValEmpty(cty.String)
	}
	return cty.MapVal(m)
}
