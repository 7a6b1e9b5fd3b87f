// Package run is one provision run, in the engine. Every command that
// reads specs (plan, apply DIR, apply PLANFILE, destroy, validate,
// policy, graph, snapshot, pull, and each run of provision test) is an
// Operation: a fixed sequence of named phases
// (Phase, in order: load, open, check permissions, lock, read, diff,
// check saved, confirm, send, record, verify, and the makes of the
// commands that make something else than a plan), each of which returns its
// outcome (diagnostics; an error stops the run there), and of which each
// type of operation runs its own (phases). What each phase does, and which
// commands run it, is the table of docs/internals/architecture.md: no
// live system is asked anything before read, so specs that fail to load
// send no request. The CLI parses flags into an Operation, picks a View,
// and reads the Run's outcome; it never opens a backend or prints. A
// feature adds a phase here, or a View's PostPhase after one.
package run

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision"
	"github.com/provision-dev/provision/provision/adapter"
	"github.com/provision-dev/provision/provision/addrs"
	"github.com/provision-dev/provision/provision/connect"
	"github.com/provision-dev/provision/provision/plans"
	"github.com/provision-dev/provision/provision/policies"
	"github.com/provision-dev/provision/provision/pull"
	"github.com/provision-dev/provision/schema"
)

// DefaultVerifyTimeout bounds, by default, how long an apply waits for
// each declared proxy to serve the declared gates: Traefik's Consul
// catalog provider picks a change up within its refresh interval (15 s by
// default) plus a health check.
const DefaultVerifyTimeout = 30 * time.Second

// Type is what an operation is for.
type Type int

const (
	// Validate loads the specs offline.
	Validate Type = iota
	// Plan reads the live state and plans; nothing is sent.
	Plan
	// Apply plans the specs under the lock and applies the plan.
	Apply
	// ApplySaved applies a saved plan after making it again exactly as
	// plan made it and holding it against the file.
	ApplySaved
	// Destroy deletes what the project owns.
	Destroy
	// Policy makes the least-privilege Consul ACL policy of the specs.
	Policy
	// Snapshot reads the live state, as a plan does, to record it.
	Snapshot
	// Pull plans the whole specs and works out (and checks) the rewrites
	// of the specs that bring what people changed on owned objects back
	// into them; Targets and Excludes select what is pulled.
	Pull
	// History reads the project's history of applies from the cluster.
	History
)

var typeNames = [...]string{"validate", "plan", "apply", "apply", "destroy", "policy", "snapshot", "pull", "history"}

// String is the command that runs the operation.
func (t Type) String() string { return typeNames[t] }

// Phase names a step of a run.
type Phase int

// The phases, in the order a run takes them, each printed as it is named
// ("check permissions", "diff"). Read reads every backend once; Diff
// plans from what was read, with no I/O, and shows the plan (a saved
// plan's run shows it in CheckSaved instead, once it is held against the
// file); Send sends its requests. They are named apart from the types
// Plan and Apply, the commands that run them.
const (
	Load Phase = iota
	Open
	CheckPermissions
	Lock
	Read
	Diff
	CheckSaved
	Confirm
	Send
	Record
	Verify
	// MakeConfig writes the declarations of the undeclared imports of a
	// plan -generate-config-out and loads and opens the specs again with
	// them (a plan without it skips it); MakePolicy makes the ACL policy
	// (Policy); MakePull works out and checks the rewrites of
	// a pull (Pull); ReadHistory reads the project's history of applies
	// (History).
	MakeConfig
	MakePolicy
	MakePull
	ReadHistory
)

var phaseNames = [...]string{"load", "open", "check permissions", "lock", "read", "diff", "check saved", "confirm", "send", "record", "verify", "make config", "make policy", "make pull", "read history"}

func (p Phase) String() string { return phaseNames[p] }

// phases are the phases of each type of operation, in order.
var phases = map[Type][]Phase{
	Validate:   {Load},
	Plan:       {Load, Open, MakeConfig, Read, Diff},
	Apply:      {Load, Open, CheckPermissions, Lock, Read, Diff, Confirm, Send, Record, Verify},
	ApplySaved: {Load, Open, CheckPermissions, Lock, Read, Diff, CheckSaved, Send, Record, Verify},
	Destroy:    {Load, Open, CheckPermissions, Lock, Read, Diff, Confirm, Send, Record, Verify},
	Policy:     {Load, Open, MakePolicy},
	Snapshot:   {Load, Open, Read},
	Pull:       {Load, Open, Read, Diff, MakePull},
	History:    {Load, Open, ReadHistory},
}

// Operation is a run as the flags and the environment describe it. The
// environment is read through Getenv and Environ only (but Consul's own
// variables, CONSUL_HTTP_ADDR and the rest, which its API client reads
// each time an agent is opened).
type Operation struct {
	Type Type
	// Language is what the specs may declare: the kinds and places the
	// binary knows (its main's). Backends open those of its kinds that
	// provision/connect does not know.
	Language *schema.Language
	Backends []connect.Opener
	// Dir is the specs' directory (or one .hcl file). ApplySaved takes it
	// from the saved plan.
	Dir string
	// PlanFile is the saved plan ApplySaved applies.
	PlanFile string
	// GenerateConfigOut is the new spec file a plan writes the
	// declarations of the objects that import blocks name and no block
	// declares to, and then reads beside Dir's (-generate-config-out): it
	// must not exist.
	GenerateConfigOut string
	Vars, VarFiles    []string
	Getenv            func(string) string
	Environ           func() []string
	Deadlines         adapter.Deadlines
	// DestroyPlan makes a Plan one of destroy: it removes what the
	// project owns (plan -destroy).
	DestroyPlan bool
	// Remove is what the run removes of the data a backend keeps unless
	// asked, by the name of the backend's option (connect.RemoveIndices:
	// -indices, -prune-indices), handed to the backends as they open and
	// recorded by a destroy plan.
	Remove plans.Removal
	// Replace, Targets and Excludes are the addresses the flags give:
	// written with or without their module and place, as a person writes
	// them (-replace service.web), resolved against the specs.
	Replace, Targets, Excludes []addrs.Addr
	// VerifyTimeout bounds the proof through the declared proxies.
	VerifyTimeout time.Duration
	// Lock holds the project's lock while sending; LockTimeout is how long
	// to wait for it.
	Lock        bool
	LockTimeout time.Duration
	Parallelism int
	// AutoApprove sends without asking; otherwise the view must be an
	// Asker. NoInput (-input=false) refuses at once what would ask.
	AutoApprove bool
	NoInput     bool
	// Node is the lock's node for Policy when it cannot be looked up.
	Node string
	// Watch adds to Policy what provision watch needs.
	Watch bool
	// Applied are the entries the record phase adds to the project's
	// history once an apply completes (apply -record), their time its.
	Applied []plans.Applied
	// From, when set, is the recorded live state a plan is made from
	// instead of reading: nothing is read or sent.
	From *provision.Snapshot
	// Policies are the folders (or files) of the policies the run's plan
	// is held to (-policies, PROVISION_POLICIES), loaded with the specs;
	// PolicyKinds are what they see of each kind of object, and
	// PolicyOverrides the mandatory_overridable policies whose failures
	// an owner let through (-policy-override <kind>.<name>).
	Policies        []string
	PolicyKinds     []policies.Kind
	PolicyOverrides []string
	// Specs, when set, are the specs already loaded (a watcher loads them
	// once per change of the files, not once per run): load takes them
	// instead of reading Dir.
	Specs *Specs
}

// Specs are loaded specs: the parser that holds their sources, for
// diagnostics, and the configuration.
type Specs struct {
	Parser *schema.Parser
	Config *schema.Config
}

// LoadSpecs loads the specs of dir, in lang, as a run's load phase does.
func LoadSpecs(lang *schema.Language, dir string, vars, varFiles, env []string) (*Specs, hcl.Diagnostics) {
	p := schema.NewParser(lang)
	cfg, diags := p.LoadDir(dir, schema.Inputs{Vars: vars, VarFiles: varFiles, Env: env})
	return &Specs{Parser: p, Config: cfg}, diags
}

// View is where a run reports as it goes: the one interface through
// which everything a run says reaches the CLI's human and JSON renderings
// and the watcher's log (as Terraform's views implement its
// terraform.Hook). Its methods are called from the run's goroutine, in
// order; a view with nothing to say of an apply, or nothing to do after a
// phase, embeds Silent.
type View interface {
	// Loaded gives the sources that diagnostics quote and the values that
	// no output may show.
	Loaded(files map[string]*hcl.File, secrets []string)
	// Diagnostics reports warnings as they arise and, at the end of a
	// failed run, what stopped it.
	Diagnostics(diags hcl.Diagnostics)
	// Plan shows the plan and the warnings it was made with.
	Plan(p *plans.Plan, warnings hcl.Diagnostics)
	// Progress is each event of an apply's requests, as it happens.
	Progress(p Progress)
	// Verified is each proof after an apply.
	Verified(v provision.Verified)
	// Result reports the end of an apply; failures reach it as
	// diagnostics whose range is the declaration that caused them.
	Result(p *plans.Plan, res provision.Result, diags hcl.Diagnostics)
	// PostPhase runs after each phase that did not fail (plan -out saves
	// the plan after diff); an error diagnostic it returns stops the run
	// there, as the phase's own would.
	PostPhase(ctx context.Context, ph Phase, r *Run) hcl.Diagnostics
}

// Silent is the part of a View that says nothing of an apply and does
// nothing after a phase: a view of the commands that send nothing embeds
// it.
type Silent struct{}

func (Silent) Progress(Progress)                                      {}
func (Silent) Verified(provision.Verified)                            {}
func (Silent) Result(*plans.Plan, provision.Result, hcl.Diagnostics)  {}
func (Silent) PostPhase(context.Context, Phase, *Run) hcl.Diagnostics { return nil }

// Progress is one event of an apply with the count of requests done.
type Progress struct {
	provision.Event
	Done, Total int
}

// Asker is a view that can ask a person to approve a plan.
type Asker interface {
	Confirm(ctx context.Context, p *plans.Plan) bool
}

// Run is an operation under way or done: what each phase found.
type Run struct {
	Operation
	view View
	// slowed is the warning that a server asked to slow down while it was
	// read or the lock was taken (the apply's waits are its progress),
	// said once, after the phase.
	slowed slowDown
	// Saved is the saved plan of ApplySaved.
	Saved  *plans.Plan
	Config *schema.Config
	parser *schema.Parser
	// Opened are the backends and the cluster's agent.
	Opened connect.Opened
	// Live is the live state the plan is made from; nil before Read.
	Live *plans.Live
	// replace are the -replace addresses, each the full address of the
	// declared object it names (resolve).
	replace []addrs.Addr
	// leftOut are the agents the run leaves out (-exclude agent.<name>,
	// or the saved plan's).
	leftOut []addrs.Addr
	// partial: the apply sends part of what the specs plan (-target,
	// -exclude, or a saved plan made so).
	partial bool
	// policies are the loaded Policies, read with policyParser; nil
	// without.
	policies     *policies.Set
	policyParser *schema.Parser
	// Plan is the plan made now; nil before Diff.
	Plan     *plans.Plan
	Warnings hcl.Diagnostics
	// PolicyFailures are the errors of the mandatory policies a Plan
	// failed: the plan is made, shown and saved, and the command fails
	// (any other run stops at Diff).
	PolicyFailures hcl.Diagnostics
	Result         provision.Result
	// Generated are the generated declarations (nil: nothing to
	// generate), GeneratedFile the file they were written to ("" before);
	// Policy is the policy made.
	Generated     []byte
	GeneratedFile string
	Policy        connect.Policy
	// Pulled are the checked rewrites of a pull.
	Pulled *pull.Result
	// History is the project's history of applies, oldest first
	// (History).
	History []plans.Applied
	// Ran are the phases run, in order, the last one the one that stopped
	// the run when it failed.
	Ran    []Phase
	failed bool
	unlock func()
}

// Failed reports whether the run stopped on an error.
func (r *Run) Failed() bool { return r.failed }

// Start runs the operation to its end, or to the first phase that fails,
// reporting to v.
func (o Operation) Start(ctx context.Context, v View) *Run {
	r := &Run{Operation: o, view: v}
	if o.Getenv == nil {
		r.Getenv = func(string) string { return "" }
	}
	if o.Environ == nil {
		r.Environ = func() []string { return nil }
	}
	defer func() {
		if r.unlock != nil {
			r.unlock()
		}
	}()
	if _, ok := v.(Asker); !ok && r.asks() {
		r.fail(Refusal("Confirmation needed", fmt.Sprintf("%s -json needs -auto-approve: a JSON stream cannot ask for confirmation.", o.Type), nil))
		return r
	}
	if o.NoInput && r.asks() { // refused before anything is read or locked
		plan := "plan -out=FILE"
		if o.Type == Destroy {
			plan = "plan -destroy -out=FILE"
		}
		r.fail(Refusal("Confirmation needed", fmt.Sprintf("%s needs confirmation, and -input=false forbids asking. Pass -auto-approve, or save a reviewed plan with %s and apply that file. Nothing was sent.", o.Type, plan), nil))
		return r
	}
	ctx = adapter.Waiting(ctx, r.slowed.told)
	for _, ph := range phases[o.Type] {
		if r.skips(ph) {
			continue
		}
		r.Ran = append(r.Ran, ph)
		var diags hcl.Diagnostics
		if ph == Lock {
			ctx, diags = r.lock(ctx)
		} else {
			diags = r.step(ctx, ph)
		}
		if !diags.HasErrors() {
			diags = append(diags, v.PostPhase(ctx, ph, r)...)
		}
		if diags.HasErrors() {
			r.fail(slices.DeleteFunc(diags, func(d *hcl.Diagnostic) bool { _, ok := d.Extra.(shownAlready); return ok }))
			return r
		}
		r.Warnings = append(append(r.Warnings, diags...), r.slowed.warning()...)
	}
	return r
}

// slowDown keeps the first slow-down a server answered, from the reads'
// goroutines, for one warning.
type slowDown struct {
	mu    sync.Mutex
	first error
	said  bool
}

func (s *slowDown) told(_ time.Duration, why error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.first == nil {
		s.first = why
	}
}

// warning is the warning of the first slow-down, once.
func (s *slowDown) warning() hcl.Diagnostics {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.first == nil || s.said {
		return nil
	}
	s.said = true
	return hcl.Diagnostics{{Severity: hcl.DiagWarning, Summary: "A server limits its request rate",
		Detail: fmt.Sprintf("%s. provision waited and asked again, as the server's Retry-After or a back-off of up to 10 s allowed, so this run took longer; nothing failed. Lower -parallelism when many runs share the server's limit.", s.first)}}
}

// asks reports whether the run asks for approval before sending.
func (r *Run) asks() bool {
	return (r.Type == Apply || r.Type == Destroy) && !r.AutoApprove
}

// fail ends the run with diags and the warnings not shown yet.
func (r *Run) fail(diags hcl.Diagnostics) {
	r.failed = true
	if all := append(r.Warnings, diags...); len(all) > 0 {
		r.view.Diagnostics(all)
	}
}

// shownAlready is the Extra of the error a phase returns for a failure
// its view has shown already (a plan not confirmed, a request that
// failed): it stops the run and is not shown again.
type shownAlready struct{}

// shown is that error; why is for a program that looks.
func shown(why string) hcl.Diagnostics {
	return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: why, Extra: shownAlready{}}}
}

// Refusal is a run's (or a command's) own refusal to go on, as one error
// diagnostic, with its range when it has one.
func Refusal(summary, detail string, at *hcl.Range) hcl.Diagnostics {
	return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: summary, Detail: detail, Subject: at}}
}
