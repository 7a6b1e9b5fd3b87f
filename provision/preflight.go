package provision

import (
	"context"

	"github.com/hashicorp/hcl/v2"
)

// Preflighter is a Backend that can tell, before anything is locked or
// sent, whether its credentials allow what the specs need (a Consul
// token's ACL permissions).
type Preflighter interface {
	Preflight(ctx context.Context) hcl.Diagnostics
}

// Preflight runs every Preflighter side by side: the phase between the
// plan and the lock of an apply, so that a missing permission stops it
// before the lock is taken and anything is sent.
func Preflight(ctx context.Context, backends []Backend) hcl.Diagnostics {
	results := make([]hcl.Diagnostics, len(backends))
	Parallel(len(backends), readers, func(i int) {
		if p, ok := backends[i].(Preflighter); ok {
			results[i] = p.Preflight(ctx)
		}
	})
	var diags hcl.Diagnostics
	for _, r := range results {
		diags = append(diags, r...)
	}
	return diags
}
