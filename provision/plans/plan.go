package plans

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision/addrs"
)

// FormatVersion is the version of the plan's JSON form. Its major number
// changes when a field changes meaning or goes away; its minor number when
// fields are added. What each version added is in
// docs/reference/plan-format.md.
const FormatVersion = "3.7"

// Plan is the one model of a plan: what -json prints, what -out saves, and
// what the text view is rendered from.
type Plan struct {
	FormatVersion string `json:"format_version"`
	Project       string `json:"project"`
	// Dir is the spec directory (or file) the plan was made from, as
	// given; applying a saved plan plans it again to check the file.
	Dir      string        `json:"dir,omitempty"`
	Backends []BackendInfo `json:"backends"`
	// Changes are in apply order: deletes last, each group sorted by
	// address; the requests of one change run in the order listed.
	Changes []*Change `json:"changes"`
	Summary Summary   `json:"summary"`
	// Gates are the gated paths of the declared frontends as each declared
	// proxy serves them when the plan is made.
	Gates []Gate `json:"gates,omitempty"`
	// Snapshot is the snapshot the plan was made from, with no network;
	// such a plan is never applied.
	Snapshot *SnapshotSource `json:"snapshot,omitempty"`
	// Sources digest what the plan was made from: a saved plan applies
	// only while they are the same.
	Sources *Sources `json:"sources,omitempty"`
	// Variables are the values of the variables the plan was made with,
	// as Terraform's plan keeps them, but the sensitive ones (never
	// written: they are given again to apply it): apply PLANFILE takes
	// them, so that a plan made with -var needs no -var to apply.
	Variables map[string]Variable `json:"variables,omitempty"`
	// LeftOut are the agents the plan left out (-exclude
	// agent.<name>), which it did not read: apply PLANFILE leaves them out
	// again.
	LeftOut []addrs.Addr `json:"left_out,omitempty"`
	// Destroy, when set, says the plan removes what the project owns
	// (plan -destroy, destroy) instead of converging: apply PLANFILE makes
	// it again so.
	Destroy *Removal `json:"destroy,omitempty"`
	// Diagnostics are the warnings the plan was made with.
	Diagnostics []Diagnostic `json:"diagnostics,omitempty"`
	// Policies are the results of the policies (-policies) on the plan's
	// objects, in the plan's order: one for each enforce block of each
	// policy that judges an object. None without policies.
	Policies []PolicyResult `json:"policy_results,omitempty"`
	// Outputs are the root specs' output blocks, by name.
	Outputs map[string]Output `json:"outputs,omitempty"`
	// Secrets are the values of sensitive variables; Redacted hides them.
	// They are never written.
	Secrets []string `json:"-"`
	// Live is the live state the plan was made from; nil for a plan read
	// from a file.
	Live *Live `json:"-"`
}

// Sources digest what a plan was made from: each file the load read (the
// specs, the modules' specs, the variable files), by its path relative to
// the plan's Dir, and each variable's final value, by name. A sensitive
// variable has no plain digest here (one of a short secret can be
// looked up): Variables keeps a salted, memory-hard one instead.
type Sources struct {
	Files     map[string]string `json:"files"`
	Variables map[string]string `json:"variables,omitempty"`
}

// Moved says what differs between the sources a plan was made from (s)
// and those of now, in a sentence naming each file and variable; "" when
// nothing did.
func (s *Sources) Moved(now *Sources) string {
	var moved []string
	for _, f := range slices.Sorted(maps.Keys(s.Files)) {
		switch d, ok := now.Files[f]; {
		case !ok:
			moved = append(moved, f+" was removed")
		case d != s.Files[f]:
			moved = append(moved, f+" changed")
		}
	}
	for _, f := range slices.Sorted(maps.Keys(now.Files)) {
		if _, ok := s.Files[f]; !ok {
			moved = append(moved, f+" was added")
		}
	}
	for _, v := range slices.Sorted(maps.Keys(s.Variables)) {
		if now.Variables[v] != s.Variables[v] {
			moved = append(moved, "the value of var."+v+" changed")
		}
	}
	for _, v := range slices.Sorted(maps.Keys(now.Variables)) {
		if _, ok := s.Variables[v]; !ok {
			moved = append(moved, "var."+v+" is new")
		}
	}
	return strings.Join(moved, ", ")
}

// Variable is a variable's value in a plan, as Terraform's plan JSON
// writes it; a sensitive one's is never written, only a memory-hard
// digest of it under a salt of its project's and its name's
// ("argon2id:<salt>:<key>"),
// so that apply PLANFILE refuses another value given again.
type Variable struct {
	Value     json.RawMessage `json:"value,omitempty"`
	Sensitive bool            `json:"sensitive,omitempty"`
	Digest    string          `json:"digest,omitempty"`
}

// Output is the value of an output block: JSON, "(sensitive)" for a
// sensitive one.
type Output struct {
	Value     json.RawMessage `json:"value"`
	Sensitive bool            `json:"sensitive,omitempty"`
}

// Summary counts changes by action.
type Summary struct {
	Import int `json:"import"`
	Create int `json:"create"`
	Update int `json:"update"`
	Delete int `json:"delete"`
	Forget int `json:"forget"`
	NoOp   int `json:"no_op"`
}

// HasChanges reports whether applying the plan would send any request.
func (s Summary) HasChanges() bool { return s.Import+s.Create+s.Update+s.Delete+s.Forget > 0 }

// Line is the summary as the text and markdown views print it:
// "1 to import, 0 to create, 1 to update, 0 to delete." (the import and
// forget counts only when there are some, as in Terraform).
func (s Summary) Line() string {
	line := fmt.Sprintf("%d to create, %d to update, %d to delete", s.Create, s.Update, s.Delete)
	if s.Import > 0 {
		line = fmt.Sprintf("%d to import, %s", s.Import, line)
	}
	if s.Forget > 0 {
		line = fmt.Sprintf("%s, %d to forget", line, s.Forget)
	}
	return line + "."
}

// BackendInfo names a backend in a plan and holds what is needed to reach
// it again when a saved plan is applied. It never holds a secret.
type BackendInfo struct {
	Name    string `json:"name"`    // "consul", "search.t1"
	Kind    string `json:"kind"`    // "consul", "search"
	Address string `json:"address"` // the base URL requests are sent to
	// Scope is backend-specific: what the backend reads (the project, the
	// declared objects), so that it can read the same again.
	Scope json.RawMessage `json:"scope,omitempty"`
	// Fingerprint digests the live state the plan was made from; a saved
	// plan is refused when it no longer matches.
	Fingerprint Fingerprint `json:"fingerprint"`
	// Notes are what a person should know of the backend that changes
	// nothing, such as which checks a read-only tribe node leaves open.
	Notes []string `json:"notes,omitempty"`
}

// Change is what the plan does to one object.
//
// Before is the live object as read, in the backend's own terms, and is
// null for Create. After is the object as declared and is null for Delete.
// For Update both are set, and for NoOp they are equal. Only what a
// declaration controls is shown, never fields the server fills in.
type Change struct {
	Addr    addrs.Addr `json:"address"`
	Backend string     `json:"backend"`
	Action  Action     `json:"action"`
	// Reason explains the action to a person; it never drives behaviour.
	// Reasons are its parts' codes, for a program.
	Reason   string       `json:"reason,omitempty"`
	Reasons  []ReasonCode `json:"reasons,omitempty"`
	Before   View         `json:"before"`
	After    View         `json:"after"`
	Requests []Request    `json:"requests"`
	// Notes are things a person should know that change nothing, such as
	// live fields that are not declared and are left alone.
	Notes []string `json:"notes,omitempty"`
	// DeclaredAt is where the object is declared, as the specs were
	// loaded; nil for an object no block declares.
	DeclaredAt *SourceRange `json:"declared_at,omitempty"`
	// RemovableImport is the import block that names the object although
	// the project owns it already: it can be removed.
	RemovableImport *SourceRange `json:"removable_import,omitempty"`
	// EachKey is the for_each key of the instance the change is for, when
	// its block has for_each: the block's lines are every instance's.
	EachKey *string `json:"each_key,omitempty"`
	// Protected: the object is protected from deletion (prevent_destroy,
	// declared or written on the live object); a plan that deletes it is
	// refused.
	Protected bool `json:"protected,omitempty"`
	// Ignored are the attribute paths whose live values the change keeps
	// (lifecycle ignore_changes), as written.
	Ignored []string `json:"ignored,omitempty"`
	// Needs are the objects whose changes must be complete before this
	// one starts: the index a document is written into, the documents it
	// names; for a delete, the deletes of the documents that name it.
	// A need that is not in the plan (nothing to do for it) is met.
	Needs []addrs.Addr `json:"needs,omitempty"`
}

// Request is one HTTP request exactly as it is sent, less the credentials
// that the backend adds at send time from the environment, with what the
// backend decided of it when it planned it.
type Request struct {
	Method string            `json:"method"`
	Path   string            `json:"path"`
	Header map[string]string `json:"header,omitempty"`
	Body   json.RawMessage   `json:"body,omitempty"`
	// Idempotent requests may be sent again when an answer was lost (a
	// refused or reset connection, a 5xx): sending one twice does what
	// sending it once does.
	Idempotent bool `json:"idempotent,omitempty"`
	// GoneOK: a 404 answer means the request's goal is reached (the
	// deregistration of what is already gone, after a lost answer).
	GoneOK bool `json:"gone_ok,omitempty"`
	// Batch makes the request one item of a batch request to Path: Body
	// is a JSON array of the item's parts, and the backend (its SendBatch)
	// sends the items of the changes that are ready together, their parts
	// in one request: Elasticsearch's _bulk, each part a line of its own;
	// Consul's /v1/txn, the parts (operations) in one array.
	Batch bool `json:"batch,omitempty"`
	// Text makes Body a JSON string whose text is the body sent, as is
	// (a Consul KV value, which need not be JSON).
	Text bool `json:"text,omitempty"`
}

// State is what one Read of a backend returned: a plain value whose JSON
// form (encoding/json, map keys sorted) is deterministic and holds no
// secret, which is what a snapshot records.
type State interface {
	// Server names the server that was read and its version, for a
	// person ("Elasticsearch 2.4.1"); "" when the read does not say.
	Server() string
	// Known says whether provision knows how the server it records turns
	// declarations into live objects (the fidelity rules of its version):
	// a snapshot of one it does not know is refused. Nil when it does, or
	// when every version is alike.
	Known() error
}

// Removal is what a run removes of the data a backend keeps unless asked,
// by the name of the backend's option: {"indices": true}, the search
// clusters' indices (they hold data: a plan that converges keeps those no
// longer declared, and a destroy leaves them all, unless asked). A
// destroy plan records it, so that apply PLANFILE removes the same.
type Removal map[string]bool

// Mode says what a plan is for.
type Mode int

const (
	// Converge makes the live state match the declarations.
	Converge Mode = iota
	// Destroy removes what the project owns.
	Destroy
)

// Live is the live state of every backend of a run, as one read of each
// returned it: the value a plan is made from, a snapshot records, and the
// apply's checks look back at.
type Live struct {
	// States are by backend name.
	States map[string]State
	// Record is the cluster's record of the project's agents; nil when
	// there is no cluster.
	Record *Record
}

// Record is what the cluster's record (a Consul key) says of the places
// the project's objects were at its last complete apply, or why it could
// not be read.
type Record struct {
	// Agents are by backend name ("agent.node-a"): their addresses.
	Agents map[string]string `json:"agents,omitempty"`
	Error  string            `json:"error,omitempty"`
	// Refused: the token may not read it.
	Refused bool `json:"refused,omitempty"`
}

// State is the state of the backend named name; nil when l is nil (a
// plan read from a file) or holds none.
func (l *Live) State(name string) State {
	if l == nil {
		return nil
	}
	return l.States[name]
}

// ChangesOf are the changes of one backend that send requests.
func (p *Plan) ChangesOf(backend string) []*Change {
	var out []*Change
	for _, c := range p.Changes {
		if c.Backend == backend && c.Action != NoOp {
			out = append(out, c)
		}
	}
	return out
}

// Sort puts the changes in apply order, deletes after everything else (so
// that a service moved to another agent is registered there before it is
// deregistered here), each group by address, and recounts the summary.
func (p *Plan) Sort() {
	sort.SliceStable(p.Changes, func(i, j int) bool {
		a, b := p.Changes[i], p.Changes[j]
		if (a.Action == Delete) != (b.Action == Delete) {
			return b.Action == Delete
		}
		return a.Addr.Less(b.Addr)
	})
	p.Changes = needsFirst(p.Changes)
	sort.SliceStable(p.Backends, func(i, j int) bool { return p.Backends[i].Name < p.Backends[j].Name })
	p.Summary = Summary{}
	for _, c := range p.Changes {
		switch c.Action {
		case Create:
			p.Summary.Create++
		case Update:
			p.Summary.Update++
		case Delete:
			p.Summary.Delete++
		case Import:
			p.Summary.Import++
		case Forget:
			p.Summary.Forget++
		default:
			p.Summary.NoOp++
		}
	}
}

// DeclRange is where the object is declared, so that a failure of its
// request points at the spec; nil for an object no block declares.
func (c *Change) DeclRange() *hcl.Range { return c.DeclaredAt.Range() }

// needsFirst orders changes so that each comes after the changes it
// needs, and otherwise as they are (a stable topological order). The
// needs form no cycle (the specs refuse one); a need met twice is met.
func needsFirst(changes []*Change) []*Change {
	if !slices.ContainsFunc(changes, func(c *Change) bool { return len(c.Needs) > 0 }) {
		return changes
	}
	at := make(map[addrs.Addr]int, len(changes))
	for i, c := range changes {
		at[c.Addr] = i
	}
	out := make([]*Change, 0, len(changes))
	placed := make([]bool, len(changes))
	var place func(i int)
	place = func(i int) {
		if placed[i] {
			return
		}
		placed[i] = true
		for _, n := range changes[i].Needs {
			if j, ok := at[n]; ok && (changes[j].Action == Delete) == (changes[i].Action == Delete) {
				place(j)
			}
		}
		out = append(out, changes[i])
	}
	for i := range changes {
		place(i)
	}
	return out
}

// GateStatus is how a live proxy serves one path of a gated frontend.
type GateStatus string

const (
	// Gated: served through the frontend's forward-auth middleware, and by
	// no router without it.
	Gated GateStatus = "gated"
	// NotServed: no router of the proxy claims the path (yet).
	NotServed GateStatus = "not_served"
	// Ungated: a router serves the path without the frontend's
	// forward-auth middleware, whoever registered it.
	Ungated GateStatus = "ungated"
	// Unread: the proxy's API could not be read.
	Unread GateStatus = "unread"
)

// Gate is one path of a declared gated frontend as one proxy serves it.
type Gate struct {
	Proxy   string     `json:"proxy"`   // traefik.<name>
	Address addrs.Addr `json:"address"` // the service whose frontend it is
	Path    string     `json:"path"`
	Host    string     `json:"host,omitempty"`
	Status  GateStatus `json:"status"`
	// Router serves the path: the gated one, or, when Ungated, the one
	// that bypasses the gate (with its Rule and Priority).
	Router     string `json:"router,omitempty"`
	Rule       string `json:"rule,omitempty"`
	Priority   int64  `json:"priority,omitempty"`
	Middleware string `json:"middleware,omitempty"`
}

// Where is the gate's path as a person names it: "/hp (Host a.example.com)".
func (g Gate) Where() string {
	if g.Host != "" {
		return g.Path + " (Host " + g.Host + ")"
	}
	return g.Path
}

// PolicyResult is one enforce block of one policy judged on one object.
type PolicyResult struct {
	// Policy is resource_policy "<kind>" "<name>" as <kind>.<name>.
	Policy string `json:"policy"`
	// Range is the enforce block, in its policy file.
	Range SourceRange `json:"range"`
	// Level is the policy's enforcement_level: advisory, mandatory or
	// mandatory_overridable.
	Level     string     `json:"enforcement_level"`
	Address   addrs.Addr `json:"address"`
	Operation string     `json:"operation"` // create, update, delete or no-op
	// Enforce is the enforce block's place in its policy, from 0.
	Enforce int     `json:"enforce_index"`
	Result  Verdict `json:"result"`
	// Message is the error_message of a failure; Info the info_message,
	// when the block has one.
	Message string `json:"error_message,omitempty"`
	Info    string `json:"info_message,omitempty"`
	// Overridden: a mandatory_overridable failure an owner let through.
	Overridden bool `json:"overridden,omitempty"`
}

// Verdict is a policy's result on an object.
type Verdict string

const (
	PolicyPassed Verdict = "pass"
	PolicyFailed Verdict = "fail"
)

// Failed are the results that failed, in order.
func Failed(results []PolicyResult) []PolicyResult {
	var out []PolicyResult
	for _, r := range results {
		if r.Result == PolicyFailed {
			out = append(out, r)
		}
	}
	return out
}

// SnapshotSource is what a plan made from a snapshot says of it.
type SnapshotSource struct {
	// Greenfield: the plan was made against nothing live (a test run
	// without a snapshot).
	Greenfield bool     `json:"greenfield,omitempty"`
	File       string   `json:"file,omitempty"`
	TakenAt    string   `json:"taken_at,omitempty"`
	Servers    []string `json:"servers"` // "search.t1: Elasticsearch 2.4.1 at http://..."
}

// Owned gives the reason of the delete of an object the project owns: in
// destroy mode, that the project owns the object; otherwise that no block
// declares it any more.
func (c *Change) Owned(project string, mode Mode) *Change {
	if mode == Destroy {
		c.Because(ReasonDestroy, "owned by project "+project)
	} else {
		c.Because(ReasonUndeclared, "owned by project "+project+" and no longer declared")
	}
	return c
}

// Planned is what a backend's Plan returns.
type Planned struct {
	Changes []*Change
	// Fingerprint digests what the plan used of the state; a saved plan
	// is refused when it no longer matches.
	Fingerprint Fingerprint
	// Notes go into the backend's BackendInfo.
	Notes []string
	// Gates are how a proxy serves the declared gated frontends.
	Gates []Gate
}
