package consul

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision"
	"github.com/provision-dev/provision/provision/adapter"
	"github.com/provision-dev/provision/provision/plans"
	"github.com/provision-dev/provision/schema"
)

const (
	// checksKey is the meta key of the declared checks' digest.
	checksKey   = schema.MetaPrefix + "checks"
	registerAPI = "/v1/agent/service/register"
)

// registration is the body of PUT /v1/agent/service/register, limited to
// what a declaration controls. Its field order is the order on the wire.
type registration struct {
	ID      string            `json:"ID"`
	Name    string            `json:"Name"`
	Tags    []string          `json:"Tags"`
	Address string            `json:"Address,omitempty"`
	Port    int               `json:"Port"`
	Meta    map[string]string `json:"Meta"`
	Checks  []check           `json:"Checks,omitempty"`
}

type check struct {
	CheckID  string `json:"CheckID"`
	Name     string `json:"Name"`
	HTTP     string `json:"HTTP,omitempty"`
	TCP      string `json:"TCP,omitempty"`
	Interval string `json:"Interval"`
	Timeout  string `json:"Timeout,omitempty"`
	// Status is the state a check starts in until it first runs (up to
	// its interval later). Consul's default is critical, and Traefik drops
	// the route of a service with a critical check: a check added to a
	// live gated service would take /api away until then. provision says
	// warning, Consul's word for "not known to be well" that Traefik 2 and
	// 3 still serve; a re-registration keeps a check's current status
	// (Consul restores it from its snapshot of the agent's checks).
	Status string `json:"Status,omitempty"`
}

// initialStatus is the status a check is registered in: see check.Status.
const initialStatus = "warning"

// view is what a plan shows of a registration: the registration without
// its checks, which /v1/agent/services does not return. Checks are
// compared through the digest that the meta carries (a change in the
// spec) and with what GET /v1/agent/checks reports (a change behind
// provision's back).
func (r registration) view() registration {
	r.Checks = nil
	return r
}

// desired is the registration a declared service becomes, its marks
// protected or not.
func desired(project string, p schema.Proxy, s *schema.Service, protected bool) registration {
	r := registration{
		ID:      s.ID,
		Name:    s.Name,
		Tags:    Tags(p, s),
		Address: s.Address,
		Port:    s.Port,
		Meta:    adapter.Marks(project, protected),
	}
	for k, v := range s.Meta {
		r.Meta[k] = v
	}
	for _, c := range s.Checks {
		r.Checks = append(r.Checks, check{
			CheckID:  "service:" + s.ID + ":" + c.Name,
			Name:     c.Name,
			HTTP:     c.HTTP,
			TCP:      c.TCP,
			Interval: c.Interval,
			Timeout:  c.Timeout,
		})
	}
	if len(r.Checks) > 0 {
		// The digest is of the declaration, taken before the initial
		// status (which is no part of it) is set.
		b, _ := json.Marshal(r.Checks)
		sum := sha256.Sum256(b)
		r.Meta[checksKey] = hex.EncodeToString(sum[:8])
	}
	for i := range r.Checks {
		r.Checks[i].Status = initialStatus
	}
	return r
}

// keepIgnored sets, in want, the live values of the fields lc ignores
// (ignore_changes): what the diff then leaves alone and a registration
// carries over. The marks and the checks' digest are never ignored.
func keepIgnored(want *registration, l *agentService, lc schema.Lifecycle) {
	if lc.Ignores("tags") {
		want.Tags = slices.Clone(l.Tags)
	}
	if lc.Ignores("address") {
		want.Address = l.Address
	}
	if lc.Ignores("port") {
		want.Port = l.Port
	}
	keys := map[string]bool{}
	for k := range want.Meta {
		keys[k] = true
	}
	for k := range l.Meta {
		keys[k] = true
	}
	for k := range keys {
		if !ignoredMeta(lc, k) {
			continue
		}
		if v, ok := l.Meta[k]; ok {
			want.Meta[k] = v
		} else {
			delete(want.Meta, k)
		}
	}
}

// ignoringView is a live service less the fields lc ignores: what the
// fingerprint of a saved plan takes of it.
func ignoringView(l *agentService, lc schema.Lifecycle) *agentService {
	if !lc.IgnoreAll && len(lc.Ignore) == 0 {
		return l
	}
	c := *l
	if lc.Ignores("tags") {
		c.Tags = nil
	}
	if lc.Ignores("address") {
		c.Address = ""
	}
	if lc.Ignores("port") {
		c.Port = 0
	}
	c.Meta = maps.Clone(l.Meta)
	maps.DeleteFunc(c.Meta, func(k, _ string) bool { return ignoredMeta(lc, k) })
	return &c
}

// ignoredMeta says whether lc ignores the meta key k: never a mark or the
// checks' digest.
func ignoredMeta(lc schema.Lifecycle, k string) bool {
	return k != checksKey && !slices.Contains(adapter.MarkKeys, k) && lc.Ignores("meta", k)
}

// forgotten is the registration a forget sends: the live one without
// provision's meta (marks and checks' digest). The agent keeps the
// service's checks (no replace-existing-checks).
func forgotten(l *agentService) registration {
	r := live(l)
	r.Meta = adapter.Unmarked(l.Meta)
	delete(r.Meta, checksKey)
	return r
}

// live is a live service in the shape of a registration.
func live(s *agentService) registration {
	return registration{
		ID:      s.ID,
		Name:    s.Service,
		Tags:    append([]string{}, s.Tags...),
		Address: s.Address,
		Port:    s.Port,
		Meta:    s.Meta,
	}
}

// scope is what a backend reads: the project's own services and the
// declared IDs. It is saved in a plan so the same can be read again.
type scope struct {
	Project string   `json:"project"`
	IDs     []string `json:"ids"`
	// Datacenter is where the lock is taken and the services live; empty
	// for the agent's own.
	Datacenter string `json:"datacenter,omitempty"`
	// Agent is the agent block read; empty for Consul's one agent.
	Agent string `json:"agent,omitempty"`
}

func (sc scope) relevant(s *agentService) bool {
	if adapter.OwnerOf(s.Meta) == sc.Project {
		return true
	}
	i := sort.SearchStrings(sc.IDs, s.ID)
	return i < len(sc.IDs) && sc.IDs[i] == s.ID
}

// fingerprint digests the live services within the scope and their
// checks, less the fields their lifecycle blocks ignore (by ID).
func (sc scope) fingerprint(st agentState, lifecycles map[string]schema.Lifecycle) string {
	type entry struct {
		Service *agentService
		Checks  map[string]liveCheck
	}
	var rel []entry
	for _, s := range st.Services {
		if sc.relevant(s) {
			rel = append(rel, entry{ignoringView(s, lifecycles[s.ID]), st.checksOf(s.ID)})
		}
	}
	slices.SortFunc(rel, func(a, b entry) int { return strings.Compare(a.Service.ID, b.Service.ID) })
	return adapter.DigestList(rel)
}

// diff compares the services declared on this agent with the live ones
// and returns the changes in address order. Whose a live service is, and
// what may be done with it, is the engine's decision (adapter.Decide).
func (b *Backend) diff(st agentState, mode plans.Mode) ([]*plans.Change, hcl.Diagnostics) {
	cfg, backend := b.cfg, b.Info().Name
	elsewhere := b.declaredElsewhere()
	var mine []*schema.Service
	declared := map[string]schema.Lifecycle{}
	for _, s := range cfg.Services {
		if b.agent == nil || s.Agent == b.agent.Name {
			mine = append(mine, s)
			declared[s.ID] = s.Lifecycle
		}
	}
	if mode == plans.Destroy {
		mine = nil // destroy removes what the project owns, below
	}
	changes, diags := provision.PlanEach(mine, func(s *schema.Service) (*plans.Change, hcl.Diagnostics) {
		return b.planService(st, s, backend, elsewhere[s.ID])
	})
	for _, id := range sortedIDs(st.Services) {
		l := st.Services[id]
		lc, isDeclared := declared[id]
		if adapter.OwnerOf(l.Meta) != cfg.Project || (isDeclared && mode != plans.Destroy) {
			continue
		}
		addr := plans.Addr{In: b.in, Kind: "service", Name: id}
		if moved := elsewhere[id]; moved != "" && mode != plans.Destroy {
			c := adapter.Removal(addr, backend, adapter.RawJSON(live(l)), deregisterRequest(id))
			c.Because(plans.ReasonMovedAway, "moved to "+moved+", where it is registered first")
			changes = append(changes, c)
			continue
		}
		changes = append(changes, adapter.Let(cfg.Project, mode, adapter.Gone{
			Addr: addr, Backend: backend, Before: adapter.RawJSON(live(l)),
			Delete:    []plans.Request{deregisterRequest(id)},
			Forget:    func() []plans.Request { return []plans.Request{registerRequest(forgotten(l), false)} },
			Protected: lc.Protects(adapter.ProtectedBy(l.Meta)),
			Removed:   cfg.RemovedOf("service", id),
		}))
	}
	return changes, diags
}

// planService is the change of one declared service: none when the
// engine refuses it (the diagnostics say why). moved is the agent it is
// declared on elsewhere, if any.
func (b *Backend) planService(st agentState, s *schema.Service, backend, moved string) (*plans.Change, hcl.Diagnostics) {
	addr := plans.Addr{In: b.in, Kind: "service", Name: s.ID}
	l, lv := liveOf(st.Services, s.ID)
	want := desired(b.cfg.Project, b.cfg.Proxy, s, s.Lifecycle.Protects(lv.Protected))
	if l != nil {
		keepIgnored(&want, l, s.Lifecycle)
	}
	c, diags := adapter.Propose(b.cfg.Project, adapter.Object{
		Declared: adapter.Declared{Addr: addr, Noun: "service", Subject: s.IDRange.Ptr(), Context: s.DeclRange.Ptr(), Import: s.Import.At(), Lifecycle: s.Lifecycle},
		Backend:  backend,
		EachKey:  s.Instance.KeyPtr(),
		After:    adapter.RawJSON(want.view()),
		Live:     lv,
		Create:   func() []plans.Request { return []plans.Request{registerRequest(want, false)} },
		Before:   func() json.RawMessage { return adapter.RawJSON(live(l)) },
		SameView: true,
		Diff:     func(importing bool) adapter.Diff { return b.diffService(st, s, l, want, addr, importing) },
		Mark:     func() []plans.Request { return []plans.Request{registerRequest(want, true)} },
		Imported: "made outside provision; re-registered in place with the ownership marks",
	})
	if c != nil && moved != "" && c.Action == plans.Create {
		c.Because(plans.ReasonMovedHere, "moved here from "+moved+"; deregistered there once registered here")
	}
	return c, diags
}

// diffService compares a live service with its declaration: the fields
// that changed (and, for an import, the request that puts the marks on
// it), or, converged, a registration again on -replace.
func (b *Backend) diffService(st agentState, s *schema.Service, l *agentService, want registration, addr plans.Addr, importing bool) adapter.Diff {
	var d adapter.Diff
	changed := changedFields(live(l), want.view())
	drift := checkDrift(want.Checks, st.checksOf(s.ID))
	if len(drift) > 0 && !slices.Contains(changed, "checks") {
		changed = append(changed, "checks")
	}
	switch {
	case importing:
		// The same ID is registered again: Consul replaces the
		// registration in place, so there is no moment without one.
		if others := slices.DeleteFunc(changed, func(f string) bool { return f == "meta" }); len(others) > 0 {
			d.Reasons = append(d.Reasons, adapter.Reason{Code: plans.ReasonChanged, Words: strings.Join(others, ", ") + " changed"})
		}
		if words, removes := RouterChanges(b.cfg.Proxy.Prefix, l.Tags, want.Tags); words != "" {
			d.Reasons = append(d.Reasons, adapter.Reason{Code: plans.ReasonRouters, Words: words})
			if removes && s.Import != nil && !s.Import.ReplaceRouters {
				d.Conflicts = append(d.Conflicts, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Import changes what the proxy serves",
					Detail:  fmt.Sprintf("Taking over %s would change its tags so that %s: whatever is keyed on the live routers' names (other tags, middlewares chained by name, dashboards and alerts) breaks. Declare the tags as they are (plan -generate-config-out writes them so), or, to accept the change, set replace_routers = true in the import block.", addr, words),
					Subject: s.Import.ToRange.Ptr(), Context: s.DeclRange.Ptr()})
			}
		}
		if have := st.checksOf(s.ID); len(have)+len(want.Checks) > 0 {
			d.Notes = append(d.Notes, importedChecks(have, len(want.Checks)))
		}
	case len(changed) > 0:
		d.Reasons = append(d.Reasons, adapter.Reason{Code: plans.ReasonChanged, Words: strings.Join(changed, ", ") + " changed"})
		d.Notes = append(d.Notes, drift...)
	case b.replace[addr]:
		// The agent keeps the token a service was registered with for
		// its anti-entropy; registering again in place (no deregister,
		// so no moment without it) hands it the current one.
		d.Reasons = append(d.Reasons, adapter.Reason{Code: plans.ReasonReplace, Words: "replaced (-replace): registered again in place, with the current token"})
	default:
		return d
	}
	d.Requests = []plans.Request{registerRequest(want, true)}
	return d
}

// importedChecks says what an import does to the checks made by hand.
func importedChecks(have map[string]liveCheck, declared int) string {
	if len(have) == 0 {
		return fmt.Sprintf("no health check is on the agent; the %d declared are registered", declared)
	}
	return fmt.Sprintf("the health checks on the agent (%s) are replaced by the %d declared", strings.Join(slices.Sorted(maps.Keys(have)), ", "), declared)
}

// declaredElsewhere is, for each service ID declared on another agent
// than this one, that agent's block ("agent.node-b"); empty without agent
// blocks. It is built once per plan: a move is looked up for every create
// and delete.
func (b *Backend) declaredElsewhere() map[string]string {
	out := map[string]string{}
	if b.agent == nil {
		return out
	}
	for _, s := range b.cfg.Services {
		if s.Agent != b.agent.Name {
			out[s.ID] = "agent." + s.Agent
		}
	}
	return out
}

// checksOf returns the live checks of a service, by check ID, in a map
// of the caller's own.
func (st agentState) checksOf(serviceID string) map[string]liveCheck {
	return maps.Clone(st.Checks[serviceID])
}

// checkDrift says how the live checks of a service differ from the
// declared ones, in what the agent reports of them: which exist, their
// names, types, intervals and timeouts (never a URL or an address; an
// edit of those in the spec shows through the digest in the meta).
func checkDrift(want []check, have map[string]liveCheck) []string {
	var out []string
	for _, w := range want {
		h, ok := have[w.CheckID]
		if !ok {
			out = append(out, fmt.Sprintf("check %q is missing on the agent", w.CheckID))
			continue
		}
		delete(have, w.CheckID)
		typ := "http"
		if w.TCP != "" {
			typ = "tcp"
		}
		for _, d := range [][3]string{{"name", h.Name, w.Name}, {"type", h.Type, typ}, {"interval", h.Interval, w.Interval}, {"timeout", h.Timeout, w.Timeout}} {
			if !sameValue(d[0], d[1], d[2]) {
				out = append(out, fmt.Sprintf("check %q: %s is %q on the agent, %q declared", w.CheckID, d[0], d[1], d[2]))
			}
		}
	}
	for _, id := range slices.Sorted(maps.Keys(have)) {
		out = append(out, fmt.Sprintf("check %q is on the agent and not declared", id))
	}
	return out
}

// sameValue compares a check field as the agent reports it with the
// declared one: durations by value ("1m0s" is "60s"), and an undeclared
// timeout matches whatever default the agent reports.
func sameValue(field, have, want string) bool {
	if field != "interval" && field != "timeout" {
		return have == want
	}
	if want == "" {
		return true
	}
	h, herr := time.ParseDuration(have)
	w, werr := time.ParseDuration(want)
	return herr == nil && werr == nil && h == w
}

// changedFields names the fields of want that differ from have.
func changedFields(have, want registration) []string {
	var out []string
	if have.Name != want.Name {
		out = append(out, "name")
	}
	if !slices.Equal(have.Tags, want.Tags) {
		out = append(out, "tags")
	}
	if have.Address != want.Address {
		out = append(out, "address")
	}
	if have.Port != want.Port {
		out = append(out, "port")
	}
	if have.Meta[checksKey] != want.Meta[checksKey] {
		out = append(out, "checks")
	}
	if !maps.Equal(withoutDigest(have.Meta), withoutDigest(want.Meta)) {
		out = append(out, "meta")
	}
	return out
}

// withoutDigest is meta less the checks' digest and the protection,
// which have changes of their own.
func withoutDigest(meta map[string]string) map[string]string {
	m := maps.Clone(meta)
	delete(m, checksKey)
	delete(m, adapter.ProtectedKey)
	return m
}

// liveOf is the live service of that ID and what the ownership decision
// needs to know of it.
func liveOf(services map[string]*agentService, id string) (*agentService, adapter.LiveObject) {
	l, exists := services[id]
	if !exists {
		return nil, adapter.LiveObject{}
	}
	return l, adapter.LiveObject{Exists: true, Owner: adapter.OwnerOf(l.Meta), Protected: adapter.ProtectedBy(l.Meta), What: fmt.Sprintf("a registration named %q", l.Service)}
}

func sortedIDs(services map[string]*agentService) []string {
	ids := make([]string, 0, len(services))
	for id := range services {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

var jsonHeaders = map[string]string{"Accept": "application/json", "Content-Type": "application/json"}

// registerRequest registers r. An update replaces the checks too, so that
// a check removed from the spec goes away.
func registerRequest(r registration, update bool) plans.Request {
	path := registerAPI
	if update {
		path += "?replace-existing-checks=true"
	}
	return plans.Request{Method: "PUT", Path: path, Header: jsonHeaders, Body: adapter.RawJSON(r), Idempotent: true}
}

func deregisterRequest(id string) plans.Request {
	return plans.Request{
		Method: "PUT",
		Path:   "/v1/agent/service/deregister/" + url.PathEscape(id),
		Header: map[string]string{"Accept": "application/json"},
		// Registering and deregistering are idempotent; a deregister that
		// finds nothing is done.
		Idempotent: true,
		GoneOK:     true,
	}
}
