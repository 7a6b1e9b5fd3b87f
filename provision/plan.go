package provision

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision/parallel"
	"github.com/provision-dev/provision/provision/plans"
	"github.com/provision-dev/provision/schema"
)

// A Batcher is a backend whose changes may be sent as items of one
// request (Request.Batch).
type Batcher interface {
	// BatchLimit is the most items one batch holds.
	BatchLimit() int
	// SendBatch sends items, of one method and path, in one request (or
	// as few as the server's limits on a body allow), and returns each
	// item's error: nil when it was done. st is what the plan read (nil
	// when not known), to which a refused item is compared.
	SendBatch(ctx context.Context, st plans.State, items []plans.Request) []error
}

// Backend is one live system that a plan reads: a Consul agent, a search
// cluster, a proxy. Its work is split in two: Read makes the requests and
// returns what they answered as a State, a plain value; Plan turns that
// value and the declarations into changes without any I/O. Whatever a
// later phase needs of the read (denied permissions, the documents read,
// the routers a proxy serves) travels in the State or in Planned, never
// in a field of the backend.
type Backend interface {
	// Info names the backend; Plan gives its fingerprint and notes.
	Info() plans.BackendInfo
	// Read reads the live state that a plan of mode needs, in a fixed,
	// small number of requests whatever the number of declared objects.
	// An error diagnostic means there is nothing to plan from.
	Read(ctx context.Context, mode plans.Mode) (plans.State, hcl.Diagnostics)
	// Plan returns the changes that bring st to the declared state, a
	// fingerprint of st, and what a person should know of it. It makes
	// no request. A change the backend cannot make is an error diagnostic
	// that points at the declaration causing it. With mode Destroy, the
	// changes delete every object the project owns within the backend's
	// scope.
	Plan(st plans.State, mode plans.Mode) (Planned, hcl.Diagnostics)
	// DecodeState reads a State back from its JSON form, the next value
	// of dec (a snapshot's, read as the file is: each state once, in its
	// own type). dec refuses a field the state's types do not have.
	DecodeState(dec *json.Decoder) (plans.State, error)
}

// Planned is what a backend's Plan returns.
type Planned struct {
	Changes []*plans.Change
	// Fingerprint digests what the plan used of the state; a saved plan
	// is refused when it no longer matches.
	Fingerprint string
	// Notes go into the backend's BackendInfo.
	Notes []string
	// Gates are how a proxy serves the declared gated frontends.
	Gates []plans.Gate
}

// Diffed is a backend's changes with the fingerprint of the state they
// were planned from: the fingerprint (an encoding of all that was read)
// is worked out beside diff, which must write nothing it reads.
func Diffed(fingerprint func() string, diff func() ([]*plans.Change, hcl.Diagnostics)) (Planned, hcl.Diagnostics) {
	digest := make(chan string, 1)
	go func() { digest <- fingerprint() }()
	changes, diags := diff()
	return Planned{Changes: changes, Fingerprint: <-digest}, diags
}

// PlanEach plans each of the declarations on its own, side by side
// (parallel.Spread), and returns their changes in the declarations' order, less
// those that plan returned none of, and every diagnostic. plan must do
// no I/O and write nothing it shares.
func PlanEach[D any](declared []D, plan func(D) (*plans.Change, hcl.Diagnostics)) ([]*plans.Change, hcl.Diagnostics) {
	planned := make([]*plans.Change, len(declared))
	found := make([]hcl.Diagnostics, len(declared))
	parallel.Spread(len(declared), func(i int) { planned[i], found[i] = plan(declared[i]) })
	var changes []*plans.Change
	var diags hcl.Diagnostics
	for i, c := range planned {
		diags = append(diags, found[i]...)
		if c != nil {
			changes = append(changes, c)
		}
	}
	return changes, diags
}

// Writer is a Backend that takes requests. A read-only system (a proxy)
// is a Backend and a Prober, never a Writer.
type Writer interface {
	Backend
	// Send performs one request of a change.
	Send(ctx context.Context, r plans.Request) error
}

// readers bounds how many backends a plan reads at a time.
const readers = 16

// Read reads every backend, side by side (at most 16 at a time): its wall
// time is the slowest backend's, not the sum. A backend whose read fails
// has no state, and the diagnostics say why.
func Read(ctx context.Context, mode plans.Mode, backends []Backend) (*plans.Live, hcl.Diagnostics) {
	states := make([]plans.State, len(backends))
	results := make([]hcl.Diagnostics, len(backends))
	parallel.Do(len(backends), readers, func(i int) {
		states[i], results[i] = backends[i].Read(ctx, mode)
	})
	live := &plans.Live{States: map[string]plans.State{}}
	var diags hcl.Diagnostics
	for i, b := range backends {
		diags = append(diags, results[i]...)
		if !results[i].HasErrors() && states[i] != nil {
			live.States[b.Info().Name] = states[i]
		}
	}
	return live, diags
}

// PlanFrom plans every backend from live, with no I/O, and assembles the
// plan. The plan is only to be applied when the diagnostics hold no
// error.
func PlanFrom(project string, mode plans.Mode, backends []Backend, live *plans.Live) (*plans.Plan, hcl.Diagnostics) {
	p := &plans.Plan{FormatVersion: plans.FormatVersion, Project: project, Backends: []plans.BackendInfo{}, Changes: []*plans.Change{}, Live: live}
	var diags hcl.Diagnostics
	for _, b := range backends {
		info := b.Info()
		st, ok := live.States[info.Name]
		if !ok {
			continue
		}
		planned, pdiags := b.Plan(st, mode)
		diags = append(diags, pdiags...)
		info.Fingerprint = planned.Fingerprint
		info.Notes = append(info.Notes, planned.Notes...)
		p.Backends = append(p.Backends, info)
		p.Changes = append(p.Changes, planned.Changes...)
		p.Gates = append(p.Gates, planned.Gates...)
	}
	p.Sort()
	return p, append(diags, protectedDeletes(p.Changes)...)
}

// protectedDeletes refuses every delete of a protected object: one whose
// live marks hold the protection (its block may be gone) or whose block
// says prevent_destroy, in any mode.
func protectedDeletes(changes []*plans.Change) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, c := range changes {
		if c.Action != plans.Delete || !c.Protected {
			continue
		}
		diags = append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Protected object would be deleted",
			Detail: fmt.Sprintf("The plan deletes %s (%s), which is protected: lifecycle { prevent_destroy = true } is written on the live object with its ownership marks, and holds whether its block is there or not. Nothing is deleted. "+
				"To delete it, apply its block with prevent_destroy = false first; to stop managing it and leave it live, add a removed block:\n\n  removed {\n    from = %s\n    lifecycle {\n      destroy = false\n    }\n  }",
				c.Addr, c.Reason, schema.FormatAddr(c.Addr.Kind, c.Addr.Name)),
			Subject: c.DeclRange(),
		})
	}
	return diags
}

// A Follower is a Backend with a change feed: Follow tells feed each time
// its live state may have changed, until ctx ends.
type Follower interface {
	Follow(ctx context.Context, feed Feed)
}

// Feed is where a Follower reports.
type Feed struct {
	// Changed says the live state may have changed, and why.
	Changed func(why string)
	// Back says the system answers again after it did not.
	Back func()
	// Log says what a person should know ("warn", "info").
	Log func(level, format string, args ...any)
}
