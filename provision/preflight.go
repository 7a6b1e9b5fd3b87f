package provision

import (
	"context"

	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision/addrs"
	"github.com/provision-dev/provision/provision/parallel"
	"github.com/provision-dev/provision/provision/plans"
)

// Preflight runs every backend's Preflight side by side: the phase between the
// plan and the lock of an apply, so that a missing permission stops it
// before the lock is taken and anything is sent.
func Preflight(ctx context.Context, backends []Backend, scope func(addrs.Addr) bool) hcl.Diagnostics {
	return each(backends, func(b Backend) hcl.Diagnostics {
		return b.Preflight(ctx, scope)
	})
}

// Permit runs every backend's Permit on its changes of p, with the state p was
// made from.
func Permit(p *plans.Plan, backends []Backend) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, b := range backends {
		name := b.Info().Name
		if st := p.Live.State(name); st != nil {
			diags = append(diags, b.Permit(st, p.ChangesOf(name))...)
		}
	}
	return diags
}

// Denied is the Extra of a diagnostic that says the credentials may not
// write these objects: a run that goes on without them (a watcher) may
// leave them out.
type Denied struct{ Addrs []addrs.Addr }

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
