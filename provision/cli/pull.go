package cli

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision/plans"
	"github.com/provision-dev/provision/provision/pull"
	"github.com/provision-dev/provision/provision/run"
	"github.com/rogpeppe/go-internal/diff"
)

// exitUnpulled is pull -detailed-exitcode's code for drift it says but
// cannot write into the specs (a value that comes from a variable, a
// module input or each): a scheduled job that opens a pull request on 2
// must not pass over it as if nothing drifted.
const exitUnpulled = 4

func (c *cli) pull(args []string) int {
	var a pullArgs
	pos, code, ok := c.args("pull", &a, args, 1, nil)
	if !ok {
		return code
	}
	v := pullView{c.textView(a.view.noColor)}
	ctx, cancel := a.run.net.bound(context.Background())
	defer cancel()
	op := c.operation(run.Pull, dirArg(pos), &a.run)
	if a.snapshot != "" {
		var diags hcl.Diagnostics
		if op.From, diags = readSnapshot(a.snapshot); diags.HasErrors() {
			v.Diagnostics(diags)
			return exitError
		}
	}
	r := op.Start(ctx, v)
	if r.Failed() {
		return exitError
	}
	res := r.Pulled
	if len(res.Files) == 0 {
		switch {
		case len(res.Diags) > 0:
			v.note("Nothing pulled: what differs is left as it is (above).")
			if a.detailed {
				return exitUnpulled
			}
		case len(a.run.targets) > 0:
			v.note("Nothing to pull: the objects targeted are as the specs declare them.")
		default:
			v.note("Nothing to pull: every object the project owns is as the specs declare it.")
		}
		return exitOK
	}
	if a.diff {
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
	if a.detailed {
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
