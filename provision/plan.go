package provision

import (
	"context"
	"fmt"

	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision/addrs"
	"github.com/provision-dev/provision/provision/parallel"
	"github.com/provision-dev/provision/provision/plans"
)

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
				c.Addr, c.Reason, addrs.Addr{Kind: c.Addr.Kind, Name: c.Addr.Name}),
			Subject: c.DeclRange(),
		})
	}
	return diags
}
