package provision

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/provision-dev/provision/provision/addrs"
	"github.com/provision-dev/provision/provision/plans"
)

// Backend is one live system that a plan reads: a Consul agent, Consul's
// KV store, a search cluster, a proxy. It is the whole contract between
// the engine and a system, and every backend has every method: a
// capability it lacks answers "none", as NoCapabilities does, which a
// backend embeds for what it does not do. The engine never asks a backend
// what it is.
//
// Its work is split in two: Read makes the requests and returns what they
// answered as a State, a plain value; Plan turns that value and the
// declarations into the objects the engine walks (walk.go), without any
// I/O. Whatever a later phase needs
// of the read (denied permissions, the documents read, the routers a proxy
// serves) travels in the State or in Planned, never in a field of the
// backend.
type Backend interface {
	// Info names the backend; Plan gives its fingerprint and notes.
	Info() plans.BackendInfo
	// Read reads the live state that a plan of mode needs, in a fixed,
	// small number of requests whatever the number of declared objects.
	// An error diagnostic means there is nothing to plan from.
	Read(ctx context.Context, mode plans.Mode) (plans.State, hcl.Diagnostics)
	// Plan says what the engine walks to bring st to the declared state
	// (Planning: each kind's declared and owned objects, and its rule for
	// one of each), a fingerprint of st, and what a person should know of
	// it. It makes no request. A change the backend cannot make is an
	// error diagnostic that points at the declaration causing it. With
	// mode Destroy, the walk deletes every object the project owns within
	// the backend's scope.
	Plan(st plans.State, mode plans.Mode) (Planning, hcl.Diagnostics)
	// DecodeState reads a State back from its JSON form, the next value
	// of dec (a snapshot's, read as the file is: each state once, in its
	// own type). dec refuses a field the state's types do not have.
	DecodeState(dec *json.Decoder) (plans.State, error)
	// Greenfield is what the backend reads when it holds nothing (a
	// search cluster still has a version); none: the state of "{}".
	Greenfield() plans.State
	// Version asks the server for its version, in one request, for a
	// snapshot to record ("Consul 1.15.4"), when its state does not say
	// it; none: "".
	Version(ctx context.Context) string

	Sender

	// Converge says, with no I/O, what the live state becomes once the
	// requests of changes are done: what the server does with them, as
	// far as its next read shows. provision test holds a second plan from
	// that state to be empty, so that a perpetual diff is caught before
	// anything is applied. None: st, as it is (a backend that takes no
	// requests).
	Converge(st plans.State, changes []*plans.Change) (plans.State, error)
	// Preflight tells, before anything is locked or sent, whether the
	// credentials allow what the specs need (a Consul token's ACL
	// permissions) for the objects in scope (an apply's -target and
	// -exclude); none: nothing to say.
	Preflight(ctx context.Context, scope func(addrs.Addr) bool) hcl.Diagnostics
	// Permit checks whether the credentials allow every request of
	// changes, once the plan keeps only those it will send, from what the
	// read learnt of them (st): no request. None: nothing to say.
	Permit(st plans.State, changes []*plans.Change) hcl.Diagnostics
	// Verify checks, after an apply (also one with nothing to change),
	// that what the plan declares is what readers see: an index through
	// the tribe node, a gated path through the proxy. Each proof's line is
	// for a person; a failure is an error diagnostic at the declaration it
	// concerns, whose Extra is Unproven when it is a gate's. None: no
	// proof.
	Verify(ctx context.Context, p *plans.Plan) ([]Proof, hcl.Diagnostics)
	// Generate writes declarations from live objects: one block for each
	// import block of its kinds that names an object no block declares
	// (plan -generate-config-out). The live object is judged by the same
	// ownership rule as a plan's (adapter.Decide). None: no block.
	Generate(ctx context.Context) ([]*hclwrite.Block, hcl.Diagnostics)
	// Follow tells feed each time the live state may have changed, until
	// ctx ends (provision watch); none: returns at once, and the watcher
	// polls.
	Follow(ctx context.Context, feed Feed)
}

// Sender is the part of a Backend that takes requests: what an apply
// needs of it.
type Sender interface {
	// Send performs one request of a change; none: ErrReadOnly (a proxy,
	// which a plan never asks to change).
	Send(ctx context.Context, r plans.Request) error
	// BatchLimit is the most items one batch holds; none: 0, and no change
	// of the backend is made of batch items (Request.Batch).
	BatchLimit() int
	// SendBatch sends items, of one method and path, in one request (or
	// as few as the server's limits on a body allow), and returns each
	// item's error: nil when it was done. st is what the plan read (nil
	// when not known), to which a refused item is compared.
	SendBatch(ctx context.Context, st plans.State, items []plans.Request) []error
}

// Feed is where a backend that follows its live state reports.
type Feed struct {
	// Changed says the live state may have changed, and why.
	Changed func(why string)
	// Back says the system answers again after it did not.
	Back func()
	// Log says what a person should know ("warn", "info").
	Log func(level, format string, args ...any)
}

// ErrReadOnly is what a backend that takes no requests answers one.
var ErrReadOnly = errors.New("this backend takes no requests: it is read-only")

// NoCapabilities answers "none" for every capability of a Backend: a
// backend embeds it, and has its own methods for what it does.
type NoCapabilities struct{}

func (NoCapabilities) Greenfield() plans.State                   { return nil }
func (NoCapabilities) Version(context.Context) string            { return "" }
func (NoCapabilities) Send(context.Context, plans.Request) error { return ErrReadOnly }
func (NoCapabilities) BatchLimit() int                           { return 0 }
func (NoCapabilities) SendBatch(_ context.Context, _ plans.State, items []plans.Request) []error {
	errs := make([]error, len(items))
	for i := range errs {
		errs[i] = ErrReadOnly
	}
	return errs
}
func (NoCapabilities) Converge(st plans.State, _ []*plans.Change) (plans.State, error) {
	return st, nil
}
func (NoCapabilities) Preflight(context.Context, func(addrs.Addr) bool) hcl.Diagnostics {
	return nil
}
func (NoCapabilities) Permit(plans.State, []*plans.Change) hcl.Diagnostics { return nil }
func (NoCapabilities) Verify(context.Context, *plans.Plan) ([]Proof, hcl.Diagnostics) {
	return nil, nil
}
func (NoCapabilities) Generate(context.Context) ([]*hclwrite.Block, hcl.Diagnostics) {
	return nil, nil
}
func (NoCapabilities) Follow(context.Context, Feed) {}
