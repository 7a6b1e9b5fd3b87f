package traefik

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision"
	"github.com/provision-dev/provision/provision/adapter"
	"github.com/provision-dev/provision/provision/addrs"
	"github.com/provision-dev/provision/provision/plans"
	"github.com/provision-dev/provision/provision/traefik/labels"
	"github.com/provision-dev/provision/schema"
)

// Environment variables of a proxy API behind basic auth.
const (
	UsernameEnv = "TRAEFIK_API_USERNAME"
	PasswordEnv = "TRAEFIK_API_PASSWORD"
)

// wrongToken is what the probe sends as a token that no auth endpoint
// accepts; the probe never sends a real one.
const wrongToken = "provision-probe-not-a-token"

// Backend is one declared Traefik proxy.
type Backend struct {
	provision.NoCapabilities
	proxy  *Proxy
	prefix string // the tag prefix, as the proxy block says
	fronts []Gated
	// names are the Consul names of every declared service: a router of a
	// removed service stays while one of them has that name.
	names map[string]bool
	// routes read the services' changes.
	routes Routes
	http   *http.Client
	user   string
	pass   string
	net    adapter.Deadlines
	wait   time.Duration
	// version is the proxy's, as its API said it once.
	version string
}

var _ provision.Backend = (*Backend)(nil)

// Routes is what the proof needs of the kind whose objects configure
// the proxy: a Consul service, whose tags Traefik reads. The service
// kind provides it (consul.Routes) and connect hands it over, so this
// package names no kind.
type Routes interface {
	// Gated are the declared frontends behind a forward-auth gate, but
	// those of the agents left out (-exclude agent.<name>).
	Gated(cfg *schema.Config, leftOut []addrs.Addr) []Gated
	// Names are the names of every declared service: a router of a
	// removed service stays while one of them has that name.
	Names(cfg *schema.Config) map[string]bool
	// Prefix is the tags' prefix, as the specs say it.
	Prefix(cfg *schema.Config) string
	// Routed is the name and tags of a change's view (its before or
	// after); ok is false for a change of another kind, or a view that
	// does not decode.
	Routed(c *plans.Change, view json.RawMessage) (name string, tags []string, ok bool)
}

// Gated is a declared gated frontend, as a proxy must serve it.
type Gated struct {
	Addr   addrs.Addr
	Auth   string // the forward-auth address
	Probes []labels.Probe
	At     hcl.Range // the declaration
	// Token is a token the auth endpoint accepts (proof { token }), ""
	// without one; Headers are the auth response headers declared, which
	// its answer to it must hold.
	Token   string
	Headers []string
}

// Options are how the proxies are opened.
type Options struct {
	// Routes are the declared services' gates, tags and names.
	Routes Routes
	// Env reads TRAEFIK_API_USERNAME and TRAEFIK_API_PASSWORD.
	Env func(string) string
	// Deadlines bound every request to a proxy (DefaultDeadlines when
	// zero).
	Deadlines adapter.Deadlines
	// Wait bounds how long the proof after an apply waits for the proxy
	// to serve the declared gates.
	Wait time.Duration
	// LeftOut are the agents the run leaves out (-exclude agent.<name>):
	// the gates of their services are neither planned nor proved.
	LeftOut []addrs.Addr
}

// New returns a backend per traefik block.
func New(cfg *schema.Config, o Options) []provision.Backend {
	if len(Proxies(cfg)) == 0 {
		return nil // no traefik block: no probe to work out
	}
	wait, env := o.Wait, o.Env
	fronts, names, prefix := o.Routes.Gated(cfg, o.LeftOut), o.Routes.Names(cfg), o.Routes.Prefix(cfg)
	var out []provision.Backend
	for _, t := range Proxies(cfg) {
		user, pass := env(UsernameEnv), env(PasswordEnv)
		if adapter.Allowed(t.API, env) != nil {
			user, pass = "", "" // read without credentials, as a proxy outside the allowed servers
		}
		out = append(out, &Backend{
			proxy: t, prefix: prefix, fronts: fronts, names: names, routes: o.Routes, wait: wait, net: o.Deadlines.OrDefault(),
			user: user, pass: pass,
			http: &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
		})
	}
	return out
}

func (b *Backend) name() string { return "traefik." + b.proxy.Name }

// Info names the proxy by its API; it has no scope of its own.
func (b *Backend) Info() plans.BackendInfo {
	return plans.BackendInfo{Name: b.name(), Kind: "traefik", Address: strings.TrimSuffix(b.proxy.API, "/"), Scope: adapter.RawJSON(struct{}{})}
}

// Read reads how the proxy serves what it serves now. A proxy that
// cannot be read is no error: its state says why, and the plan warns.
func (b *Backend) Read(ctx context.Context, _ plans.Mode) (plans.State, hcl.Diagnostics) {
	st, err := b.read(ctx)
	if err != nil {
		return &state{Error: err.Error()}, nil
	}
	return st, nil
}

// DecodeState reads a proxy's state from its JSON form.
func (b *Backend) DecodeState(dec *json.Decoder) (plans.State, error) {
	st := &state{}
	return st, dec.Decode(st)
}

// Plan judges the declared gates against what the proxy serves. It plans
// no change and its fingerprint is empty: what a proxy serves follows the
// catalog and never makes a saved plan stale. A router that serves a gated
// path without the gate is a warning at the service; a proxy that could
// not be read is a warning at its block.
func (b *Backend) Plan(s plans.State, _ plans.Mode) (provision.Planning, hcl.Diagnostics) {
	st := s.(*state)
	if st.Error != "" {
		return provision.Planning{Planned: plans.Planned{Gates: b.unread()}}, hcl.Diagnostics{{
			Severity: hcl.DiagWarning,
			Summary:  "Cannot read the proxy",
			Detail:   fmt.Sprintf("%s: %s. The plan does not say how it serves the gated frontends, and an apply fails unless it can prove them within -verify-timeout.", b.name(), st.Error),
			Subject:  b.proxy.APIRange.Ptr(),
			Context:  b.proxy.DeclRange.Ptr(),
		}}
	}
	gates := st.gates(b)
	var diags hcl.Diagnostics
	for i, g := range gates {
		if g.Status == plans.Ungated {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagWarning,
				Summary:  "Gated path served without the gate",
				Detail:   ungated(g) + " Find who registered it (its tags are in the Consul catalog) and remove it or give it the forward-auth middleware; an apply fails while it is there.",
				Subject:  b.frontOf(i).At.Ptr(),
			})
		}
	}
	return provision.Planning{Planned: plans.Planned{Gates: gates}}, diags
}

// frontOf is the frontend of the i-th gate (gates are made frontend by
// frontend, probe by probe).
func (b *Backend) frontOf(i int) Gated {
	for _, f := range b.fronts {
		if i < len(f.Probes) {
			return f
		}
		i -= len(f.Probes)
	}
	return Gated{}
}

func (b *Backend) unread() []plans.Gate {
	var out []plans.Gate
	for _, f := range b.fronts {
		for _, p := range f.Probes {
			out = append(out, plans.Gate{Proxy: b.name(), Address: f.Addr, Path: p.Path, Host: p.Host, Status: plans.Unread})
		}
	}
	return out
}

// ungated says which router bypasses a gate, for a diagnostic.
func ungated(g plans.Gate) string {
	return fmt.Sprintf("%s serves %s through the router %s (rule %s, priority %d), which does not use the frontend's forward-auth middleware: requests there reach the service without the auth check.",
		g.Proxy, g.Where(), g.Router, g.Rule, g.Priority)
}

// router and middleware are what the API lists, as far as a gate goes.
type router struct {
	Name        string   `json:"name"`
	Rule        string   `json:"rule"`
	Priority    int64    `json:"priority"`
	Status      string   `json:"status"`
	EntryPoints []string `json:"entryPoints"`
	Middlewares []string `json:"middlewares"`
	Service     string   `json:"service"`
}

type middleware struct {
	Name        string       `json:"name"`
	Type        string       `json:"type"`
	ForwardAuth *forwardAuth `json:"forwardAuth"`
}

type forwardAuth struct {
	Address string `json:"address"`
}

type entrypoint struct {
	Name    string `json:"name"`
	Address string `json:"address"`
}

// state is one read of the proxy's API (its State): what it serves, or
// why it could not be read.
type state struct {
	// Version is the proxy's, as GET /api/version answers it.
	Version     string                `json:"version,omitempty"`
	Routers     []router              `json:"routers,omitempty"`
	Middlewares map[string]middleware `json:"middlewares,omitempty"`
	// TCP and UDP are the proxy's TCP and UDP routers: a TCP router on an
	// entrypoint takes its connections before any HTTP router does.
	TCP []router `json:"tcp,omitempty"`
	UDP []router `json:"udp,omitempty"`
	// Entrypoints are the names of the entrypoints at the probe URL's
	// port; all but Traefik's own API entrypoint when none is. A Traefik 1
	// API does not list its entrypoints: every frontend counts there.
	Entrypoints []string `json:"entrypoints,omitempty"`
	// V1 is a Traefik 1 proxy's state: its frontends are the routers,
	// their rules in the Traefik 1 grammar.
	V1 bool `json:"v1,omitempty"`
	// Error is why the API could not be read; the plan warns and says
	// nothing of the gates.
	Error string `json:"error,omitempty"`
}

// Server is the proxy's generation and version.
func (st *state) Server() string {
	if st.Version == "" {
		return "Traefik"
	}
	return "Traefik " + strings.TrimPrefix(st.Version, "v")
}

// Known: provision reads Traefik 1.7, 2.x and 3.x alike, from their
// APIs.
func (st *state) Known() error { return nil }

// read reads the proxy's API in its generation's form. After a failed
// read the generation is asked again: the proxy may have been replaced
// by one of another generation.
func (b *Backend) read(ctx context.Context) (*state, error) {
	v1, err := b.isV1(ctx)
	if err != nil {
		return nil, err
	}
	read := b.readV2
	if v1 {
		read = b.readV1
	}
	st, err := read(ctx)
	if err != nil {
		b.version = ""
		return nil, err
	}
	st.Version = b.version
	return st, nil
}

// readV2 reads a Traefik 2 or 3 proxy: its routers, middlewares and
// entrypoints.
func (b *Backend) readV2(ctx context.Context) (*state, error) {
	st := &state{Middlewares: map[string]middleware{}}
	var mws []middleware
	var eps []entrypoint
	for path, to := range map[string]any{"/api/http/routers": &st.Routers, "/api/http/middlewares": &mws, "/api/entrypoints": &eps,
		"/api/tcp/routers": &st.TCP, "/api/udp/routers": &st.UDP} {
		if err := b.get(ctx, path, to); err != nil {
			return nil, err
		}
	}
	for _, m := range mws {
		st.Middlewares[m.Name] = m
	}
	u, _ := url.Parse(b.proxy.URL)
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	for _, e := range eps {
		if _, p, err := net.SplitHostPort(e.Address); err == nil && p == port {
			st.Entrypoints = append(st.Entrypoints, e.Name)
		}
	}
	if len(st.Entrypoints) == 0 {
		for _, e := range eps {
			if e.Name != "traefik" {
				st.Entrypoints = append(st.Entrypoints, e.Name)
			}
		}
	}
	return st, nil
}

// isV1 finds out, once, whether the proxy is a Traefik 1: GET
// /api/version answers {"Version":"v1.7.34",...} there and
// {"Version":"2.11.10",...} or "3.6.0" on the later generations, so no
// block needs a hint.
func (b *Backend) isV1(ctx context.Context) (bool, error) {
	if b.version != "" {
		return isV1(b.version), nil
	}
	body, _, err := b.fetch(ctx, "/api/version")
	if err != nil {
		return false, err
	}
	var v struct{ Version string }
	if err := json.Unmarshal(body, &v); err != nil || v.Version == "" {
		return false, fmt.Errorf("reading %s/api/version: no Traefik version in %.100q", b.base(), body)
	}
	b.version = v.Version
	return isV1(v.Version), nil
}

func isV1(version string) bool {
	return strings.HasPrefix(strings.TrimPrefix(version, "v"), "1.")
}

func (b *Backend) base() string { return strings.TrimSuffix(b.proxy.API, "/") }

// fetch GETs one path of the API (with its query) and returns the body
// of a 200 and the X-Next-Page header.
func (b *Backend) fetch(ctx context.Context, path string) ([]byte, string, error) {
	var body []byte
	var next string
	err := b.net.Call(ctx, true, func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.base()+path, nil)
		if err != nil {
			return err
		}
		if b.user != "" || b.pass != "" {
			req.SetBasicAuth(b.user, b.pass)
		}
		resp, err := b.http.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		body, err = io.ReadAll(io.LimitReader(resp.Body, 64<<20))
		if err != nil {
			return err
		}
		if resp.StatusCode != http.StatusOK {
			return &adapter.StatusError{Code: resp.StatusCode, Message: fmt.Sprintf("GET %s answered %s: %s", path, resp.Status, strings.TrimSpace(string(body[:min(len(body), 300)])))}
		}
		next = resp.Header.Get("X-Next-Page")
		return nil
	})
	if err != nil {
		return nil, "", fmt.Errorf("reading %s%s: %w", b.base(), path, err)
	}
	return body, next, nil
}

// get reads one list of the API, every page of it.
func (b *Backend) get(ctx context.Context, path string, to any) error {
	var all []json.RawMessage
	for page := 1; ; {
		var items []json.RawMessage
		body, next, err := b.fetch(ctx, fmt.Sprintf("%s?per_page=1000&page=%d", path, page))
		if err != nil {
			return err
		}
		if err := json.Unmarshal(body, &items); err != nil {
			return fmt.Errorf("reading %s%s: %w", b.base(), path, err)
		}
		all = append(all, items...)
		if n, err := strconv.Atoi(next); err != nil || n <= page {
			break
		} else {
			page = n
		}
	}
	raw, _ := json.Marshal(all)
	return json.Unmarshal(raw, to)
}

// gates judges every probe of every frontend against the routers of the
// probe's entrypoints: ungated when an enabled TCP router listens there
// (Traefik routes TCP before HTTP) or an enabled HTTP router claims it
// without the frontend's forward-auth middleware (the one of highest
// priority is named), gated when one claims it with it, not served
// otherwise.
func (st *state) gates(b *Backend) []plans.Gate {
	var out []plans.Gate
	for _, f := range b.fronts {
		for _, p := range f.Probes {
			g := plans.Gate{Proxy: b.name(), Address: f.Addr, Path: p.Path, Host: p.Host, Status: plans.NotServed}
			var open *router
			for i := range st.Routers {
				r := &st.Routers[i]
				if r.Status != "enabled" || !st.listens(r) || !st.claims(r, p) {
					continue
				}
				if mw := st.gate(r, f.Auth); mw != "" {
					if g.Status == plans.NotServed {
						g.Status, g.Router, g.Middleware = plans.Gated, r.Name, mw
					}
				} else if open == nil || priority(r) > priority(open) {
					open = r
				}
			}
			if i := slices.IndexFunc(st.TCP, func(r router) bool { return r.Status == "enabled" && st.listens(&r) }); i >= 0 {
				open = &router{Name: "tcp " + st.TCP[i].Name, Rule: st.TCP[i].Rule, Priority: priority(&st.TCP[i])}
			}
			if open != nil {
				g = plans.Gate{Proxy: b.name(), Address: f.Addr, Path: p.Path, Host: p.Host, Status: plans.Ungated,
					Router: open.Name, Rule: open.Rule, Priority: priority(open)}
			}
			out = append(out, g)
		}
	}
	return out
}

// listens reports whether r serves the entrypoint of the probe URL.
func (st *state) listens(r *router) bool {
	return st.V1 || slices.ContainsFunc(r.EntryPoints, func(e string) bool { return slices.Contains(st.Entrypoints, e) })
}

// claims reports whether r's rule, in its generation's grammar, serves
// the probe's request.
func (st *state) claims(r *router, p labels.Probe) bool {
	if st.V1 {
		return labels.ReadRuleV1(r.Rule).Claims(p)
	}
	return labels.ReadRule(r.Rule).Claims(p)
}

// gate is the middleware of r that forwards to the auth address; "".
func (st *state) gate(r *router, auth string) string {
	for _, key := range r.Middlewares {
		if m, ok := st.Middlewares[key]; ok && m.ForwardAuth != nil && m.ForwardAuth.Address == auth {
			return m.Name
		}
	}
	return ""
}

// priority is a router's priority as Traefik orders them: the one set,
// else the length of its rule.
func priority(r *router) int64 {
	if r.Priority != 0 {
		return r.Priority
	}
	return int64(len(r.Rule))
}

// Verify waits, up to the bound, until the proxy serves every gated path
// through its forward-auth middleware and by no other router, and until
// the routers of the frontends this plan removes are gone; then it probes
// each path at the entrypoint without a token and with a wrong one.
func (b *Backend) Verify(ctx context.Context, p *plans.Plan) ([]provision.Proof, hcl.Diagnostics) {
	removed, applied := b.removed(p), b.applied(p)
	if len(b.fronts) == 0 && len(removed.v1)+len(removed.later) == 0 {
		return nil, nil
	}
	start := time.Now()
	deadline := start.Add(b.wait)
	var st *state
	var gates []plans.Gate
	var gone, unserved []string
	var err error
	for {
		st, err = b.read(ctx)
		if err == nil {
			gates, gone, unserved = st.gates(b), st.left(removed.of(st)), st.unserved(applied.of(st))
			if proven(gates) && len(gone) == 0 && len(unserved) == 0 {
				break
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return nil, b.unproven(gates, gone, unserved, err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(250 * time.Millisecond):
		}
	}
	var lines []provision.Proof
	var diags hcl.Diagnostics
	for i, g := range gates {
		f := b.frontOf(i)
		none, perr := b.probe(ctx, g, "")
		var wrong int
		if perr == nil {
			wrong, perr = b.probe(ctx, g, wrongToken)
		}
		if perr != nil {
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Gate not proven", Subject: f.At.Ptr(), Extra: provision.Unproven{Proxy: b.name()},
				Detail: fmt.Sprintf("%s: %s, served by the router %s: %s.", b.name(), g.Where(), g.Router, perr)})
			continue
		}
		rows := fmt.Sprintf("no token %d, wrong token %d", none, wrong)
		if f.Token != "" {
			ok, aerr := b.accepted(ctx, g, f)
			var herr headersError
			switch {
			case errors.As(aerr, &herr):
				diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Auth response headers not proven", Subject: f.At.Ptr(), Extra: provision.Unproven{Proxy: b.name()},
					Detail: fmt.Sprintf("%s: %s, served by the router %s, answered the proof token %d, but %s. The proxy does not show what it copies, so provision asks the forward_auth address itself: it must reach that address, and the application must answer the accepted token with every header auth_response_headers names.", b.name(), g.Where(), g.Router, ok, herr.msg)})
				continue
			case aerr != nil:
				diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Accepted token refused", Subject: f.At.Ptr(), Extra: provision.Unproven{Proxy: b.name()},
					Detail: fmt.Sprintf("%s: %s, served by the router %s: %s. The route refuses its own clients: an auth endpoint that refuses the token, a wrong forward_auth address, or a middleware chained to the wrong router.", b.name(), g.Where(), g.Router, aerr)})
				continue
			}
			rows += fmt.Sprintf(", accepted token %d", ok)
		}
		by := strings.TrimSuffix(g.Middleware, "@consulcatalog")
		if st.V1 {
			by = strings.TrimSuffix(g.Router, "@"+consulCatalogV1) + "'s " + g.Middleware
		}
		lines = append(lines, provision.Proof{Gate: &gates[i], Line: fmt.Sprintf("%s: %s gated by %s (%s) in %s",
			b.name(), g.Where(), by, rows, time.Since(start).Round(100*time.Millisecond))})
	}
	for _, r := range removed.of(st) {
		lines = append(lines, provision.Proof{Line: fmt.Sprintf("%s: the router %s of a removed frontend is no longer served", b.name(), r)})
	}
	if ex := exposure(st.Version); ex != "" {
		lines = append(lines, provision.Proof{Line: fmt.Sprintf("%s: %s is exposed to %s", b.name(), st.Server(), ex)})
	}
	return lines, diags
}

// proven: every gate is gated.
func proven(gates []plans.Gate) bool {
	return !slices.ContainsFunc(gates, func(g plans.Gate) bool { return g.Status != plans.Gated })
}

// unproven turns what the last read showed, when the wait ran out, into
// one error per path that is not gated and per removed router still
// served, at the declaration concerned.
func (b *Backend) unproven(gates []plans.Gate, gone, unserved []string, readErr error) hcl.Diagnostics {
	var diags hcl.Diagnostics
	if readErr != nil {
		return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Gate not proven", Subject: b.proxy.APIRange.Ptr(), Context: b.proxy.DeclRange.Ptr(), Extra: provision.Unproven{Proxy: b.name()},
			Detail: fmt.Sprintf("%s could not be read within -verify-timeout=%s: %s. What was applied is live in Consul; whether the proxy gates it is not known.", b.name(), b.wait, readErr)}}
	}
	for i, g := range gates {
		var detail string
		switch g.Status {
		case plans.Gated:
			continue
		case plans.Ungated:
			detail = ungated(g)
		default:
			detail = fmt.Sprintf("%s does not serve %s: no router of its entrypoint claims it (the catalog not read yet, the service's health check not passing, or a rule the proxy drops).", g.Proxy, g.Where())
		}
		diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Gate not proven", Subject: b.frontOf(i).At.Ptr(), Extra: provision.Unproven{Proxy: b.name()},
			Detail: detail + fmt.Sprintf(" This is what the proxy showed after -verify-timeout=%s.", b.wait)})
	}
	for _, r := range gone {
		diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Removed frontend still served", Subject: b.proxy.DeclRange.Ptr(),
			Detail: fmt.Sprintf("%s still serves the router %s of a service this apply removed, after -verify-timeout=%s.", b.name(), r, b.wait)})
	}
	if len(unserved) > 0 && len(diags) == 0 {
		diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Gate not proven", Subject: b.proxy.DeclRange.Ptr(), Extra: provision.Unproven{Proxy: b.name()},
			Detail: fmt.Sprintf("%s has not read what this apply registered within -verify-timeout=%s: it does not list %s. A proof made on what it served before would prove nothing of the new registrations (the catalog not read yet, or the service's health check not passing).",
				b.name(), b.wait, strings.Join(unserved, ", "))})
	}
	return diags
}

// routerNames are routers as each generation names them: a Traefik 1
// frontend after the service, a later router after its tags.
type routerNames struct{ v1, later []string }

func (r routerNames) of(st *state) []string {
	if st.V1 {
		return r.v1
	}
	return r.later
}

// removed are the routers of the services the plan deletes whose name no
// declared service still has (an instance of a for_each, or a service
// moved to another agent, keeps it), as the proxy names them.
func (b *Backend) removed(p *plans.Plan) routerNames {
	rule := regexp.MustCompile("^" + regexp.QuoteMeta(b.prefix) + `\.http\.routers\.([^.]+)\.rule=`)
	v1 := b.prefix + ".frontend.rule="
	var out routerNames
	for _, c := range p.Changes {
		if c.Action != plans.Delete {
			continue
		}
		name, tags, ok := b.routes.Routed(c, c.Before.JSON())
		if !ok || b.names[name] {
			continue
		}
		for _, t := range tags {
			if m := rule.FindStringSubmatch(t); m != nil {
				out.later = append(out.later, m[1]+"@consulcatalog")
			}
			if f := "frontend-" + name + "@" + consulCatalogV1; strings.HasPrefix(t, v1) && !slices.Contains(out.v1, f) {
				out.v1 = append(out.v1, f)
			}
		}
	}
	return out
}

// applied are the routers the registrations this plan creates or
// updates define, as the proxy names them: the proof waits until it
// lists them all (in any status), so that it never judges a view of the
// catalog from before the apply.
func (b *Backend) applied(p *plans.Plan) routerNames {
	var out routerNames
	for _, c := range p.Changes {
		if c.Action != plans.Create && c.Action != plans.Update {
			continue
		}
		name, tags, ok := b.routes.Routed(c, c.After.JSON())
		if !ok {
			continue
		}
		cfg, err := labels.Decode(b.prefix, tags)
		if err != nil {
			continue // Traefik drops the service: nothing of it to wait for
		}
		for _, r := range cfg.Routers {
			name := r.Name + "@consulcatalog"
			if r.Protocol != labels.HTTP {
				name = string(r.Protocol) + " " + name
			}
			if !slices.Contains(out.later, name) {
				out.later = append(out.later, name)
			}
		}
		if f := "frontend-" + name + "@" + consulCatalogV1; slices.Contains(tags, b.prefix+".enable=true") &&
			slices.ContainsFunc(tags, func(t string) bool { return strings.HasPrefix(t, b.prefix+".frontend.rule=") }) && !slices.Contains(out.v1, f) {
			out.v1 = append(out.v1, f)
		}
	}
	return out
}

// unserved are the routers of applied that the proxy does not list: TCP
// and UDP ones as "tcp name", "udp name".
func (st *state) unserved(applied []string) []string {
	var out []string
	for _, r := range applied {
		list, name := st.Routers, r
		if proto, n, ok := strings.Cut(r, " "); ok {
			list, name = map[string][]router{"tcp": st.TCP, "udp": st.UDP}[proto], n
		}
		if !slices.ContainsFunc(list, func(x router) bool { return x.Name == name }) {
			out = append(out, r)
		}
	}
	return out
}

// left are the routers of removed that the proxy still has.
func (st *state) left(removed []string) []string {
	var out []string
	for _, r := range removed {
		if slices.ContainsFunc(st.Routers, func(x router) bool { return x.Name == r }) {
			out = append(out, r)
		}
	}
	return out
}

// send sends one GET of url with the token given ("" for none) and the
// host, and returns the status and the answer's headers.
func (b *Backend) send(ctx context.Context, url, host, token string) (int, http.Header, error) {
	var code int
	var header http.Header
	err := b.net.Call(ctx, true, func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		if host != "" {
			req.Host = host
		}
		if token != "" {
			req.Header.Set("X-Auth-Token", token)
		}
		resp, err := b.http.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		code, header = resp.StatusCode, resp.Header
		return nil
	})
	return code, header, err
}

// accepted proves the third row of the gate: the path, with the
// frontend's proof token, answers 2xx through the proxy, and the auth
// endpoint's own answer to the token holds every auth response header
// declared (what the proxy copies to the application). No error shows the
// token.
func (b *Backend) accepted(ctx context.Context, g plans.Gate, f Gated) (int, error) {
	code, _, err := b.send(ctx, strings.TrimSuffix(b.proxy.URL, "/")+g.Path, g.Host, f.Token)
	switch {
	case err != nil:
		return 0, fmt.Errorf("the request with the proof token failed: %w", err)
	case code/100 != 2:
		return code, fmt.Errorf("the request with the proof token answered %d, not 200", code)
	}
	if len(f.Headers) == 0 {
		return code, nil
	}
	auth, header, err := b.send(ctx, f.Auth, "", f.Token)
	switch {
	case err != nil:
		return code, headersError{fmt.Sprintf("asking the auth endpoint %s with it failed: %s", f.Auth, err)}
	case auth/100 != 2:
		return code, headersError{fmt.Sprintf("the auth endpoint %s, asked directly, answered it %d", f.Auth, auth)}
	}
	for _, h := range f.Headers {
		if header.Get(h) == "" {
			return code, headersError{fmt.Sprintf("the auth endpoint %s answered it without the header %s that auth_response_headers copies", f.Auth, h)}
		}
	}
	return code, nil
}

// headersError is a proof whose route accepted the token and whose auth
// endpoint, asked for the headers the route copies, did not show them.
type headersError struct{ msg string }

func (e headersError) Error() string { return e.msg }

// probe sends one request for a gate at the proxy's entrypoint, with the
// token given ("" for none), and returns the status. Only the auth
// endpoint's refusal (401 or 403) proves the gate: a 2xx is an open gate,
// a 404 a path not served, anything else (a 502 from a backend that is
// down) proves nothing.
func (b *Backend) probe(ctx context.Context, g plans.Gate, token string) (int, error) {
	code, _, err := b.send(ctx, strings.TrimSuffix(b.proxy.URL, "/")+g.Path, g.Host, token)
	what := "without a token"
	if token != "" {
		what = "with a wrong token"
	}
	switch {
	case err != nil:
		return 0, fmt.Errorf("the request %s failed: %w", what, err)
	case code/100 == 2:
		return code, fmt.Errorf("the gate is open: the request %s answered %d", what, code)
	case code == http.StatusNotFound:
		return code, fmt.Errorf("not served: the request %s answered 404", what)
	case code != http.StatusUnauthorized && code != http.StatusForbidden:
		return code, fmt.Errorf("the request %s answered %d, not the auth endpoint's refusal (401 or 403)", what, code)
	}
	return code, nil
}
