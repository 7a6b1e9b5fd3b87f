package traefik

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// Traefik 1.7 has no routers and middlewares: a provider's configuration
// is frontends (routes, entrypoints, priority, auth) and backends, read
// at GET /api/providers as 1.7.34 answers it
// (Traefik 1.7's API docs, docs.traefik.io/v1.7/configuration/api/).
// A frontend is read here as a router
// whose forward auth, when it has one, is its own middleware.

// consulCatalogV1 is the Consul catalog provider's key in 1.7's API.
const consulCatalogV1 = "consul_catalog"

// forwardAuthV1 is the name a 1.7 frontend's own forward auth gets where
// Traefik 2 and 3 name a middleware.
const forwardAuthV1 = "auth.forward"

type frontendV1 struct {
	EntryPoints []string `json:"entryPoints"`
	Routes      map[string]struct {
		Rule string `json:"rule"`
	} `json:"routes"`
	Priority int64 `json:"priority"`
	Auth     *struct {
		Forward *struct {
			Address string `json:"address"`
		} `json:"forward"`
	} `json:"auth"`
}

// readV1 reads every provider's frontends. A 1.7 proxy whose API lists no
// Consul catalog provider reads nothing provision writes: that is an
// error, not a path "not served".
func (b *Backend) readV1(ctx context.Context) (*state, error) {
	var providers map[string]struct {
		Frontends map[string]frontendV1 `json:"frontends"`
	}
	body, _, err := b.fetch(ctx, "/api/providers")
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(body, &providers); err != nil {
		return nil, fmt.Errorf("reading %s/api/providers: %w", b.base(), err)
	}
	if _, ok := providers[consulCatalogV1]; !ok {
		names := make([]string, 0, len(providers))
		for name := range providers {
			names = append(names, name)
		}
		sort.Strings(names)
		listed := "no provider at all"
		if len(names) > 0 {
			listed = "only " + strings.Join(names, ", ")
		}
		return nil, fmt.Errorf("this Traefik 1 proxy lists no Consul catalog provider (%s), so it does not serve what provision registers: start it with --consulcatalog", listed)
	}
	st := &state{Middlewares: map[string]middleware{}, V1: true}
	for provider, p := range providers {
		for name, f := range p.Frontends {
			r := router{Name: name + "@" + provider, Status: "enabled", Priority: f.Priority, Rule: f.rule()}
			if f.Auth != nil && f.Auth.Forward != nil {
				key := forwardAuthV1 + " of " + r.Name
				st.Middlewares[key] = middleware{Name: forwardAuthV1, ForwardAuth: &forwardAuth{f.Auth.Forward.Address}}
				r.Middlewares = []string{key}
			}
			st.Routers = append(st.Routers, r)
		}
	}
	sort.Slice(st.Routers, func(i, j int) bool { return st.Routers[i].Name < st.Routers[j].Name })
	return st, nil
}

// rule is the frontend's routes as one rule: 1.7 requires every route
// of a frontend to match, so they are joined by ";" as the terms of one
// rule are, in the order of their names.
func (f frontendV1) rule() string {
	names := make([]string, 0, len(f.Routes))
	for name := range f.Routes {
		names = append(names, name)
	}
	sort.Strings(names)
	rules := make([]string, len(names))
	for i, name := range names {
		rules[i] = f.Routes[name].Rule
	}
	return strings.Join(rules, ";")
}
