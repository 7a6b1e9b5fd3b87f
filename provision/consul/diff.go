package consul

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision"
	"github.com/provision-dev/provision/provision/adapter"
	"github.com/provision-dev/provision/provision/addrs"
	"github.com/provision-dev/provision/provision/plans"
	"github.com/provision-dev/provision/schema"
)

const (
	// checksKey is the meta key of the declared checks' digest.
	checksKey = schema.MetaPrefix + "checks"
	// checkIDsKey is the meta key of the IDs of the declared checks that
	// a check_id names (sorted, comma-separated): with those of the form
	// service:<id>:<check name>, the checks provision wrote, which it
	// removes once they are declared no more. Absent when no check_id is
	// declared.
	checkIDsKey          = schema.MetaPrefix + "check-ids"
	registerAPI          = "/v1/agent/service/register"
	serviceDeregisterAPI = "/v1/agent/service/deregister/"
	checkDeregisterAPI   = "/v1/agent/check/deregister/"
)

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
func desired(project string, p Proxy, s *Decl, protected bool) registration {
	r := registration{
		ID:      s.Name,
		Name:    s.Service,
		Tags:    Tags(p, s),
		Address: s.Address,
		Port:    s.Port,
		Meta:    adapter.Marks(project, protected),
	}
	for k, v := range s.Meta {
		r.Meta[k] = v
	}
	r.Fields = s.Fields
	var named []string
	for _, c := range s.Checks {
		id := checkID(s.Name, c.Name)
		if given, ok := c.Def["CheckID"].(string); ok {
			id = given
			named = append(named, id)
		}
		r.Checks = append(r.Checks, check{CheckID: id, Name: c.Name, Def: c.Def})
	}
	if len(named) > 0 {
		slices.Sort(named)
		r.Meta[checkIDsKey] = strings.Join(named, ",")
	}
	if len(r.Checks) > 0 {
		// The digest is of the declaration, taken before the initial
		// status (which is no part of it) is set.
		b, _ := json.Marshal(r.Checks)
		sum := sha256.Sum256(b)
		r.Meta[checksKey] = hex.EncodeToString(sum[:8])
	}
	for i, c := range r.Checks {
		if c.Def["Status"] == nil {
			r.Checks[i].Status = initialStatus
		}
	}
	return r
}

// keepLive sets, in want, the live values of what the declaration leaves
// out of the registration's other fields, and of what it declares as it
// is live (defaults the agent fills in included): a registration replaces
// the service's definition whole, so an update that left them out would
// reset what a person or a tool set beside the declaration. An object
// declared in part keeps the live values of the rest (weights: 1 when the
// agent's default). have is withDefaults(l), worked out once for this
// and changedFields; nil when the declaration has no other fields.
func keepLive(want *registration, l *agentService, have map[string]any) {
	out := maps.Clone(l.Fields)
	if len(want.Fields) == 0 {
		want.Fields = out
		return
	}
	for k, d := range want.Fields {
		if covers(have[k], d) {
			continue
		}
		if dm, ok := d.(map[string]any); ok {
			base := asObject(l.Fields[k])
			if base == nil {
				base = asObject(filled[k])
			}
			d = merged(base, dm)
		}
		if out == nil {
			out = map[string]any{}
		}
		out[k] = d
	}
	want.Fields = out
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
	for _, a := range RegistrationFields {
		if lc.Ignores(a.Name) {
			if v, ok := l.Fields[a.Wire]; ok {
				want.Fields = merged(want.Fields, map[string]any{a.Wire: v})
			} else if want.Fields != nil {
				delete(want.Fields, a.Wire)
			}
		}
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
	c.Fields = maps.Clone(l.Fields)
	for _, a := range RegistrationFields {
		if lc.Ignores(a.Name) {
			delete(c.Fields, a.Wire)
		}
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
	delete(r.Meta, checkIDsKey)
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
		Fields:  s.Fields,
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

// relevantSidecar says whether s is the sidecar proxy of a service in
// the scope, which is read with it.
func (sc scope) relevantSidecar(services map[string]*agentService, s *agentService) bool {
	p := parentOf(services, s)
	return p != nil && sc.relevant(p)
}

// fingerprint digests the live services within the scope and their
// checks, less the fields their lifecycle blocks ignore (by ID).
func (sc scope) fingerprint(st agentState, lifecycles map[string]schema.Lifecycle) string {
	var rel []fingerprinted
	for _, s := range st.Services {
		if sc.relevant(s) {
			rel = append(rel, fingerprinted{ignoringView(s, lifecycles[s.ID]), st.checksOf(s.ID)})
		}
	}
	slices.SortFunc(rel, func(a, b fingerprinted) int { return strings.Compare(a.Service.ID, b.Service.ID) })
	return adapter.DigestList(rel)
}

// fingerprinted is a live service and its checks as the fingerprint
// digests them.
type fingerprinted struct {
	Service *agentService
	Checks  map[string]liveCheck
}

// MarshalJSON is json.Marshal's encoding of e, the service's without
// reflection (a saved plan's fingerprint is the same whichever wrote it).
func (e fingerprinted) MarshalJSON() ([]byte, error) {
	b := append(e.Service.appendJSON([]byte(`{"Service":`)), `,"Checks":`...)
	if e.Checks == nil {
		return append(b, "null}"...), nil // a service's without checks: most of them
	}
	checks, err := json.Marshal(e.Checks)
	return append(append(b, checks...), '}'), err
}

// objects are the services declared on this agent and those the project
// owns on it, as the engine walks them (provision.Objects). A sidecar is
// its service's: planned, and deleted, with it; a service declared on an
// agent the run leaves out stays where it is until that agent is planned
// too (its move would delete it here and register it nowhere).
func (b *Backend) objects(st agentState) provision.Objects {
	elsewhere := b.declaredElsewhere()
	var mine []*Decl
	for _, s := range b.services {
		if registers(b.agent, s) {
			mine = append(mine, s)
		}
	}
	var owned []string
	for _, id := range sortedIDs(st.Services) {
		if l := st.Services[id]; parentOf(st.Services, l) == nil && adapter.OwnerOf(l.Meta) == b.cfg.Project && !b.leftOut[elsewhere[id]] {
			owned = append(owned, id)
		}
	}
	return provision.Objects{
		Kind:     Service,
		Declared: schema.Declarations(mine),
		Owned:    owned,
		Plan:     func(i int) (*plans.Change, hcl.Diagnostics) { return b.planService(st, mine[i]) },
		Gone: func(id string, _ int) provision.Gone {
			l := st.Services[id]
			g := provision.Gone{
				Addr: addrs.Addr{In: b.in, Kind: Service, Name: id}, Before: adapter.RawJSON(live(l)),
				Delete:    []plans.Request{b.w.deregister(id)},
				Forget:    func() []plans.Request { return []plans.Request{b.w.register(forgotten(l), false)} },
				Protected: adapter.ProtectedBy(l.Meta),
			}
			if moved := elsewhere[id]; moved != "" {
				g.Moved = "moved to " + moved + ", where it is registered first"
			}
			return g
		},
	}
}

// registers says whether the agent a (nil: Consul's one agent) registers
// s: the agent it names, or, with no agent block, the one agent, but
// never a service of an external node.
func registers(a *Agent, s *Decl) bool {
	return s.Node == "" && (a == nil || s.Agent == a.Name)
}

// planService is the change of one declared service: none when the
// engine refuses it (the diagnostics say why).
func (b *Backend) planService(st agentState, s *Decl) (*plans.Change, hcl.Diagnostics) {
	addr := addrs.Addr{In: b.in, Kind: Service, Name: s.Name}
	l, lv := liveOf(st.Services, s.Name)
	if parent := parentOf(st.Services, l); parent != nil {
		return nil, hcl.Diagnostics{sidecarDeclared(addr, parent, s.NameRange.Ptr())}
	}
	want := desired(b.cfg.Project, b.proxy, s, s.Lifecycle.Protects(lv.Protected))
	var have map[string]any // withDefaults(l), for keepLive and changedFields
	if l != nil {
		if len(s.Fields) > 0 {
			have = withDefaults(l)
		}
		keepLive(&want, l, have)
		keepIgnored(&want, l, s.Lifecycle)
		if sc := sidecarOf(st.Services, l); sc != nil && sidecarAsDeclared(l, sc, st.Checks[sc.ID], SidecarOf(s.Fields)) {
			// The live sidecar is as declared: the agent keeps it when
			// the body leaves it out, and nothing of it is reset.
			want.Fields = withoutSidecar(want.Fields)
		}
	}
	return adapter.Propose(b.cfg.Project, adapter.Object{
		Declared: adapter.Declared{Addr: addr, Subject: s.NameRange.Ptr(), Context: s.DeclRange.Ptr(), Import: s.Import.At(), Lifecycle: s.Lifecycle},
		EachKey:  s.Instance.KeyPtr(),
		After:    func() json.RawMessage { return adapter.RawJSON(want.view()) },
		Live:     lv,
		Create:   func() []plans.Request { return []plans.Request{b.w.register(want, false)} },
		Before:   func() json.RawMessage { return adapter.RawJSON(live(l)) },
		SameView: true,
		Diff:     func(importing bool) adapter.Diff { return b.diffService(st, s, l, have, want, addr, importing) },
		Mark:     func() []plans.Request { return []plans.Request{b.w.register(want, len(want.Checks) > 0)} },
		Imported: "made outside provision; re-registered in place with the ownership marks",
	})
}

// diffService compares a live service with its declaration: the fields
// that changed (and, for an import, the request that puts the marks on
// it), or, converged, a registration again on -replace.
func (b *Backend) diffService(st agentState, s *Decl, l *agentService, withLive map[string]any, want registration, addr addrs.Addr, importing bool) adapter.Diff {
	var d adapter.Diff
	have := st.checksOf(s.Name)
	mine, others := ownChecks(l, have, want.Checks)
	sidecar := sidecarOf(st.Services, l)
	changed := changedFields(l, sidecar, st, s, withLive, want)
	// A sidecar provision registered with the service (it carries the
	// service's marks) goes when its declaration does: the agent keeps it
	// when the service is registered again without it.
	stale := sidecar != nil && SidecarOf(s.Fields) == nil && adapter.OwnerOf(sidecar.Meta) == b.cfg.Project
	if stale {
		changed = append(changed, "sidecar_service")
	}
	drift := checkDrift(want.Checks, have, mine)
	if len(drift) > 0 && !slices.Contains(changed, "checks") {
		changed = append(changed, "checks")
	}
	switch {
	case importing:
		// The same ID is registered again: Consul replaces the
		// registration in place, so there is no moment without one.
		if others := slices.DeleteFunc(changed, func(f string) bool { return f == "meta" || f == "checks" && len(want.Checks) == 0 }); len(others) > 0 {
			d.Reasons = append(d.Reasons, adapter.Reason{Code: plans.ReasonChanged, Words: strings.Join(others, ", ") + " changed"})
		}
		if words, removes := RouterChanges(b.proxy.Prefix, l.Tags, want.Tags); words != "" {
			d.Reasons = append(d.Reasons, adapter.Reason{Code: plans.ReasonRouters, Words: words})
			if removes && s.Import != nil && !s.Import.ReplaceRouters {
				d.Conflicts = append(d.Conflicts, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Import changes what the proxy serves",
					Detail:  fmt.Sprintf("Taking over %s would change its tags so that %s: whatever is keyed on the live routers' names (other tags, middlewares chained by name, dashboards and alerts) breaks. Declare the tags as they are (plan -generate-config-out writes them so), or, to accept the change, set replace_routers = true in the import block.", addr, words),
					Subject: s.Import.ToRange.Ptr(), Context: s.DeclRange.Ptr()})
			}
		}
		if len(have)+len(want.Checks) > 0 {
			d.Notes = append(d.Notes, importedChecks(have, len(want.Checks)))
		}
		d.Notes = append(d.Notes, keptFields(l, s)...)
		d.Requests = []plans.Request{b.w.register(want, len(want.Checks) > 0)}
		return d
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
	d.Requests = b.updateRequests(want, mine, others)
	d.Notes = append(d.Notes, keptFields(l, s)...)
	if stale {
		d.Requests = append(d.Requests, b.w.deregister(sidecar.ID))
	}
	if len(others) > 0 {
		d.Notes = append(d.Notes, fmt.Sprintf("kept: the health checks on the agent that provision did not write (%s)", strings.Join(others, ", ")))
	}
	return d
}

// keptFields says which of the registration's other fields the live
// service l has and the declaration s leaves out: a registration carries
// them as they are.
func keptFields(l *agentService, s *Decl) []string {
	kept := argNames(RegistrationFields, func(wire string) bool { return l.Fields[wire] != nil && s.Fields[wire] == nil })
	if len(kept) == 0 {
		return nil
	}
	return []string{"kept as they are live, not declared: " + strings.Join(kept, ", ")}
}

// updateRequests register want again. Without checks that provision did
// not write (others), and where a registration can (an agent's), it replaces the service's checks, so
// that a check declared no more goes away with it; with them, it keeps
// the agent's checks, and each check provision wrote (mine) that is
// declared no more is deregistered after it.
func (b *Backend) updateRequests(want registration, mine, others []string) []plans.Request {
	if len(others) == 0 && b.w.replacesChecks() {
		return []plans.Request{b.w.register(want, true)}
	}
	reqs := []plans.Request{b.w.register(want, false)}
	for _, id := range mine {
		if !slices.ContainsFunc(want.Checks, func(c check) bool { return c.CheckID == id }) {
			reqs = append(reqs, b.w.deregisterCheck(id))
		}
	}
	return reqs
}

// checkID is the ID provision gives the check name of the service id when
// no check_id names it: service:<id>:<name>.
func checkID(serviceID, name string) string { return "service:" + serviceID + ":" + name }

// ownChecks splits the live checks of a service into those provision
// wrote (declared now, or named as provision names them: an ID of the
// form service:<id>:<check name>, or one its meta lists) and the others,
// each sorted.
func ownChecks(l *agentService, have map[string]liveCheck, declared []check) (mine, others []string) {
	listed := strings.Split(l.Meta[checkIDsKey], ",")
	prefix := checkID(l.ID, "")
	for _, id := range slices.Sorted(maps.Keys(have)) {
		name, named := strings.CutPrefix(id, prefix)
		if slices.ContainsFunc(declared, func(c check) bool { return c.CheckID == id }) || named && !UnnamedCheck(name) || slices.Contains(listed, id) {
			mine = append(mine, id)
		} else {
			others = append(others, id)
		}
	}
	return mine, others
}

// importedChecks says what an import does to the checks on the agent:
// replaces them with the declared ones, or, when none is declared, keeps
// them as they are (the agent does not report their definitions, so
// provision cannot write them again).
func importedChecks(have map[string]liveCheck, declared int) string {
	ids := strings.Join(slices.Sorted(maps.Keys(have)), ", ")
	switch {
	case len(have) == 0:
		return fmt.Sprintf("no health check is on the agent; the %d declared are registered", declared)
	case declared == 0:
		return fmt.Sprintf("the health checks on the agent (%s) are kept as they are: the specs declare none of this service's checks", ids)
	}
	return fmt.Sprintf("the health checks on the agent (%s) are replaced by the %d declared", ids, declared)
}

// declaredElsewhere is, for each service ID declared on another agent
// than this one, that agent's block ("agent.node-b"), or on an external
// node, that node. It is built once per plan: a move is looked up for every create
// and delete.
func (b *Backend) declaredElsewhere() map[string]string {
	out := map[string]string{}
	for _, s := range b.services {
		switch {
		case s.Node != "":
			out[s.Name] = nodeName(s.Node)
		case b.agent != nil && s.Agent != b.agent.Name:
			out[s.Name] = "agent." + s.Agent
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
// names, types, intervals, timeouts and notes (never a URL, an address or
// a TTL; an edit of those in the spec shows through the digest in the
// meta), and which checks provision wrote (mine) are declared no more.
func checkDrift(want []check, have map[string]liveCheck, mine []string) []string {
	var out []string
	for _, w := range want {
		h, ok := have[w.CheckID]
		if !ok {
			out = append(out, fmt.Sprintf("check %q is missing on the agent", w.CheckID))
			continue
		}
		notes, _ := w.Def["Notes"].(string)
		for _, d := range [][3]string{{"name", h.Name, w.Name}, {"type", h.Type, CheckType(w.Def)}, {"interval", h.Interval, str(w.Def["Interval"])},
			{"timeout", h.Timeout, str(w.Def["Timeout"])}, {"notes", h.Notes, notes}} {
			if !sameValue(d[0], d[1], d[2]) {
				out = append(out, fmt.Sprintf("check %q: %s is %q on the agent, %q declared", w.CheckID, d[0], d[1], d[2]))
			}
		}
	}
	for _, id := range mine {
		if !slices.ContainsFunc(want, func(c check) bool { return c.CheckID == id }) {
			out = append(out, fmt.Sprintf("check %q is on the agent and not declared", id))
		}
	}
	return out
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// sameValue compares a check field as the agent reports it with the
// declared one: durations by value ("1m0s" is "60s"), and an undeclared
// timeout or notes matches whatever the agent reports.
func sameValue(field, have, want string) bool {
	switch {
	case field == "notes":
		return want == "" || have == want
	case field != "interval" && field != "timeout":
		return have == want
	case want == "":
		return true
	}
	h, herr := time.ParseDuration(have)
	w, werr := time.ParseDuration(want)
	return herr == nil && werr == nil && h == w
}

// changedFields names the fields of the declaration s, as want registers
// it, that differ from the live service l: those a service block has
// attributes of, the checks (by their digest), the meta, and the
// registration's other fields the block declares (in their names in a
// spec), compared with what the agent reports of them (withLive, l's
// with its defaults: withDefaults).
func changedFields(l, sidecar *agentService, st agentState, s *Decl, withLive map[string]any, want registration) []string {
	var out []string
	have := live(l)
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
	if !sameMeta(have.Meta, want.Meta) {
		out = append(out, "meta")
	}
	if len(s.Fields) == 0 {
		return out
	}
	fields := withoutSidecar(s.Fields)
	out = append(out, argNames(RegistrationFields, func(wire string) bool {
		d, declared := fields[wire]
		return declared && !covers(withLive[wire], d) && !reflect.DeepEqual(want.Fields[wire], l.Fields[wire])
	})...)
	if sc := SidecarOf(s.Fields); sc != nil && (sidecar == nil || !sidecarAsDeclared(l, sidecar, st.Checks[sidecar.ID], sc)) {
		out = append(out, "sidecar_service")
	}
	return out
}

// sameMeta reports whether the meta a and b are the same but for the
// checks' digest and the protection, which have changes of their own.
func sameMeta(a, b map[string]string) bool {
	own := func(k string) bool { return k == checksKey || k == checkIDsKey || k == adapter.ProtectedKey }
	for k, v := range a {
		if w, ok := b[k]; !own(k) && (!ok || w != v) {
			return false
		}
	}
	for k := range b {
		if _, ok := a[k]; !own(k) && !ok {
			return false
		}
	}
	return true
}

// liveOf is the live service of that ID and what the ownership decision
// needs to know of it.
func liveOf(services map[string]*agentService, id string) (*agentService, adapter.LiveObject) {
	l, exists := services[id]
	if !exists {
		return nil, adapter.LiveObject{}
	}
	return l, adapter.LiveObject{Exists: true, Owner: adapter.OwnerOf(l.Meta), Protected: adapter.ProtectedBy(l.Meta), What: "a registration named " + strconv.Quote(l.Service)}
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

// writer makes the requests that write a service where it lives: through
// its agent (agentAPI), or through the catalog on an external node
// (nodeAPI, external.go).
type writer interface {
	// register registers r; with replaceChecks, its checks replace
	// those there (when replacesChecks), else the checks the body does
	// not name are kept.
	register(r registration, replaceChecks bool) plans.Request
	// deregister removes a service and its checks; deregisterCheck one
	// check.
	deregister(id string) plans.Request
	deregisterCheck(id string) plans.Request
	// replacesChecks: a registration can replace the service's checks;
	// else each check no longer declared is deregistered by itself.
	replacesChecks() bool
}

// agentAPI writes services through their agent.
type agentAPI struct{}

func (agentAPI) register(r registration, replaceChecks bool) plans.Request {
	return registerRequest(r, replaceChecks)
}
func (agentAPI) deregister(id string) plans.Request      { return deregister(serviceDeregisterAPI, id) }
func (agentAPI) deregisterCheck(id string) plans.Request { return deregister(checkDeregisterAPI, id) }
func (agentAPI) replacesChecks() bool                    { return true }

// registerRequest registers r; with replaceChecks, its checks replace
// those on the agent (Consul 1.6.1's replace-existing-checks), else the
// agent keeps the checks the body does not name.
func registerRequest(r registration, replaceChecks bool) plans.Request {
	path := registerAPI
	if replaceChecks {
		path += "?replace-existing-checks=true"
	}
	return plans.Request{Method: "PUT", Path: path, Header: jsonHeaders, Body: adapter.RawJSON(r), Idempotent: true}
}

// deregister is PUT api<id>, a service's or a check's deregistration.
func deregister(api, id string) plans.Request {
	return plans.Request{
		Method: "PUT",
		Path:   api + url.PathEscape(id),
		Header: map[string]string{"Accept": "application/json"},
		// Registering and deregistering are idempotent; a deregister that
		// finds nothing is done.
		Idempotent: true,
		GoneOK:     true,
	}
}
