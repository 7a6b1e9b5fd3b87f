// Package watch is provision watch: the same operation as plan and
// apply, run again whenever the live systems or the specs may have
// changed, to report drift or repair it. It adds only what a loop needs:
// change feeds (Consul's blocking queries on each declared agent, a poll
// of the search clusters and proxies, which have none, and the spec
// files), a buffer that gathers changes that come together, one healer
// per project (a Consul session lock), a limit on repairs of an object
// that something keeps changing back, and metrics. Every plan and every
// repair is a run.Operation with its load, open, lock, read, plan, apply
// and verify.
package watch

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision/adapter"
	"github.com/provision-dev/provision/provision/addrs"
	"github.com/provision-dev/provision/provision/plans"
	"github.com/provision-dev/provision/provision/run"
	"github.com/provision-dev/provision/schema"
)

// Defaults, chosen for the repair time of a deregistered service (the
// bench's "watch: deregistered, registered again" row times it beside the
// blocking query's answer): a blocking query answers as soon as the
// change is made, the buffer waits for quiet, and the repair is one plan.
// consul-terraform-sync buffers 5 s to 20 s; here the
// quiet period is short because a repair is one request, and the cap
// keeps a stream of changes (a deploy) from postponing it for long.
const (
	DefaultBufferMin  = 500 * time.Millisecond
	DefaultBufferMax  = 5 * time.Second
	DefaultInterval   = 30 * time.Second
	DefaultMaxRepairs = 3
	DefaultWindow     = 10 * time.Minute
)

// Options are a watcher's settings; Base is the operation every plan and
// repair starts from (its Dir, variables, environment and deadlines).
type Options struct {
	Base       run.Operation
	Heal       bool
	Interval   time.Duration
	BufferMin  time.Duration
	BufferMax  time.Duration
	MaxRepairs int           // repairs of one object within Window, before it is left alone
	Window     time.Duration // the window of MaxRepairs
	// Log receives one event at a time.
	Log func(Event)
	// Metrics are updated as the loop goes; nil for none.
	Metrics *Metrics
	// Listen is where Run serves /metrics and /healthz; "" for nowhere.
	Listen string
}

// Event is one line of the watcher's log.
type Event struct {
	Time    time.Time `json:"time"`
	Level   string    `json:"level"` // "info", "warn", "error"
	Kind    string    `json:"event"` // "start", "drift", "repair", "fight", ...
	Address string    `json:"address,omitempty"`
	Message string    `json:"message"`
}

// Watcher is one provision watch.
type Watcher struct {
	o     Options
	specs *run.Specs
	// events wake the loop; why says what woke it.
	events chan string
	mu     sync.Mutex
	// repairs are the times each object was repaired, within the window;
	// alone are the objects left alone (a fight), with the live state
	// they were left alone at and why.
	repairs map[string][]time.Time
	alone   map[string]leftAlone
	since   map[string]time.Time // when each drifted object was first seen drifted
	// reported are the diagnostics the last reconcile logged, reporting
	// those of the one under way: one that stays is logged once.
	reported, reporting map[string]bool
	leader              func() bool
	// electionFails: this watcher's part in the election of the healer
	// fails (its token may not write the key), so no watcher may lead.
	electionFails atomic.Bool
	lastGood      time.Time
	// files are the spec files as the last load found them (snapshot).
	files string
	// back: an agent answered again since the last reconcile.
	back bool
}

// New returns a watcher; leader reports whether it may heal (nil: it
// always may).
func New(o Options, leader func() bool) *Watcher {
	if o.Interval <= 0 {
		o.Interval = DefaultInterval
	}
	if o.BufferMin <= 0 {
		o.BufferMin = DefaultBufferMin
	}
	if o.BufferMax < o.BufferMin {
		o.BufferMax = max(DefaultBufferMax, o.BufferMin)
	}
	if o.MaxRepairs <= 0 {
		o.MaxRepairs = DefaultMaxRepairs
	}
	if o.Window <= 0 {
		o.Window = DefaultWindow
	}
	if leader == nil {
		leader = func() bool { return true }
	}
	return &Watcher{o: o, events: make(chan string, 64), repairs: map[string][]time.Time{}, alone: map[string]leftAlone{}, since: map[string]time.Time{}, leader: leader}
}

func (w *Watcher) log(level, kind, addr, format string, args ...any) {
	w.o.Log(Event{Time: time.Now().UTC(), Level: level, Kind: kind, Address: addr, Message: fmt.Sprintf(format, args...)})
}

// Wake asks for a reconcile; why is logged.
func (w *Watcher) Wake(why string) {
	select {
	case w.events <- why:
	default: // one is pending already
	}
}

// config is the specs in force.
func (w *Watcher) config() *schema.Config {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.specs == nil {
		return nil // before the first reconcile
	}
	return w.specs.Config
}

// LastGood is when the last reconcile read every backend.
func (w *Watcher) LastGood() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.lastGood
}

// Once reconciles once with specs (planning, or with Heal applying): the
// run a watch starts with, whose failure ends it.
func (w *Watcher) Once(ctx context.Context, specs *run.Specs) error {
	w.mu.Lock()
	w.specs = specs
	w.mu.Unlock()
	if ok := w.reconcile(ctx, "start"); !ok {
		return fmt.Errorf("the first reconcile failed")
	}
	return nil
}

// Load loads the specs of the watched directory. What its files looked
// like just before is what FollowSpecs compares them with, so that a
// change made while they load is not missed.
func (w *Watcher) Load() (*run.Specs, hcl.Diagnostics) {
	b := w.o.Base
	env := []string(nil)
	if b.Environ != nil {
		env = b.Environ()
	}
	files := snapshot(b.Dir)
	w.mu.Lock()
	w.files = files
	w.mu.Unlock()
	return run.LoadSpecs(b.Language, b.Dir, b.Vars, b.VarFiles, env)
}

// Reload loads the specs again after their files changed: a spec that no
// longer loads is reported, and the last good specs stay in force.
func (w *Watcher) Reload() bool {
	specs, diags := w.Load()
	if diags.HasErrors() {
		w.log("error", "specs", "", "the specs in %s do not load; the last good ones stay in force: %s", w.o.Base.Dir, oneLine(diags))
		return false
	}
	w.mu.Lock()
	w.specs = specs
	w.alone = map[string]leftAlone{} // new specs: every object may be repaired again
	w.mu.Unlock()
	w.log("info", "specs", "", "the specs in %s changed and load", w.o.Base.Dir)
	return true
}

// Loop reconciles after each wake, buffered, until ctx ends.
func (w *Watcher) Loop(ctx context.Context) {
	for {
		var why []string
		select {
		case <-ctx.Done():
			return
		case r := <-w.events:
			why = append(why, r)
		}
		// The buffer: wait for BufferMin of quiet, BufferMax at most.
		first := time.Now()
		quiet := time.NewTimer(w.o.BufferMin)
	gather:
		for {
			select {
			case <-ctx.Done():
				quiet.Stop()
				return
			case r := <-w.events:
				if !slices.Contains(why, r) {
					why = append(why, r)
				}
				quiet.Reset(min(w.o.BufferMin, time.Until(first.Add(w.o.BufferMax))))
			case <-quiet.C:
				break gather
			}
		}
		w.reconcile(ctx, strings.Join(why, ", "))
	}
}

// Jitter is d give or take a tenth, so that watchers of several projects
// do not poll in step.
func Jitter(d time.Duration) time.Duration {
	return d + time.Duration((rand.Float64()-0.5)*0.2*float64(d))
}

// minProof is the least time a quiet poll's proof is given.
const minProof = 5 * time.Second

// prove repeats, on a poll with nothing to repair, the proof of the gates
// through the declared proxies (the accepted token's 200 included) for
// provision_gate_proven: a gate broken behind the specs' back (an auth
// endpoint that now refuses its clients) shows without a change to
// repair. A failure is logged once while it stays. A proxy that the plan
// did not see serve every gate through its middleware is not probed (the
// plan's own warning says so, and the proof would wait out
// -verify-timeout) and counts as unproven; the others are proven.
func (w *Watcher) prove(ctx context.Context, r *run.Run) {
	broken := map[string]bool{}
	for _, g := range r.Plan.Gates {
		broken[g.Proxy] = broken[g.Proxy] || g.Status != plans.Gated
	}
	p := *r.Plan
	p.Gates = nil
	for _, g := range r.Plan.Gates {
		if broken[g.Proxy] {
			w.o.Metrics.unproven(g.Proxy)
		} else {
			p.Gates = append(p.Gates, g)
		}
	}
	if len(p.Gates) == 0 {
		return
	}
	// Not much longer than a poll: a proof waits for what it expects (up
	// to -verify-timeout), and drift that appears meanwhile (a rogue
	// router in front of the gate) is the next poll's to report.
	bound := max(w.o.Interval, minProof)
	bounded, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	proofs, diags := r.Prove(bounded, &p)
	proven := map[string]bool{}
	for _, v := range proofs {
		w.o.Metrics.gate(v)
		if v.Gate != nil && v.Gate.Status == plans.Gated {
			proven[v.Gate.Proxy] = true
		}
	}
	if bounded.Err() != nil && ctx.Err() == nil {
		for _, g := range p.Gates {
			if !proven[g.Proxy] {
				w.o.Metrics.unproven(g.Proxy)
			}
		}
		w.log("info", "proof", "", "the gates were not proven within %s; the next quiet poll proves them again", bound)
		return
	}
	(&view{w: w, secrets: r.Plan.Secrets}).Diagnostics(diags)
}

// reconcile plans; with Heal, as the leader, it applies the plan of what
// drifted, under the lock. It reports whether every backend was read.
func (w *Watcher) reconcile(ctx context.Context, why string) bool {
	w.mu.Lock()
	specs := w.specs
	w.reporting = map[string]bool{}
	w.mu.Unlock()
	defer func() {
		w.mu.Lock()
		w.reported = w.reporting
		w.mu.Unlock()
	}()
	op := w.o.Base
	op.Type, op.Specs = run.Plan, specs
	v := &view{w: w}
	r := op.Start(ctx, v)
	var denied string
	if r.Failed() && why != "start" && len(v.denied) > 0 && v.others == 0 {
		// The token may not write some objects (a permission taken
		// away, or a service added to the specs without one): said once
		// above; the rest is planned and healed without them.
		op.Excludes = append(slices.Clone(op.Excludes), v.denied...)
		denied = "; left out, as the token may not write them: " + strings.Join(addrs.Strings(v.denied), ", ")
		r = op.Start(ctx, &view{w: w})
	}
	if r.Failed() || r.Plan == nil {
		w.o.Metrics.reconciled(false, nil)
		return false
	}
	w.mu.Lock()
	w.lastGood = time.Now()
	back := w.back
	w.back = false
	w.mu.Unlock()
	drifted := w.drifted(r.Plan)
	w.o.Metrics.reconciled(true, r.Plan)
	if len(drifted) == 0 {
		w.log("info", "converged", "", "no drift (%s)%s", why, denied)
		w.prove(ctx, r)
		return true
	}
	if !w.o.Heal {
		return true
	}
	if !w.leader() {
		w.follower(specs.Config.Project)
		return true
	}
	targets := w.allowed(drifted, r.Plan, back)
	if len(targets) == 0 {
		return true
	}
	op.Type, op.AutoApprove, op.Targets = run.Apply, true, targets
	op.Lock = true
	if op.LockTimeout == 0 {
		op.LockTimeout = time.Minute // a pipeline's apply holds it: wait, then plan again
	}
	w.log("info", "repair", "", "repairing %s", strings.Join(addrs.Strings(targets), ", "))
	a := op.Start(ctx, &view{w: w, applying: true})
	w.o.Metrics.repaired(!a.Failed())
	if a.Failed() {
		w.log("error", "repair", "", "the repair of %s failed at %s; it is tried again at the next change or poll", strings.Join(addrs.Strings(targets), ", "), a.Ran[len(a.Ran)-1])
		return true
	}
	w.mu.Lock()
	now := time.Now()
	for _, t := range addrs.Strings(targets) {
		if why != "start" { // the first run converges; it repairs nobody's change
			w.repairs[t] = append(w.repairs[t], now)
		}
		delete(w.since, t)
	}
	w.mu.Unlock()
	return true
}

// firstReport reports whether a diagnostic (by its text) is new: not
// logged by the last reconcile, nor by this one yet. A token that lacks
// a permission, a rogue router or an unreadable backend is said once
// while it lasts, and again after it went away and came back.
func (w *Watcher) firstReport(key string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	seen := w.reported[key] || w.reporting[key]
	w.reporting[key] = true
	return !seen
}

// agentBack notes that an agent answers again: at the next reconcile,
// an object it lost (a create: the agent came back without it, restarted
// or rebuilt) drifted with the agent, not against provision, so its
// count of repairs starts over and, if it was left alone, it is tried
// again. Other drift keeps its count: a tool that restarts the agent with
// its own definitions is still a fight.
func (w *Watcher) agentBack() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.back = true
}

// drifted are the addresses of the plan's changes, logged once each with
// how long they have drifted.
func (w *Watcher) drifted(p *plans.Plan) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	now := time.Now()
	seen := map[string]bool{}
	for _, c := range p.Changes {
		if c.Action == plans.NoOp {
			continue
		}
		a := c.Addr.String()
		seen[a] = true
		out = append(out, a)
		since, ok := w.since[a]
		if !ok {
			since = now
			w.since[a] = now
		}
		what := c.Action.String()
		if c.Reason != "" {
			what += " (" + c.Reason + ")"
		}
		w.o.Log(Event{Time: now.UTC(), Level: "warn", Kind: "drift", Address: a,
			Message: fmt.Sprintf("%s: %s, drifted since %s", c.Backend, what, since.UTC().Format(time.RFC3339))})
	}
	for a := range w.since {
		if !seen[a] {
			delete(w.since, a)
		}
	}
	sort.Strings(out)
	return out
}

// leftAlone is why an object is not repaired, and at which live state.
type leftAlone struct{ live, why string }

// allowed are the drifted objects that may be repaired now: one repaired
// MaxRepairs times within Window (something keeps changing it back) is
// left alone, and said so loudly at each reconcile, until the specs or
// its live state change. back: an agent answered again (agentBack).
func (w *Watcher) allowed(drifted []string, p *plans.Plan, back bool) []addrs.Addr {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []addrs.Addr
	now := time.Now()
	changes := make(map[string]*plans.Change, len(p.Changes))
	for _, c := range p.Changes {
		changes[c.Addr.String()] = c
	}
	for _, a := range drifted {
		c := changes[a]
		if back && c.Action == plans.Create {
			delete(w.repairs, a) // lost with its agent (agentBack)
			delete(w.alone, a)
		}
		recent := slices.DeleteFunc(w.repairs[a], func(t time.Time) bool { return now.Sub(t) > w.o.Window })
		w.repairs[a] = recent
		fp := adapter.Digest(struct{ Before, After []byte }{c.Before.JSON(), c.After.JSON()}) // its live state as read
		if prev, ok := w.alone[a]; ok && prev.live != fp {
			delete(w.alone, a) // its live state changed otherwise: try again
			recent = nil
			w.repairs[a] = nil
		}
		if len(recent) >= w.o.MaxRepairs && w.alone[a].why == "" {
			w.alone[a] = leftAlone{live: fp, why: fmt.Sprintf("repaired %d times in %s and changed back each time; something is fighting provision", len(recent), w.o.Window)}
			w.o.Metrics.fight()
		}
		if la, ok := w.alone[a]; ok {
			w.o.Log(Event{Time: now.UTC(), Level: "error", Kind: "fight", Address: a,
				Message: "left alone: " + la.why + ". It is repaired again once the specs or its live state change."})
			continue
		}
		out = append(out, c.Addr)
	}
	return out
}

func oneLine(diags hcl.Diagnostics) string {
	var parts []string
	for _, d := range diags {
		if d.Severity != hcl.DiagError {
			continue
		}
		at := ""
		if d.Subject != nil {
			at = d.Subject.String() + ": "
		}
		parts = append(parts, at+d.Summary+": "+d.Detail)
	}
	return strings.Join(parts, "; ")
}

// follower says that this watcher only reports, and who heals: the
// leader, or, while its part in the election fails, nobody it knows of.
func (w *Watcher) follower(project string) {
	if w.electionFails.Load() {
		w.log("warn", "follower", "", "this watcher cannot take part in the election of project %s's healer (above), so it only reports, and nothing it knows of heals", project)
		return
	}
	w.log("info", "follower", "", "this watcher does not lead project %s: it reports, and the leader heals", project)
}
