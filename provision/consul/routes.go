package consul

import (
	"encoding/json"
	"slices"

	"github.com/provision-dev/provision/provision/addrs"
	"github.com/provision-dev/provision/provision/plans"
	"github.com/provision-dev/provision/provision/traefik"
	"github.com/provision-dev/provision/schema"
)

// Routes is what a proxy's proof needs of the services (traefik.Routes):
// their gated frontends, their names, the tags' prefix, and a change's
// name and tags, read as the registration it is, so that the view's form
// is the registration's alone.
type Routes struct{}

var _ traefik.Routes = Routes{}

// Gated are the declared frontends behind a forward-auth gate, but those
// of the agents left out.
func (Routes) Gated(cfg *schema.Config, leftOut []addrs.Addr) []traefik.Gated {
	var out []traefik.Gated
	agents := len(Agents(cfg))
	for _, s := range Services(cfg) {
		f := s.Frontend
		if f == nil || f.ForwardAuth == nil || f.Rule == nil || slices.Contains(leftOut, addrs.Addr{In: "agent." + s.Agent}) {
			continue
		}
		a := addrs.Addr{Kind: Service, Name: s.Name}
		if agents > 1 && s.Node == "" {
			a.In = "agent." + s.Agent
		}
		out = append(out, traefik.Gated{Addr: a, Auth: f.ForwardAuth.Address, Probes: f.Rule.Probes(), At: s.DeclRange,
			Token: f.ProofToken, Headers: f.ForwardAuth.AuthResponseHeaders})
	}
	return out
}

// Names are the Consul names of every declared service.
func (Routes) Names(cfg *schema.Config) map[string]bool {
	names := map[string]bool{}
	for _, s := range Services(cfg) {
		names[s.Service] = true
	}
	return names
}

// Prefix is the proxy block's prefix of the tags.
func (Routes) Prefix(cfg *schema.Config) string { return ProxyOf(cfg).Prefix }

// Routed is the name and tags of a service change's view (its Before or
// After); ok is false for a change of another kind.
func (Routes) Routed(c *plans.Change, view json.RawMessage) (string, []string, bool) {
	if c.Addr.Kind != Service {
		return "", nil, false
	}
	var r registration
	if err := json.Unmarshal(view, &r); err != nil {
		return "", nil, false
	}
	return r.Name, r.Tags, true
}
