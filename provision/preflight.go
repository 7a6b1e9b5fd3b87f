package provision

import (
	"context"

	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision/parallel"
	"github.com/provision-dev/provision/provision/plans"
)

// Preflighter is a Backend that can tell, before anything is locked or
// sent, whether its credentials allow what the specs need (a Consul
// token's ACL permissions) for the objects in scope (an apply's -target
// and -exclude).
type Preflighter interface {
	Preflight(ctx context.Context, scope func(plans.Addr) bool) hcl.Diagnostics
}

// Preflight runs every Preflighter side by side: the phase between the
// plan and the lock of an apply, so that a missing permission stops it
// before the lock is taken and anything is sent.
func Preflight(ctx context.Context, backends []Backend, scope func(plans.Addr) bool) hcl.Diagnostics {
	return each(backends, func(b Backend) hcl.Diagnostics {
		if p, ok := b.(Preflighter); ok {
			return p.Preflight(ctx, scope)
		}
		return nil
	})
}

// Permitter is a Backend that checks whether its credentials allow every
// request of its changes, once the plan keeps only those it will send,
// from what its read learnt of them (st): no request.
type Permitter interface {
	Permit(st plans.State, changes []*plans.Change) hcl.Diagnostics
}

// Permit runs every Permitter on its changes of p, with the state p was
// made from.
func Permit(p *plans.Plan, backends []Backend) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, b := range backends {
		name := b.Info().Name
		if pm, ok := b.(Permitter); ok && p.Live.State(name) != nil {
			diags = append(diags, pm.Permit(p.Live.State(name), p.ChangesOf(name))...)
		}
	}
	return diags
}

// Denied is the Extra of a diagnostic that says the credentials may not
// write these objects: a run that goes on without them (a watcher) may
// leave them out.
type Denied struct{ Addrs []plans.Addr }

// each runs f on every backend side by side and gathers the diagnostics,
// in the backends' order.
func each(backends []Backend, f func(Backend) hcl.Diagnostics) hcl.Diagnostics {
	results := make([]hcl.Diagnostics, len(backends))
	parallel.Do(len(backends), readers, func(i int) { results[i] = f(backends[i]) })
	var diags hcl.Diagnostics
	for _, r := range results {
		diags = append(diags, r...)
	}
	return diags
}
