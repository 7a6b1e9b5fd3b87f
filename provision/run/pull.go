package run

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision"
	"github.com/provision-dev/provision/provision/addrs"
	"github.com/provision-dev/provision/provision/plans"
	"github.com/provision-dev/provision/provision/pull"
)

// pull works out the rewrites of the specs that make the plan's updates
// of owned objects no-ops (those -target and -exclude select; the plan is
// made whole, since whether a shared expression may be rewritten depends
// on every object that evaluates it), and checks them by planning the
// rewritten specs: Pulled holds them when they pass. Nothing is written;
// the command writes the files.
func (r *Run) pull(ctx context.Context) hcl.Diagnostics {
	include, exclude := r.Targets, r.Excludes
	res := pull.Pull(pull.Specs{Dir: r.Dir, Config: r.Config,
		Selected: func(a addrs.Addr) bool { return plans.Selected(a, include, exclude) }}, r.Plan)
	if res.Diags.HasErrors() {
		return res.Diags
	}
	r.view.Diagnostics(res.Diags)
	if len(res.Files) > 0 {
		if diags := r.checkPulled(ctx, res); diags.HasErrors() {
			return diags
		}
	}
	r.Pulled = res
	return nil
}

// checkPulled plans the rewritten specs, in a copy, from the state the
// pull was made from: every object pulled must plan no change, and every
// object that planned none still plan none. Nothing is written
// otherwise.
func (r *Run) checkPulled(ctx context.Context, res *pull.Result) hcl.Diagnostics {
	refuse := func(detail string) hcl.Diagnostics {
		return Refusal("Pull cannot make the plan empty", detail+" Nothing was written.", nil)
	}
	root, dir := pull.Root(r.Dir), "."
	if root != r.Dir {
		dir = filepath.Base(r.Dir)
	}
	tmp, err := os.MkdirTemp("", "provision-pull-")
	if err != nil {
		return refuse(err.Error() + ".")
	}
	defer os.RemoveAll(tmp)
	if err := os.CopyFS(tmp, os.DirFS(root)); err != nil {
		return refuse(err.Error() + ".")
	}
	for _, f := range res.Order {
		rel, err := filepath.Rel(root, f)
		if err == nil {
			err = os.WriteFile(filepath.Join(tmp, rel), res.Files[f], 0o644)
		}
		if err != nil {
			return refuse(err.Error() + ".")
		}
	}
	check := r.Operation
	check.Type, check.Targets, check.Excludes = Plan, nil, nil
	check.Dir, check.From, check.Specs = filepath.Join(tmp, dir), provision.Reread(r.Live), nil
	quiet := &Capture{}
	again := check.Start(ctx, quiet)
	if again.Failed() {
		return refuse(fmt.Sprintf("The rewritten specs do not plan: %s.", errorTexts(quiet.Diags)))
	}
	// An object pulled whole: its declared values are now its live ones
	// (an update may be left for its ownership marks, which are no value
	// of the specs).
	pulled := map[string]bool{}
	for _, o := range res.Objects {
		pulled[o.Addr.String()] = len(o.Paths) > 0 && len(o.Left) == 0
	}
	before := map[string]plans.Action{}
	for _, ch := range r.Plan.Changes {
		before[ch.Addr.String()] = ch.Action
	}
	var moved []string
	for _, ch := range again.Plan.Changes {
		a := ch.Addr.String()
		switch {
		case ch.Action == plans.NoOp, pulled[a] && pull.Settled(ch):
		case pulled[a] || before[a] == plans.NoOp:
			moved = append(moved, fmt.Sprintf("%s (%s: %s)", a, ch.Action, ch.Reason))
		}
	}
	if len(moved) > 0 {
		return refuse(fmt.Sprintf("With the rewrites, the plan would still change %s.", strings.Join(moved, "; ")))
	}
	return nil
}

// Capture is the view of a run inside another (a pull's check, each run
// of provision test): it shows nothing and keeps what the run reports.
type Capture struct {
	Silent
	Planned         *plans.Plan
	Warnings, Diags hcl.Diagnostics
}

func (c *Capture) Loaded(map[string]*hcl.File, []string) {}
func (c *Capture) Diagnostics(d hcl.Diagnostics)         { c.Diags = append(c.Diags, d...) }
func (c *Capture) Plan(p *plans.Plan, warnings hcl.Diagnostics) {
	c.Planned, c.Warnings = p, warnings
}

func errorTexts(diags hcl.Diagnostics) string {
	var out []string
	for _, d := range diags {
		if d.Severity == hcl.DiagError {
			out = append(out, d.Summary+": "+d.Detail)
		}
	}
	return strings.Join(out, "; ")
}
