package provision

import (
	"context"

	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision/parallel"
	"github.com/provision-dev/provision/provision/plans"
)

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

// Verify runs the Verify of every backend of the plan side by side and
// returns their lines in backend order, and their diagnostics.
func Verify(ctx context.Context, p *plans.Plan, backends map[string]Backend) ([]Verified, hcl.Diagnostics) {
	type result struct {
		lines []Proof
		diags hcl.Diagnostics
	}
	results := make([]result, len(p.Backends))
	parallel.Do(len(p.Backends), len(p.Backends), func(i int) {
		if b := backends[p.Backends[i].Name]; b != nil {
			results[i].lines, results[i].diags = b.Verify(ctx, p)
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
