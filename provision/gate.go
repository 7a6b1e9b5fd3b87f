package provision

import (
	"context"

	"github.com/hashicorp/hcl/v2"
)

// GateStatus is how a live proxy serves one path of a gated frontend.
type GateStatus string

const (
	// Gated: served through the frontend's forward-auth middleware, and by
	// no router without it.
	Gated GateStatus = "gated"
	// NotServed: no router of the proxy claims the path (yet).
	NotServed GateStatus = "not_served"
	// Ungated: a router serves the path without the frontend's
	// forward-auth middleware, whoever registered it.
	Ungated GateStatus = "ungated"
	// Unread: the proxy's API could not be read.
	Unread GateStatus = "unread"
)

// Gate is one path of a declared gated frontend as one proxy serves it.
type Gate struct {
	Proxy   string     `json:"proxy"`   // traefik.<name>
	Address Addr       `json:"address"` // the service whose frontend it is
	Path    string     `json:"path"`
	Host    string     `json:"host,omitempty"`
	Status  GateStatus `json:"status"`
	// Router serves the path: the gated one, or, when Ungated, the one
	// that bypasses the gate (with its Rule and Priority).
	Router     string `json:"router,omitempty"`
	Rule       string `json:"rule,omitempty"`
	Priority   int64  `json:"priority,omitempty"`
	Middleware string `json:"middleware,omitempty"`
}

// Where is the gate's path as a person names it: "/hp (Host a.example.com)".
func (g Gate) Where() string {
	if g.Host != "" {
		return g.Path + " (Host " + g.Host + ")"
	}
	return g.Path
}

// Verifier is a Backend that checks, after an apply (also one with
// nothing to change), that what the plan declares is what readers see:
// an index through the tribe node, a gated path through the proxy. Each
// proof's line is for a person; a failure is an error diagnostic at the
// declaration it concerns, whose Extra is Unproven when it is a gate's.
type Verifier interface {
	Verify(ctx context.Context, p *Plan) ([]Proof, hcl.Diagnostics)
}

// Proof is one thing a verification proved: its line, for a person, and,
// for a program, the gate it proved (nil for another proof).
type Proof struct {
	Line string
	Gate *Gate
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
func Verify(ctx context.Context, p *Plan, backends map[string]Backend) ([]Verified, hcl.Diagnostics) {
	type result struct {
		lines []Proof
		diags hcl.Diagnostics
	}
	results := make([]result, len(p.Backends))
	Parallel(len(p.Backends), len(p.Backends), func(i int) {
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
