package run

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision"
	"github.com/provision-dev/provision/provision/addrs"
	"github.com/provision-dev/provision/provision/plans"
	"github.com/provision-dev/provision/provision/pull"
	"github.com/provision-dev/provision/schema"
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
	tmp, dir, err := r.pulledCopy(res)
	if err != nil {
		return refuse(err.Error() + ".")
	}
	defer os.RemoveAll(tmp)
	check := r.Operation
	check.Type, check.Targets, check.Excludes = Plan, nil, nil
	check.Dir, check.From, check.Specs = dir, provision.Reread(r.Live), nil
	check.Environ = func() []string { // the copy is its own root
		return slices.DeleteFunc(r.Environ(), func(kv string) bool { return strings.HasPrefix(kv, schema.RootEnv+"=") })
	}
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

// pulledCopy copies the folder the specs may read inside (their
// repository, or PROVISION_ROOT: a module kept at its top, and the files
// it reads, are outside the specs' own folder) into a new temporary
// folder, less .git, with the pull's rewrites; it returns the folder and
// the specs' directory (or file) in it. The copy's top has a .git of its
// own, so that a load of the copy is bound to it.
func (r *Run) pulledCopy(res *pull.Result) (tmp, dir string, err error) {
	top, err := schema.Bound(pull.Root(r.Dir), r.Environ())
	if err != nil {
		return "", "", err
	}
	in := func(path string) (string, error) { // path's place in the copy
		abs, err := filepath.Abs(path)
		if err == nil {
			abs, err = filepath.EvalSymlinks(abs)
		}
		if err != nil {
			return "", err
		}
		rel, err := filepath.Rel(top, abs)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return "", fmt.Errorf("%s is outside %s", path, top)
		}
		return filepath.Join(tmp, rel), nil
	}
	if tmp, err = os.MkdirTemp("", "provision-pull-"); err != nil {
		return "", "", err
	}
	err = copyTree(tmp, top)
	if err == nil {
		err = os.Mkdir(filepath.Join(tmp, ".git"), 0o755)
	}
	if err == nil {
		dir, err = in(r.Dir)
	}
	for _, f := range res.Order {
		var to string
		if err == nil {
			to, err = in(f)
		}
		if err == nil {
			err = os.WriteFile(to, res.Files[f], 0o644)
		}
	}
	if err != nil {
		os.RemoveAll(tmp)
		return "", "", err
	}
	return tmp, dir, nil
}

// copyTree copies the regular files and folders of from into to, less
// the .git folders (and to itself, when the temporary folder is inside
// the repository).
func copyTree(to, from string) error {
	if r, err := filepath.EvalSymlinks(to); err == nil {
		to = r
	}
	return filepath.WalkDir(from, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, path)
		switch {
		case d.IsDir() && (d.Name() == ".git" || path == to):
			return filepath.SkipDir
		case d.IsDir():
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		case !d.Type().IsRegular():
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), b, 0o644)
	})
}

// Capture is the view of a run inside another (a pull's check, each run
// of provision test): it shows nothing and keeps what the run reports.
type Capture struct {
	Silent
	Planned         *plans.Plan
	Warnings, Diags hcl.Diagnostics
	// Files are the sources its diagnostics quote (the specs', the
	// policies').
	Files map[string]*hcl.File
}

func (c *Capture) Loaded(files map[string]*hcl.File, _ []string) { c.Files = files }
func (c *Capture) Diagnostics(d hcl.Diagnostics)                 { c.Diags = append(c.Diags, d...) }
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
