package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision/cli/render"
	"github.com/provision-dev/provision/provision/connect"
	"github.com/provision-dev/provision/provision/plans"
	"github.com/provision-dev/provision/provision/run"
)

func (c *cli) plan(args []string) int {
	var a planArgs
	pos, code, ok := c.args("plan", &a, args, 1, &jsonView{o: c.output})
	if !ok {
		return code
	}
	if a.view.json {
		a.format = "json"
	}
	v, err := c.formatView(a.format, a.view.noColor)
	if err != nil {
		c.textView(a.view.noColor).Diagnostics(run.Refusal("Invalid -format", err.Error()+".", nil))
		return exitError
	}
	pf := &a.run
	ctx, cancel := pf.net.bound(context.Background())
	defer cancel()
	op := c.operation(run.Plan, dirArg(pos), pf)
	if a.indices && !a.destroy {
		v.Diagnostics(run.Refusal("Invalid options", "-indices says what plan -destroy removes; give it with -destroy.", nil))
		return exitError
	}
	if a.destroy && (len(pf.replace) > 0 || pf.prune) {
		v.Diagnostics(run.Refusal("Invalid options", "-replace and -prune-indices say what a plan that converges does; plan -destroy removes what the project owns (-indices for its indices too).", nil))
		return exitError
	}
	if a.destroy {
		op.DestroyPlan, op.Remove = true, plans.Removal{connect.RemoveIndices: a.indices}
	}
	if a.generate != "" && (a.from.snapshot != "" || a.from.greenfield) {
		v.Diagnostics(run.Refusal("Invalid options", "-generate-config-out reads the live objects; it cannot be used with -snapshot or -greenfield.", nil))
		return exitError
	}
	if diags := a.from.set(&op); diags.HasErrors() {
		v.Diagnostics(diags)
		return exitError
	}
	op.GenerateConfigOut = a.generate
	r := op.Start(ctx, &planning{planView: v, out: a.out, generate: a.generate})
	switch {
	case r.Failed():
		if r.GeneratedFile != "" {
			setAside(v, r.GeneratedFile)
		}
		return exitError
	case len(r.PolicyFailures) > 0:
		v.Diagnostics(r.PolicyFailures)
		return exitError
	case a.detailed && r.Plan.Summary.HasChanges():
		return exitChanges
	}
	return exitOK
}

// planning is plan's view: after make config it says what was written,
// and after diff it saves the plan to out (-out).
type planning struct {
	planView
	out, generate string
}

func (v *planning) PostPhase(_ context.Context, ph run.Phase, r *run.Run) hcl.Diagnostics {
	switch {
	case ph == run.MakeConfig && r.GeneratedFile == "":
		v.note("Nothing to generate: every import block names a declared object. %s was not written.", v.generate)
	case ph == run.MakeConfig:
		v.note("Wrote the generated declarations to %s. Review them; the plan below reads them.\n", r.GeneratedFile)
	case ph == run.Diff && v.out != "":
		if err := plans.WritePlanFile(v.out, r.Plan); err != nil {
			return run.Refusal("Cannot save the plan", err.Error()+".", nil)
		}
		if len(r.PolicyFailures) > 0 {
			v.note("\nSaved the plan to %s. It fails mandatory policies (below): apply refuses it while they fail.", v.out)
			break
		}
		v.note("\nSaved the plan to %s. Apply exactly these requests with: provision apply %s", v.out, v.out)
	}
	return nil
}

// setAside moves generated declarations whose plan failed out of the
// specs (FILE.rejected, which no load reads), so that the next plan does
// not fail on them and a second -generate-config-out may write FILE.
func setAside(v planView, path string) {
	aside := path + ".rejected"
	if err := os.Rename(path, aside); err != nil {
		v.note("The plan with the generated declarations failed (above), and %s could not be moved aside: %v. Move it out of the specs before the next plan.", path, err)
		return
	}
	v.note("The plan with the generated declarations failed (above): they are moved aside to %s, out of the specs. Fix what the errors say, then move the file back (or generate again).", aside)
}

func (c *cli) graph(args []string) int {
	var a plannedArgs
	pos, code, ok := c.args("graph", &a, args, 1, nil)
	if !ok {
		return code
	}
	return c.planned(dirArg(pos), &a.run, &a.from, &renderView{textView: &textView{o: c.output}, render: render.DOT})
}

// planned plans the specs of dir as plan does (from the live systems, a
// snapshot or nothing live) and shows the plan with v.
func (c *cli) planned(dir string, ra *runArgs, from *fromArgs, v *renderView) int {
	ctx, cancel := ra.net.bound(context.Background())
	defer cancel()
	op := c.operation(run.Plan, dir, ra)
	if diags := from.set(&op); diags.HasErrors() {
		v.Diagnostics(diags)
		return exitError
	}
	if op.Start(ctx, v).Failed() || v.failed {
		return exitError
	}
	return exitOK
}

func (c *cli) list(args []string) int {
	var a plannedArgs
	pos, code, ok := c.args("list", &a, args, 1, nil)
	if !ok {
		return code
	}
	// An empty list says why on stderr (a first apply's, -greenfield's),
	// so that a script reads stdout alone.
	list := func(w io.Writer, p *plans.Plan) error {
		if len(render.OwnedAddrs(p)) == 0 {
			fmt.Fprintf(c.stderr, "The project %q owns no object yet: the plan creates %d (provision plan shows them).\n", p.Project, p.Summary.Create)
		}
		return render.Owned(w, p)
	}
	return c.planned(dirArg(pos), &a.run, &a.from, &renderView{textView: &textView{o: c.output}, render: list})
}

func (c *cli) outputCmd(args []string) int {
	var a outputArgs
	pos, code, ok := c.args("output", &a, args, 2, &jsonView{o: c.output})
	if !ok {
		return code
	}
	// output [DIR] [NAME]: one argument is DIR when it is a folder.
	dir, name := "", ""
	switch len(pos) {
	case 2:
		dir, name = pos[0], pos[1]
	case 1:
		if st, err := os.Stat(pos[0]); err == nil && st.IsDir() {
			dir = pos[0]
		} else {
			name = pos[0]
		}
	}
	write := func(w io.Writer, p *plans.Plan) error { return render.OutputValues(w, p, name, a.view.json, a.raw) }
	return c.planned(dirArg(nonEmpty(dir)), &a.run, &a.from, &renderView{textView: &textView{o: c.output}, render: write})
}

// nonEmpty is the positional arguments of dir: none when it is "".
func nonEmpty(dir string) []string {
	if dir == "" {
		return nil
	}
	return []string{dir}
}

func (c *cli) show(args []string) int {
	var a showArgs
	pos, code, ok := c.args("show", &a, args, 1, &jsonView{o: c.output})
	if !ok {
		return code
	}
	if a.view.json {
		a.format = "json"
	}
	v, err := c.formatView(a.format, a.view.noColor)
	if err != nil {
		c.textView(a.view.noColor).Diagnostics(run.Refusal("Invalid -format", err.Error()+".", nil))
		return exitError
	}
	if len(pos) != 1 {
		v.Diagnostics(run.Refusal("No saved plan", "show needs the saved plan to print: provision show PLANFILE.", nil))
		return exitError
	}
	p, err := plans.ReadPlanFile(pos[0], c.Language.Kinds())
	switch {
	case err != nil:
		v.Diagnostics(run.Refusal("Cannot read the saved plan", err.Error()+".", nil))
		return exitError
	case a.partsDir == "":
		v.Plan(p, nil)
	default:
		if err := writeParts(a.partsDir, render.Markdown(p.Redacted())); err != nil {
			v.Diagnostics(run.Refusal("Cannot write the parts", err.Error()+".", nil))
			return exitError
		}
	}
	return exitOK
}

// writeParts writes markdown parts as dir/part-1.md, part-2.md, ...
func writeParts(dir string, parts []string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for i, part := range parts {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("part-%d.md", i+1)), []byte(part), 0o644); err != nil {
			return err
		}
	}
	return nil
}

func (c *cli) validate(args []string) int {
	var a validateArgs
	pos, code, ok := c.args("validate", &a, args, 1, jsonValidate{&jsonView{o: c.output}})
	if !ok {
		return code
	}
	var v validateView = textValidate{&textView{o: c.output, color: c.color(c.stderr, a.view.noColor)}}
	if a.view.json {
		v = jsonValidate{&jsonView{o: c.output}}
	}
	r := c.operation(run.Validate, dirArg(pos), &a.run).Start(context.Background(), v)
	if r.Failed() {
		return exitError
	}
	v.valid(dirArg(pos), r.Config.Project, r.Warnings)
	return exitOK
}
