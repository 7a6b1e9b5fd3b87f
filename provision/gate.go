package provision

import (
	"context"

	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision/parallel"
	"github.com/provision-dev/provision/provision/plans"
)

// Verifier is a Backend that checks, after an apply (also one with
// nothing to change), that what the plan declares is what readers see:
// an index through the tribe node, a gated path through the proxy. Each
// proof's line is for a person; a failure is an error diagnostic at the
// declaration it concerns, whose Extra is Unproven when it is a gate's.
type Verifier interface {
	Verify(ctx context.Context, p *plans.Plan) ([]Proof, hcl.Diagnostics)
}

// Proof is one thing a verification proved: its line, for a person, and,
// for a program, the gate it proved (nil for another proof).
type Proof struct {
	Line string
	Gate *plans.Gate
}

// Unproven is the Extra of a diagnostic that says a proxy did not prove
// its gates.
type Unproven struct{ Proxy string }

// Verified is one proof of a verification, with the backend that made
// it.
type Verified struct {
	Backend string
	Proof
}

// Verify runs every Verifier of the plan's backends side by side and
// returns their lines in backend order, and their diagnostics.
func Verify(ctx context.Context, p *plans.Plan, backends map[string]Backend) ([]Verified, hcl.Diagnostics) {
	type result struct {
		lines []Proof
		diags hcl.Diagnostics
	}
	results := make([]result, len(p.Backends))
	parallel.Do(len(p.Backends), len(p.Backends), func(i int) {
		if v, ok := backends[p.Backends[i].Name].(Verifier); ok {
			results[i].lines, results[i].diags = v.Verify(ctx, p)
		}
	})
	var out []Verified
	var diags hcl.Diagnostics
	for i, info := range p.Backends {
		for _, l := range results[i].lines {
			out = append(out, Verified{Backend: info.Name, Proof: l})
		}
		diags = append(diags, results[i].diags...)
	}
	return out, diags
}
