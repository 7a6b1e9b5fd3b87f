package main

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision"
	"github.com/provision-dev/provision/provision/plans"
	"github.com/provision-dev/provision/provision/pull"
	"github.com/provision-dev/provision/provision/run"
	"github.com/rogpeppe/go-internal/diff"
)

func (c *cli) pull(args []string) int {
	fs := c.flagSet("pull")
	showDiff := fs.Bool("diff", false, "print the rewrites as a unified diff of the spec files and write nothing")
	detailed := fs.Bool("detailed-exitcode", false, "exit 0 when nothing is left to pull, 1 on error, 2 when files were (or, with -diff, would be) rewritten")
	noColor := noColorFlag(fs)
	snapshot := fs.String("snapshot", "", "pull from the live state recorded in `FILE` by provision snapshot, with no network")
	var pf planFlags
	pf.net.register(fs, 30*time.Minute)
	pf.vars.register(fs)
	fs.Var(&pf.targets, "target", "pull only this object (an address as plan's -target takes it; repeatable)")
	fs.Var(&pf.excludes, "exclude", "leave this object out of the pull (repeatable)")
	pos, code, ok := c.parse(fs, args, 1, nil)
	if !ok {
		return code
	}
	v := pullView{c.textView(*noColor)}
	include, exclude, err := run.ParseTargets(pf.targets, pf.excludes)
	if err != nil {
		v.Diagnostics(run.Refusal("Invalid target", err.Error()+".", nil))
		return exitError
	}
	ctx, cancel := pf.net.bound(context.Background())
	defer cancel()
	// The whole plan is made: whether a shared expression may be
	// rewritten depends on every object that evaluates it, targeted or
	// not.
	targets := pf.targets
	pf.targets, pf.excludes = nil, nil
	op := c.operation(run.Plan, dirArg(pos), &pf)
	if *snapshot != "" {
		var diags hcl.Diagnostics
		if op.From, diags = provision.ReadSnapshot(*snapshot); diags.HasErrors() {
			v.Diagnostics(diags)
			return exitError
		}
	}
	r := op.Start(ctx, v)
	if r.Failed() {
		return exitError
	}
	res := pull.Pull(pull.Specs{Dir: r.Dir, Config: r.Config,
		Selected: func(a plans.Addr) bool { return plans.Selected(a, include, exclude) }}, r.Plan)
	v.Diagnostics(res.Diags)
	if res.Diags.HasErrors() {
		return exitError
	}
	if len(res.Files) == 0 {
		switch {
		case len(res.Diags) > 0:
			v.note("Nothing pulled: what differs is left as it is (above).")
		case len(targets) > 0:
			v.note("Nothing to pull: the objects targeted are as the specs declare them.")
		default:
			v.note("Nothing to pull: every object the project owns is as the specs declare it.")
		}
		return exitOK
	}
	if diags := checkPulled(ctx, op, r, res); diags.HasErrors() {
		v.Diagnostics(diags)
		return exitError
	}
	if *showDiff {
		for _, f := range res.Order {
			fmt.Fprintf(c.stdout, "%s", diff.Diff(f, res.Before[f], f+" (pulled)", res.Files[f]))
		}
		v.note("-diff: nothing was written. %s", pulledLine(res))
	} else {
		if written, err := writeAll(res); err != nil {
			done := "Nothing was written."
			if len(written) > 0 {
				done = "Written before it: " + strings.Join(written, ", ") + "; the others are as they were."
			}
			v.Diagnostics(run.Refusal("Cannot write the pulled files", err.Error()+". "+done, nil))
			return exitError
		}
		for _, o := range res.Objects {
			if len(o.Paths) > 0 {
				fmt.Fprintf(c.stdout, "%s: pulled %s\n", o.Addr, strings.Join(o.Paths, ", "))
			}
		}
		fmt.Fprintf(c.stdout, "\n%s\n", pulledLine(res))
	}
	if *detailed {
		return exitChanges
	}
	return exitOK
}

// pullView shows what a run of pull finds, less the plan itself.
type pullView struct{ *textView }

func (v pullView) Plan(_ *plans.Plan, warnings hcl.Diagnostics) { v.Diagnostics(warnings) }

func pulledLine(res *pull.Result) string {
	n := 0
	for _, o := range res.Objects {
		if len(o.Paths) > 0 {
			n++
		}
	}
	return fmt.Sprintf("Pulled %s into %s: %s.", count(n, "object"), count(len(res.Order), "file"), strings.Join(res.Order, ", "))
}

func count(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// checkPulled plans the rewritten specs, in a copy, from the state the
// pull was made from: every object pulled must plan no change, and every
// object that planned none still plan none. Nothing is written
// otherwise.
func checkPulled(ctx context.Context, op run.Operation, r *run.Run, res *pull.Result) hcl.Diagnostics {
	refuse := func(detail string) hcl.Diagnostics {
		return run.Refusal("Pull cannot make the plan empty", detail+" Nothing was written.", nil)
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
	check := op
	check.Dir, check.From, check.Hooks, check.Specs = filepath.Join(tmp, dir), provision.Reread(r.Live), nil, nil
	quiet := &recordView{}
	again := check.Start(ctx, quiet)
	if again.Failed() {
		return refuse(fmt.Sprintf("The rewritten specs do not plan: %s.", summaries(quiet.diags)))
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

// recordView keeps what a run reports and shows nothing.
type recordView struct{ diags hcl.Diagnostics }

func (v *recordView) Loaded(map[string]*hcl.File, []string) {}
func (v *recordView) Diagnostics(d hcl.Diagnostics)         { v.diags = append(v.diags, d...) }
func (v *recordView) Plan(*plans.Plan, hcl.Diagnostics)     {}

func summaries(diags hcl.Diagnostics) string {
	var out []string
	for _, d := range diags {
		if d.Severity == hcl.DiagError {
			out = append(out, d.Summary+": "+d.Detail)
		}
	}
	return strings.Join(out, "; ")
}

// writeAll writes every file pulled, each through a temporary file
// renamed over it: a file is either the old text or the new. It returns
// the files written before an error.
func writeAll(res *pull.Result) ([]string, error) {
	var tmps []string
	defer func() {
		for _, t := range tmps {
			os.Remove(t)
		}
	}()
	for _, f := range res.Order {
		t := f + ".pull.tmp"
		mode := fs.FileMode(0o644)
		if st, err := os.Stat(f); err == nil {
			mode = st.Mode().Perm()
		}
		if err := os.WriteFile(t, res.Files[f], mode); err != nil {
			return nil, err
		}
		tmps = append(tmps, t)
	}
	for i, f := range res.Order {
		if err := os.Rename(tmps[i], f); err != nil {
			return res.Order[:i], err
		}
	}
	tmps = nil
	return res.Order, nil
}
