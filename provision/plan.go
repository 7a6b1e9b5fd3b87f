package provision

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision/addrs"
	"github.com/provision-dev/provision/provision/parallel"
	"github.com/provision-dev/provision/provision/plans"
	"github.com/provision-dev/provision/schema"
	ctyjson "github.com/zclconf/go-cty/cty/json"
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

// PlanOptions are what a plan is asked for, as the command line gives
// them, its addresses parsed.
type PlanOptions struct {
	Mode plans.Mode
	// Replace are the declared objects made again in place even when
	// converged (-replace), each its full address.
	Replace []addrs.Addr
	// Targets and Excludes narrow the plan (-target, -exclude); Whole
	// plans everything all the same (a pull's plan).
	Targets, Excludes []addrs.Addr
	Whole             bool
	// Remove is what the plan removes of the data a backend keeps unless
	// asked (-indices, -prune-indices), which a destroy plan records.
	Remove plans.Removal
	// Permit checks the credentials for what the plan sends; a saved
	// plan's are checked once it is narrowed to the saved changes.
	Permit bool
	// Dir is the specs' directory, and Files the files their load read,
	// whose digests the plan keeps (plans.Sources).
	Dir   string
	Files map[string]*hcl.File
	// Recorded says what the plan forgets of the live objects the
	// cluster's record holds (apply's record of the agents services are
	// on); nil for none.
	Recorded func(p *plans.Plan) hcl.Diagnostics
}

// Plan plans cfg from live, with no I/O, and finishes the plan: the
// modules that declare its objects, a destroy's removal, the removed
// blocks with nothing to do, what the record says, -replace, -target and
// -exclude, the permissions its writes need, and the outputs, variables,
// secrets and sources it carries. The diagnostics are the plan's warnings, in that order;
// with an error, the plan is nil when no plan could be made, and never to
// be applied.
func Plan(cfg *schema.Config, backends []Backend, live *plans.Live, o PlanOptions) (*plans.Plan, hcl.Diagnostics) {
	p, diags := PlanFrom(cfg.Project, o.Mode, backends, live)
	if diags.HasErrors() {
		return nil, diags
	}
	p.InModules(cfg.Modules())
	if o.Mode == plans.Destroy {
		removal := maps.Clone(o.Remove)
		if removal == nil {
			removal = plans.Removal{}
		}
		p.Destroy = &removal
	}
	diags = append(diags, idleRemovals(cfg.Removed, p)...)
	if o.Recorded != nil {
		diags = append(diags, o.Recorded(p)...)
	}
	if err := replaced(p, cfg.Kinds(), o.Replace); err != nil {
		return p, append(diags, refusal("Invalid -replace address", err.Error()))
	}
	if !o.Whole {
		if err := p.Target(o.Targets, o.Excludes); err != nil {
			return p, append(diags, refusal("Invalid target", err.Error()+"."))
		}
	}
	if o.Permit {
		diags = append(diags, Permit(p, backends)...)
		if diags.HasErrors() {
			return p, diags
		}
	}
	p.Outputs = outputs(cfg.Outputs)
	p.Variables = variables(cfg.Project, cfg.Variables)
	p.Secrets = cfg.Secrets
	p.Dir = o.Dir
	p.Sources = sources(o.Dir, o.Files, cfg.Variables)
	return p, diags
}

// refusal is a plan's refusal to go on, as one error diagnostic.
func refusal(summary, detail string) *hcl.Diagnostic {
	return &hcl.Diagnostic{Severity: hcl.DiagError, Summary: summary, Detail: detail}
}

// PlanFrom plans every backend from live, with no I/O (PlanBackend), and
// assembles the plan. The plan is only to be applied when the diagnostics hold no
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
		planned, pdiags := planBackend(info.Name, mode, b, st)
		diags = append(diags, pdiags...)
		info.Fingerprint = planned.Fingerprint
		info.Notes = append(info.Notes, planned.Notes...)
		p.Backends = append(p.Backends, info)
		p.Changes = append(p.Changes, planned.Changes...)
		p.Gates = append(p.Gates, planned.Gates...)
	}
	p.Sort()
	return p, append(append(diags, protectedDeletes(p.Changes)...), twice(p.Changes)...)
}

// twice refuses two changes of one address: an object that moves between
// two backends that address it alike (a service between an agent and an
// external node, Consul's one agent or an agent block's), which no
// -target could tell apart and no saved plan could hold.
func twice(changes []*plans.Change) hcl.Diagnostics {
	var diags hcl.Diagnostics
	seen := map[addrs.Addr]*plans.Change{}
	for _, c := range changes {
		prev, dup := seen[c.Addr]
		if !dup {
			seen[c.Addr] = c
			continue
		}
		d := &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "One object planned twice",
			Detail: fmt.Sprintf("%s is planned on %s (%s) and on %s (%s): it moves between two places that address it alike. Nothing is sent. Move it in two applies: first let go of it where it is (remove its block, or add a removed block), then declare it where it goes.",
				c.Addr, prev.Backend, prev.Action, c.Backend, c.Action)}
		for _, at := range []*plans.Change{prev, c} {
			if r := at.DeclRange(); r != nil {
				d.Subject = r
			}
		}
		diags = append(diags, d)
	}
	return diags
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

func outputs(blocks []*schema.Output) map[string]plans.Output {
	if len(blocks) == 0 {
		return nil
	}
	out := map[string]plans.Output{}
	for _, o := range blocks {
		v := json.RawMessage("null")
		switch {
		case o.Sensitive:
			v = json.RawMessage(`"(sensitive)"`)
		case o.Value.IsWhollyKnown():
			if b, err := ctyjson.Marshal(o.Value, o.Value.Type()); err == nil {
				v = b
			}
		}
		out[o.Name] = plans.Output{Value: v, Sensitive: o.Sensitive}
	}
	return out
}

// idleRemovals warns of each removed block whose object the plan neither
// deletes nor forgets: it is not live, or not the project's (forgotten
// already, or made by hand), so the block has done its work or names
// nothing.
func idleRemovals(removed []*schema.Removed, p *plans.Plan) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, rb := range removed {
		if slices.ContainsFunc(p.Changes, func(c *plans.Change) bool { return c.Addr.Kind == rb.Kind && c.Addr.Name == rb.Name }) {
			continue
		}
		diags = append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagWarning,
			Summary:  "Removed block with nothing to do",
			Detail: fmt.Sprintf("No live object the project owns is %s, so this removed block neither deletes nor forgets anything: "+
				"it was forgotten or deleted already (the block can go now), made by hand, or the address is wrong.", rb.Addr),
			Subject: rb.FromRange.Ptr(),
			Context: rb.DeclRange.Ptr(),
		})
	}
	return diags
}

// replaced checks that every -replace address is an object of a kind
// -replace takes (a service, of kinds) that the plan declares and the
// project owns, which the plan makes again in place.
func replaced(p *plans.Plan, kinds addrs.Set, replace []addrs.Addr) error {
	for _, addr := range replace {
		i := slices.IndexFunc(p.Changes, func(c *plans.Change) bool { return c.Addr == addr })
		if i < 0 || addr.Kind.Replaces() == "" || p.Changes[i].Action == plans.Delete || p.Changes[i].Action == plans.Create {
			var names, only []string
			for _, k := range kinds.All() {
				if k.Replaces() != "" {
					names, only = append(names, k.Name()), append(only, "a "+k.Name()+" is "+k.Replaces())
				}
			}
			return fmt.Errorf("-replace %s names no %s that the specs declare and the project owns: only such %s", addr, strings.Join(names, " or "), strings.Join(only, "; "))
		}
	}
	return nil
}
