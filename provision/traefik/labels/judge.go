package labels

import (
	"fmt"
	"slices"
	"strings"
)

// Gate is one gated request: the Consul service of the frontend that
// gates it, the request, the frontend's entrypoints (none: every one) and
// the address its forward-auth middleware calls.
type Gate struct {
	Service     string
	Probe       Probe
	EntryPoints []string
	Auth        string
}

// Where is the gated request, for a person: "/api" or "/api (Host h)".
func (g Gate) Where() string {
	if g.Probe.Host == "" {
		return g.Probe.Path
	}
	return fmt.Sprintf("%s (Host %s)", g.Probe.Path, g.Probe.Host)
}

// Registration is one registration's tags, with its ID and Consul
// service name.
type Registration struct {
	ID, Service string
	Tags        []string
}

// Opening is a route of one registration that reaches a gated request
// without the gate.
type Opening struct {
	ID, Service string
	// Route names the route as Traefik would: `http router "open"`.
	Route string
	Gate  Gate
	// Why says how the route reaches the gated request.
	Why string
}

func (o Opening) String() string {
	return fmt.Sprintf("the %s in the tags of %q %s, without a forward-auth middleware of the specs", o.Route, o.ID, o.Why)
}

// Unread is a registration whose tags Traefik's label parser refuses.
type Unread struct {
	ID  string
	Err error
}

// Judge finds every route of the registrations that reaches a gated
// request without a forward-auth middleware calling one of the gates'
// addresses:
//   - an HTTP router that may claim the request (its rule read as
//     MayClaim reads it), that sends to the gated service (its own tags,
//     or a service option naming it), on an entrypoint of the gate;
//   - any TCP router on an entrypoint of the gate: Traefik applies TCP
//     routers before HTTP routers, and HostSNI(`*`) takes every plain
//     connection;
//   - a UDP router of the gated service;
//   - a Traefik 1.7 frontend rule that may claim the request or belongs
//     to the gated service, without a forward auth of the gates.
//
// The middlewares of every registration are the provider's, as Traefik's
// Consul catalog provider shares them.
func Judge(prefix string, gates []Gate, regs []Registration) ([]Opening, []Unread) {
	if len(gates) == 0 {
		return nil, nil
	}
	auths := map[string]bool{}
	for _, g := range gates {
		auths[g.Auth] = true
	}
	cfgs := make([]Config, len(regs))
	forwardAuth := map[string]string{}
	var unread []Unread
	for i, r := range regs {
		cfg, err := Decode(prefix, r.Tags)
		if err != nil {
			unread = append(unread, Unread{ID: r.ID, Err: err})
		}
		cfgs[i] = cfg
		for name, addr := range cfg.ForwardAuth {
			forwardAuth[name] = addr
		}
	}
	gated := func(mws []string) bool {
		return slices.ContainsFunc(mws, func(m string) bool {
			name, provider, _ := strings.Cut(m, "@")
			return (provider == "" || provider == "consulcatalog") && auths[forwardAuth[name]]
		})
	}
	var out []Opening
	for i, reg := range regs {
		for _, rt := range cfgs[i].Routers {
			route := fmt.Sprintf("%s router %q", rt.Protocol, rt.Name)
			rule := rt.Rule
			if rule == "" && rt.Protocol == HTTP {
				rule = "Host(`" + reg.Service + "`)" // the provider's default rule
			}
			for _, g := range gates {
				if !shared(rt.EntryPoints, g.EntryPoints) {
					continue
				}
				var why string
				switch rt.Protocol {
				case HTTP:
					if gated(rt.Middlewares) {
						continue
					}
					switch to := strings.TrimSuffix(rt.Service, "@consulcatalog"); {
					case ReadRule(rule).MayClaim(g.Probe):
						why = fmt.Sprintf("may claim %s (rule %s)", g.Where(), rule)
					case reg.Service == g.Service && to == "" || to == g.Service:
						why = fmt.Sprintf("sends requests to %s, the service that gates %s (rule %s)", g.Service, g.Where(), rule)
					default:
						continue
					}
				case TCP:
					why = fmt.Sprintf("takes the connections of an entrypoint that serves %s before any HTTP router (rule %s)", g.Where(), rule)
				default:
					if reg.Service != g.Service {
						continue
					}
					why = fmt.Sprintf("sends to %s, the service that gates %s", g.Service, g.Where())
				}
				out = append(out, Opening{ID: reg.ID, Service: reg.Service, Route: route, Gate: g, Why: why})
				break
			}
		}
		out = append(out, judgeV1(prefix, reg, gates, auths)...)
	}
	return out, unread
}

// judgeV1 judges the Traefik 1.7 frontends of a registration, by the
// exact keys 1.7 reads: <segment.>frontend.rule and its
// frontend.auth.forward.address.
func judgeV1(prefix string, reg Registration, gates []Gate, auths map[string]bool) []Opening {
	kv := map[string]string{}
	for _, t := range reg.Tags {
		if k, v, ok := strings.Cut(t, "="); ok {
			if rest, ok := strings.CutPrefix(k, prefix+"."); ok {
				kv[rest] = v
			}
		}
	}
	var out []Opening
	for k, rule := range kv {
		segment, ok := strings.CutSuffix(k, "frontend.rule")
		if !ok || segment != "" && !strings.HasSuffix(segment, ".") {
			continue
		}
		if auths[kv[segment+"frontend.auth.forward.address"]] {
			continue
		}
		for _, g := range gates {
			if reg.Service == g.Service || ReadRuleV1(rule).MayClaim(g.Probe) {
				route := "Traefik 1 frontend"
				if segment != "" {
					route += " " + strings.TrimSuffix(segment, ".")
				}
				out = append(out, Opening{ID: reg.ID, Service: reg.Service, Route: route,
					Gate: g, Why: fmt.Sprintf("may claim %s (rule %s)", g.Where(), rule)})
				break
			}
		}
	}
	slices.SortFunc(out, func(a, b Opening) int { return strings.Compare(a.Route, b.Route) })
	return out
}

// shared reports whether two sets of entrypoints meet; none is every
// entrypoint.
func shared(a, b []string) bool {
	return len(a) == 0 || len(b) == 0 || slices.ContainsFunc(a, func(e string) bool { return slices.Contains(b, e) })
}
