package provision

import (
	"encoding/json"
	"fmt"

	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision/adapter"
	"github.com/provision-dev/provision/provision/addrs"
	"github.com/provision-dev/provision/provision/plans"
	"github.com/provision-dev/provision/schema"
)

// The engine walks the objects; a kind plans one. A backend's Plan says,
// for each of its kinds, what is declared in its scope and what the
// project owns live, with the kind's rule for one declared object (its
// change against the live one, or none) and for one owned object (what
// deleting or forgetting it sends). Everything else is decided here,
// once, for every kind, as Terraform's core walks the resource instances
// and asks the provider of each (internal/providers/provider.go,
// PlanResourceChange): which declared objects are planned (none in
// destroy mode), which owned objects are gone, what a removed block does
// to one, its protection, and what the changes' backend is. Imports are
// Propose's (adapter/own.go); -replace, -target and -exclude are applied
// to the whole plan (Plan).

// Planning is what a backend plans from its state, with no I/O: the
// objects of its kinds, which the engine walks (PlanBackend), and what it
// says of the state as a whole.
type Planning struct {
	// Kinds are the backend's kinds, walked in order; each is made from
	// the changes of the kinds walked before it (a document's from what
	// the plan does to its index).
	Kinds []func(before []*plans.Change) Objects
	// Project is the specs' project, and Removed their removed blocks.
	Project string
	Removed []*schema.Removed
	// Planned holds the backend's fingerprint, notes and gates; the walk
	// adds the changes.
	plans.Planned
	// Finish, when there is one, completes the walked plan: what the
	// backend plans of its changes as a whole (the order of deletes that
	// name each other, records of objects gone) and what a person should
	// know of them. failed says the walk found an error.
	Finish func(p *plans.Planned, failed bool) hcl.Diagnostics
}

// Objects is one kind's objects within one backend's scope.
type Objects struct {
	Kind addrs.Kind
	// Declared are the kind's declarations in the scope, in block order.
	Declared []*schema.Declaration
	// Owned names the live objects the project owns that the walk may
	// let go of, declared ones included, sorted: not those another of
	// the backend's changes takes with it (the documents of an index the
	// plan deletes).
	Owned []string
	// Plan is the change of the declaration Declared[i] against its live
	// object, if any (adapter.Propose): nil for nothing to plan, or for a
	// refusal the diagnostics give. Declarations are planned side by
	// side: Plan makes no request and writes nothing it shares.
	Plan func(i int) (*plans.Change, hcl.Diagnostics)
	// Gone is the owned object named so, as the engine lets go of it; i
	// is its declaration in Declared (a destroy's), -1 for none.
	Gone func(name string, i int) Gone
}

// Gone is an owned object that no block declares any more, or, in
// destroy mode, any owned object: what the engine needs to choose its
// change.
type Gone struct {
	Addr addrs.Addr
	// Before is the live object in the backend's terms.
	Before json.RawMessage
	// Delete deletes it; Forget returns the requests that take its marks
	// off and leave it as it is otherwise.
	Delete []plans.Request
	Forget func() []plans.Request
	// Protected: the live object's marks hold the protection.
	Protected bool
	// Moved, when the object is declared in another place of the kind
	// (another agent), is why a plan that converges deletes it here,
	// whatever its protection: it is registered there first. A destroy
	// deletes it as any other.
	Moved string
	// Kept, when the kind keeps such an object live unless told
	// otherwise (an index holds data), is what a plan that converges
	// says of it instead of letting it go; a removed block or a destroy
	// lets it go all the same.
	Kept *hcl.Diagnostic
	// Holding, when deleting it would delete protected objects with it
	// (the documents of an index), names them: such a delete is refused
	// as a protected object's is.
	Holding string
}

// PlanBackend plans one backend from its state, with no I/O: its Plan,
// then the walk of each of its kinds.
func PlanBackend(mode plans.Mode, b Backend, st plans.State) (plans.Planned, hcl.Diagnostics) {
	return planBackend(b.Info().Name, mode, b, st)
}

// planBackend is PlanBackend of the backend named backend.
func planBackend(backend string, mode plans.Mode, b Backend, st plans.State) (plans.Planned, hcl.Diagnostics) {
	pl, diags := b.Plan(st, mode)
	out := pl.Planned
	if diags.HasErrors() {
		return out, diags
	}
	for _, kind := range pl.Kinds {
		changes, kdiags := walk(pl.Project, mode, pl.Removed, kind(out.Changes))
		for _, c := range changes {
			c.Backend = backend
		}
		out.Changes = append(out.Changes, changes...)
		diags = append(diags, kdiags...)
	}
	if pl.Finish != nil {
		diags = append(diags, pl.Finish(&out, diags.HasErrors())...)
	}
	return out, diags
}

// walk plans one kind's objects: each declaration (none in destroy mode),
// then each owned object no declaration plans.
func walk(project string, mode plans.Mode, removed []*schema.Removed, o Objects) ([]*plans.Change, hcl.Diagnostics) {
	declared := make(map[string]int, len(o.Declared))
	for i, d := range o.Declared {
		declared[d.Name] = i
	}
	var changes []*plans.Change
	var diags hcl.Diagnostics
	if mode != plans.Destroy {
		changes, diags = adapter.PlanEach(len(o.Declared), o.Plan)
	}
	for _, name := range o.Owned {
		i, isDeclared := declared[name]
		var d *schema.Declaration
		switch {
		case isDeclared && mode != plans.Destroy:
			continue
		case isDeclared:
			d = o.Declared[i]
		default:
			i = -1
		}
		c, kept := let(project, mode, o.Gone(name, i), d, schema.RemovedOf(removed, o.Kind, name))
		if kept != nil {
			diags = append(diags, kept)
			continue
		}
		changes = append(changes, c)
	}
	return changes, diags
}

// let is the one rule for an owned object the plan lets go of: declared
// in another place, it is deleted here; one its kind keeps is kept,
// unless destroyed or named by a removed block; a removed block with
// destroy = false forgets it (its marks are taken off, it is left live,
// as if made by hand); otherwise it is deleted, which PlanFrom refuses
// while it is protected (protectedDeletes). d is its declaration in
// destroy mode, nil for none.
func let(project string, mode plans.Mode, g Gone, d *schema.Declaration, r *schema.Removed) (*plans.Change, *hcl.Diagnostic) {
	c := &plans.Change{Addr: g.Addr, Action: plans.Delete, Before: plans.ViewOf(g.Before), Requests: g.Delete}
	switch {
	case g.Moved != "" && mode != plans.Destroy:
		c.Because(plans.ReasonMovedAway, g.Moved)
		return c, nil
	case g.Kept != nil && mode == plans.Converge && r == nil:
		return nil, g.Kept
	case d != nil:
		c.DeclaredAt, c.EachKey = plans.At(d.DeclRange.Ptr()), d.Instance.KeyPtr()
		c.Protected = d.Lifecycle.Protects(g.Protected)
		c.Owned(project, mode)
	case r == nil:
		c.Protected = g.Protected
		c.Owned(project, mode)
	case r.Destroy:
		c.DeclaredAt, c.Protected = plans.At(r.DeclRange.Ptr()), g.Protected
		c.Because(plans.ReasonRemoved, fmt.Sprintf("the removed block at %s deletes it", r.DeclRange))
	default:
		c.DeclaredAt, c.Action, c.Requests = plans.At(r.DeclRange.Ptr()), plans.Forget, g.Forget()
		c.Because(plans.ReasonRemoved, fmt.Sprintf("the removed block at %s lets go of it: its marks are taken off, and it is left live as it is", r.DeclRange))
	}
	if c.Action == plans.Delete && g.Holding != "" {
		c.Protected = true
		c.Reason += "; " + g.Holding
	}
	return c, nil
}

// Kinds are objs as Planning.Kinds walks them, for kinds that are
// planned whatever the plan does to the others.
func Kinds(objs ...Objects) []func(before []*plans.Change) Objects {
	out := make([]func([]*plans.Change) Objects, len(objs))
	for i, o := range objs {
		out[i] = func([]*plans.Change) Objects { return o }
	}
	return out
}
