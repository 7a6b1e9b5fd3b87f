package consul

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"

	"github.com/hashicorp/consul/api"
	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision"
	"github.com/provision-dev/provision/provision/adapter"
	"github.com/provision-dev/provision/provision/addrs"
	"github.com/provision-dev/provision/provision/consul/acl"
	"github.com/provision-dev/provision/provision/consul/client"
	"github.com/provision-dev/provision/provision/consul/kv"
	"github.com/provision-dev/provision/provision/parallel"
	"github.com/provision-dev/provision/provision/plans"
	"github.com/provision-dev/provision/provision/traefik/labels"
	"github.com/provision-dev/provision/schema"
)

// Backend is one Consul agent: the one agent of the consul block or
// CONSUL_HTTP_ADDR, or the agent of one node, named by an agent block.
type Backend struct {
	provision.NoCapabilities
	cfg *schema.Config
	declared
	scope scope
	// scopeJSON is scope as Info gives it, encoded once: at 100,000
	// services it is 1.5 MB, and Info is asked for often.
	scopeJSON json.RawMessage
	c         *client.Agent
	// agent is the agent block; nil for the one agent of Consul.
	agent *Agent
	// in qualifies the addresses of this agent's services when several
	// agents are declared ("agent.node-a"); empty otherwise.
	in string
	// locker is true for the agent that also holds the lock and the
	// record: its plan checks that the token may write them.
	locker bool
	// replace are the services to register again even when converged.
	replace map[addrs.Addr]bool
	// w makes its requests: agentAPI, or a nodeAPI for a service of an
	// external node.
	w writer
}

// declared are the service blocks cfg declares (every agent's), and gates
// the requests their gated frontends gate: worked out once for all the
// agents' backends.
type declared struct {
	services []*Decl
	gates    []labels.Gate
	// leftOut are the agents the run leaves out, by place
	// ("agent.node-a").
	leftOut map[string]bool
	// proxy is how frontends become tags.
	proxy Proxy
}

// Options are how an agent is opened.
type Options struct {
	// Deadlines bound every request to the agent (DefaultDeadlines when
	// zero).
	Deadlines adapter.Deadlines
	// Replace are services the plan registers again in place even when
	// they are converged (apply -replace), as after a token rotation.
	Replace []addrs.Addr
	// LeftOut are the agents the run leaves out (-exclude agent.<name>):
	// not opened, and what the project has there left as it is.
	LeftOut []addrs.Addr
	// Getenv reads the run's environment: whether CONSUL_HTTP_ADDR names
	// the cluster's agent. (Consul's API client reads its variables, the
	// same, from the process's environment.) Nil reads none.
	Getenv func(string) string
}

// addrSet says whether the environment names Consul's agent
// (CONSUL_HTTP_ADDR).
func (o Options) addrSet() bool { return o.Getenv != nil && o.Getenv(api.HTTPAddrEnvName) != "" }

// HoldsLock reports whether this agent is also the cluster's: the one
// that holds the project's lock and record (see ClusterAgent).
func (b *Backend) HoldsLock() bool { return b.locker }

var _ provision.Backend = (*Backend)(nil)

// New returns the backends of the agents the specs register services in:
// one per agent block, or, without agent blocks, the one agent of the
// consul block and Consul's environment (CONSUL_HTTP_ADDR,
// CONSUL_HTTP_TOKEN, CONSUL_HTTP_SSL, CONSUL_CACERT, ...; a consul block's
// address wins). None when there is nothing to do in Consul: no agent, no
// service, no consul block and no CONSUL_HTTP_ADDR. Every agent is read
// even when no service names it, so that what the project owns there is
// found and pruned.
func New(cfg *schema.Config, o Options) ([]*Backend, hcl.Diagnostics) {
	diags := leftOut(cfg, o)
	if diags.HasErrors() || !Uses(cfg, o) {
		return nil, diags
	}
	services := Services(cfg)
	d := declared{services: services, gates: gatesOf(services), leftOut: map[string]bool{}, proxy: ProxyOf(cfg)}
	for _, a := range o.LeftOut {
		d.leftOut[a.In] = true
	}
	if len(Agents(cfg)) == 0 {
		b, bdiags := openConfig(cfg, nil, o, d)
		if b == nil {
			return nil, bdiags
		}
		b.locker = true
		return []*Backend{b}, bdiags
	}
	var out []*Backend
	holder := lockHolder(cfg, o)
	for _, a := range Agents(cfg) {
		if d.leftOut[a.place()] {
			continue
		}
		b, bdiags := openConfig(cfg, a, o, d)
		diags = append(diags, bdiags...)
		if b != nil {
			b.locker = a == holder
			out = append(out, b)
		}
	}
	return out, diags
}

// leftOut checks the agents the run leaves out: each an agent block's
// instance, none the one that holds the lock, and says what each leaves
// out.
func leftOut(cfg *schema.Config, o Options) hcl.Diagnostics {
	var diags hcl.Diagnostics
	agents := Agents(cfg)
	for _, l := range o.LeftOut {
		i := slices.IndexFunc(agents, func(a *Agent) bool { return a.place() == l.In })
		if i < 0 {
			var names []string
			for _, a := range agents {
				names = append(names, a.place())
			}
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid -exclude address",
				Detail: fmt.Sprintf("-exclude %s names no agent the specs declare (%s). Nothing was read.", l, cmp.Or(strings.Join(names, ", "), "none is declared"))})
			continue
		}
		a := agents[i]
		if a == lockHolder(cfg, o) {
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "The agent that holds the lock cannot be left out",
				Detail: fmt.Sprintf("%s holds the project's lock and its record (the first agent block, with no consul block address or CONSUL_HTTP_ADDR), so a run cannot go on without it. "+
					"Name the cluster's servers in a consul block (address = ...) so that no one node holds the lock. Nothing was read.", l),
				Subject: a.DeclRange.Ptr()})
			continue
		}
		n := 0
		for _, s := range Services(cfg) {
			if s.Agent == a.Name {
				n++
			}
		}
		diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagWarning, Summary: "Agent left out",
			Detail: fmt.Sprintf("%s at %s is left out (-exclude): it is not read, and none of the services the specs declare on it (%d) is planned, applied or proved; whatever the project has there stays as it is. "+
				"Once its node is back, plan without -exclude.", l, a.Address, n),
			Subject: a.DeclRange.Ptr()})
	}
	return diags
}

// ClusterAgent opens the agent that holds the project's lock and record,
// through which the KV store is reached: the cluster's, as the consul
// block or CONSUL_HTTP_ADDR names it, else the first agent block's.
func ClusterAgent(cfg *schema.Config, o Options) (*client.Agent, hcl.Diagnostics) {
	return agentClient(cfg, lockHolder(cfg, o), o)
}

// Agent is the agent's client, for the roles that share it (the cluster's
// coordination, the KV store).
func (b *Backend) Agent() *client.Agent { return b.c }

// lockHolder is the agent block that holds the project's lock: with no
// other address for the cluster (a consul block's, CONSUL_HTTP_ADDR), the
// first agent of the project's own datacenter; nil when that address
// does.
func lockHolder(cfg *schema.Config, o Options) *Agent {
	if SettingsOf(cfg) != nil && SettingsOf(cfg).Address != "" || o.addrSet() {
		return nil
	}
	for _, a := range Agents(cfg) {
		if a.Consul == "" {
			return a
		}
	}
	return nil
}

// Uses reports whether the specs and the environment name Consul at
// all: an agent, a service, an import of one, a consul block or
// CONSUL_HTTP_ADDR.
func Uses(cfg *schema.Config, o Options) bool {
	return len(Agents(cfg)) > 0 || len(Services(cfg)) > 0 || len(kv.Keys(cfg)) > 0 || len(cfg.ImportsOf(Service, kv.Key)) > 0 || SettingsOf(cfg) != nil || o.addrSet()
}

// agentClient opens the client of the agent a (nil: Consul's one agent)
// with the settings of the specs and the environment.
func agentClient(cfg *schema.Config, a *Agent, o Options) (*client.Agent, hcl.Diagnostics) {
	s := settingsFor(cfg, a)
	conf, where := api.DefaultConfig(), cfg.ProjectRange
	if s != nil {
		where = s.DeclRange
		conf.Address = cmp.Or(s.Address, conf.Address)
		conf.Datacenter = cmp.Or(s.Datacenter, conf.Datacenter)
	}
	name := ""
	if a != nil {
		conf.Address, where, name = a.Address, a.DeclRange, a.Name
	}
	return openClient(conf, name, where, s, o)
}

// DatacenterAgent opens the agent of the consul block s, a datacenter
// with a label: the one that holds the project's lock there and reaches
// its keys.
func DatacenterAgent(s *Settings, o Options) (*client.Agent, hcl.Diagnostics) {
	conf := api.DefaultConfig()
	conf.Address, conf.Datacenter = s.Address, s.Datacenter
	return openClient(conf, "", s.DeclRange, s, o)
}

// openClient opens the client of conf for the agent name ("" for a
// datacenter's own), declared at where in the datacenter of the consul
// block s (nil: none is declared).
func openClient(conf *api.Config, name string, where hcl.Range, s *Settings, o Options) (*client.Agent, hcl.Diagnostics) {
	if conf.Token != "" || conf.TokenFile != "" || conf.HttpAuth != nil {
		if err := adapter.Allowed(conf.Address, o.Getenv); err != nil {
			return nil, hcl.Diagnostics{{
				Severity: hcl.DiagError,
				Summary:  "Server not allowed",
				Detail:   fmt.Sprintf("The Consul agent %s. Add it to %s where it is the team's own, or plan without CONSUL_HTTP_TOKEN.", err, adapter.AllowedServersEnv),
				Subject:  where.Ptr(),
			}}
		}
	}
	c, err := client.Open(conf, o.Deadlines.OrDefault(), name, where)
	if err != nil {
		return nil, hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Invalid Consul settings",
			Detail:   fmt.Sprintf("The Consul client cannot be set up: %s.", err),
			Subject:  where.Ptr(),
		}}
	}
	if s != nil && s.Name != "" {
		c.Declares = fmt.Sprintf("the consul %q block", s.Name)
	}
	return c, nil
}

// openConfig opens the backend of the agent a (nil: Consul's one agent):
// its client, and the scope of what it reads.
func openConfig(cfg *schema.Config, a *Agent, o Options, d declared) (*Backend, hcl.Diagnostics) {
	c, diags := agentClient(cfg, a, o)
	if c == nil {
		return nil, diags
	}
	sc := scope{Project: cfg.Project, Datacenter: c.Conf.Datacenter, Agent: c.Name}
	for _, s := range d.services {
		if registers(a, s) {
			sc.IDs = append(sc.IDs, s.Name)
		}
	}
	sort.Strings(sc.IDs)
	b := &Backend{cfg: cfg, declared: d, scope: sc, scopeJSON: adapter.RawJSON(sc), c: c, agent: a, replace: replaced(o), w: agentAPI{}}
	if a != nil && len(Agents(cfg)) > 1 {
		b.in = a.place()
	}
	return b, nil
}

// replaced are the services o registers again in place (-replace).
func replaced(o Options) map[addrs.Addr]bool {
	if len(o.Replace) == 0 {
		return nil
	}
	out := map[addrs.Addr]bool{}
	for _, r := range o.Replace {
		out[r] = true
	}
	return out
}

// Kind is the kind of a Consul agent's backend.
const Kind = client.AgentKind

// DecodeState decodes an agent's state in a snapshot as every agent's
// backend does: it needs no declaration (provision.Snapshot.DecodeEarly).
func DecodeState(dec *json.Decoder) (plans.State, error) { return (&Backend{}).DecodeState(dec) }

// Info names the agent by its base URL; the token is never part of it.
func (b *Backend) Info() plans.BackendInfo {
	name := "consul"
	if b.agent != nil {
		name = "agent." + b.agent.Name
	}
	return plans.BackendInfo{
		Name:    name,
		Kind:    Kind,
		Address: b.c.Address(),
		Scope:   b.scopeJSON,
	}
}

// agentState is what a plan reads of an agent (its State): the services
// in its scope (the project's own and the declared IDs) and their health
// checks, what its answers said of its ACLs and, under default deny, what
// the token may do. The agent's other services are left out: the plan
// never looks at them, and a snapshot of a shared agent then changes only
// when the project's services do.
type agentState struct {
	Services map[string]*agentService `json:"services"`
	// Checks are by service ID, then check ID, so that finding a
	// service's checks does not scan every check of the agent.
	Checks map[string]map[string]liveCheck `json:"checks,omitempty"`
	ACL    acl.State                       `json:"acl"`
	// Routes are the agent's other registrations whose tags route
	// through the proxy (a tag under its prefix): their ID, name and tags,
	// which the plan judges against the gates (gates.go).
	Routes map[string]*agentService `json:"routes,omitempty"`
}

// Server is unnamed: the agent endpoints a plan reads do not say
// Consul's version.
func (agentState) Server() string { return "Consul agent" }

// Known: every agent's answers are alike.
func (agentState) Known() error { return nil }

// DecodeState reads an agent's state from its JSON form, a service at a
// time (provision.DecodeEntries). The services of a project mostly carry
// the same meta (the marks), the same other fields (weights, tagged
// addresses) and many of the same tags, so each distinct one is decoded
// once and shared (storedService): at 100,000 services that is most of
// what a decoded snapshot would hold (docs/internals/performance.md). A
// state is never changed in place (provision.Snapshot), so the sharing
// is safe.
func (b *Backend) DecodeState(dec *json.Decoder) (plans.State, error) {
	var st agentState
	metas, fields := shared[map[string]string]{}, shared[map[string]any]{}
	tags := map[string]string{} // the gate's tags are alike but for their router's name
	services := func(into *map[string]*agentService) error {
		*into = map[string]*agentService{}
		return provision.DecodeEntries(dec, func(id string) error {
			var s storedService
			if err := dec.Decode(&s); err != nil {
				return err
			}
			a := s.agentService
			for i, t := range a.Tags {
				if seen, ok := tags[t]; ok {
					a.Tags[i] = seen
				} else {
					tags[t] = t
				}
			}
			var err error
			if a.Meta, err = metas.decode(s.Meta); err != nil {
				return storedError(id, "Meta", err)
			}
			if a.Fields, err = fields.decode(s.Fields); err != nil {
				return storedError(id, "Fields", err)
			}
			(*into)[id] = &a
			return nil
		})
	}
	err := provision.DecodeEntries(dec, func(key string) error {
		switch key {
		case "services":
			return services(&st.Services)
		case "routes":
			return services(&st.Routes)
		case "checks":
			st.Checks = map[string]map[string]liveCheck{}
			return provision.DecodeEntries(dec, func(id string) error {
				var checks map[string]liveCheck
				err := dec.Decode(&checks)
				st.Checks[id] = checks
				return err
			})
		case "acl":
			return dec.Decode(&st.ACL)
		}
		return fmt.Errorf("json: unknown field %q", key)
	})
	if err != nil {
		return nil, err
	}
	if st.Services == nil {
		st.Services = map[string]*agentService{}
	}
	return st, nil
}

// storedService is a service as a snapshot stores it, its meta and
// other fields kept as their JSON until DecodeState decodes them.
type storedService struct {
	agentService
	Meta   json.RawMessage
	Fields json.RawMessage `json:",omitempty"`
}

// storedError is err, the decode of a stored service's field, in words
// (its offset counts in the field's text alone, so the snapshot's
// diagnostic points at the service).
func storedError(id, field string, err error) error {
	return fmt.Errorf("service %q, %s: %s", id, field, strings.TrimPrefix(err.Error(), "json: "))
}

// shared decodes JSON texts into values of type V, each distinct text
// once: the same text gives the same value, which is never to be
// changed.
type shared[V any] map[string]V

func (sh shared[V]) decode(raw json.RawMessage) (V, error) {
	v, ok := sh[string(raw)]
	if ok || len(raw) == 0 {
		return v, nil
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return v, err
	}
	sh[string(raw)] = v
	return v, nil
}

// byService indexes checks, as GET /v1/agent/checks answers them (by
// check ID), by service ID.
func byService(checks map[string]liveCheck) map[string]map[string]liveCheck {
	out := map[string]map[string]liveCheck{}
	for id, c := range checks {
		if out[c.ServiceID] == nil {
			out[c.ServiceID] = map[string]liveCheck{}
		}
		out[c.ServiceID][id] = c
	}
	return out
}

// read makes the two requests a plan makes of an agent, side by side:
// GET /v1/agent/services and GET /v1/agent/checks.
func (b *Backend) read(ctx context.Context) (agentState, error) {
	var st agentState
	var reported map[string]*reportedService
	var checks map[string]liveCheck
	errs := make([]error, 2)
	headers := make([]http.Header, 2)
	parallel.Do(2, 2, func(i int) {
		errs[i] = b.c.Net.Call(ctx, true, func(ctx context.Context) error {
			var err error
			if i == 0 {
				reported, headers[i], err = client.GetObject[*reportedService](ctx, b.c, "/v1/agent/services")
			} else {
				checks, headers[i], err = client.GetObject[liveCheck](ctx, b.c, "/v1/agent/checks")
			}
			return err
		})
	})
	for i, path := range []string{"/v1/agent/services", "/v1/agent/checks"} {
		if errs[i] != nil {
			return agentState{}, fmt.Errorf("reading %s%s: %w", b.c.Address(), path, errs[i])
		}
	}
	services, err := services(reported)
	if err != nil {
		return agentState{}, fmt.Errorf("reading %s/v1/agent/services: %w", b.c.Address(), err)
	}
	st.Services, st.Checks = services, byService(checks)
	for _, h := range headers {
		st.ACL.Read(h)
	}
	return st, nil
}

// Read reads the agent: its services and checks within the scope and,
// where the ACLs deny by default, whether the token may write what a plan
// of these specs can write (one authorize request per 64 permissions,
// after GET /v1/agent/self on the agent that holds the lock).
func (b *Backend) Read(ctx context.Context, _ plans.Mode) (plans.State, hcl.Diagnostics) {
	st, err := b.read(ctx)
	if err != nil {
		return nil, hcl.Diagnostics{b.c.Unreadable(err)}
	}
	if st.ACL.Deny && b.c.Conf.Token == "" {
		return nil, hcl.Diagnostics{b.c.NoToken()}
	}
	dc := b.inDatacenter(ctx)
	if dc.HasErrors() {
		return nil, dc
	}
	gated := len(b.gates) > 0
	for id, s := range st.Services {
		if !b.scope.relevant(s) && !b.scope.relevantSidecar(st.Services, s) {
			if gated {
				b.keepRoute(&st, s)
			}
			delete(st.Services, id)
		}
	}
	for id := range st.Checks {
		if st.Services[id] == nil {
			delete(st.Checks, id)
		}
	}
	if st.ACL.Deny {
		if b.locker {
			st.ACL.Node, _ = b.c.NodeName(ctx) // without agent:read, the session is checked when the lock is taken
		}
		st.ACL.Allowed, st.ACL.Unchecked = acl.Ask(ctx, b.c, b.writable(st))
	}
	return st, dc
}

// inDatacenter checks that the agent is in the datacenter its consul
// block declares (client.InDatacenter): one of another datacenter is an
// error naming both, one whose datacenter cannot be read a warning; nil
// when it is in it, or no datacenter is declared.
func (b *Backend) inDatacenter(ctx context.Context) hcl.Diagnostics {
	settings := settingsFor(b.cfg, b.agent)
	if settings == nil {
		return nil
	}
	return b.c.Datacenter(ctx, settings.Datacenter)
}

// Plan gives the engine the services of the agent's state, as read, and
// of the declarations on it.
func (b *Backend) Plan(st plans.State, _ plans.Mode) (provision.Planning, hcl.Diagnostics) {
	as := st.(agentState)
	lifecycles := map[string]schema.Lifecycle{}
	for _, s := range b.services {
		lifecycles[s.Name] = s.Lifecycle
	}
	sc := b.scope
	return provision.Planning{
		Kinds:   provision.Kinds(b.objects(as)),
		Project: b.cfg.Project,
		Removed: b.cfg.Removed,
		Planned: plans.Planned{Fingerprint: plans.DigestWhenRead(func() string { return sc.fingerprint(as, lifecycles) })},
		Finish:  func(*plans.Planned, bool) hcl.Diagnostics { return b.judgeRoutes(as) },
	}, b.aclDiagnostics(as)
}

// Send performs one planned request, adding the ACL token from the
// environment. What the plan decided of it holds: an idempotent request
// (a register, a deregister) is retried on a refused or reset connection
// and a 5xx answer, and a 404 to a request whose goal that is (a
// deregister) is done. Consul answers errors in plain text, which the
// error quotes.
func (b *Backend) Send(ctx context.Context, r plans.Request) error {
	_, err := b.c.Sender().Send(ctx, r, 4096)
	return err
}
