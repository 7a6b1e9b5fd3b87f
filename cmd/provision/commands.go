package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/cmd/provision/render"
	"github.com/provision-dev/provision/provision"
	"github.com/provision-dev/provision/provision/plans"
	"github.com/provision-dev/provision/provision/run"
	"github.com/provision-dev/provision/schema"
)

// planFlags are the options of every command that plans.
type planFlags struct {
	vars              varFlags
	targets, excludes listFlag
	replace           listFlag
	// generated is a spec file written by -generate-config-out, read
	// beside the directory's files.
	generated string
	net       netFlags
	prune     *bool
	// verifyTimeout bounds the proof through the declared proxies after
	// an apply; set by apply's and destroy's -verify-timeout.
	verifyTimeout time.Duration
}

func (f *planFlags) register(fs *flag.FlagSet) {
	f.net.register(fs, 30*time.Minute)
	f.prune = fs.Bool("prune-indices", false, "delete the project's indices that the specs no longer declare (kept by default: they hold data)")
	f.vars.register(fs)
	fs.Var(&f.targets, "target", "plan only this object: "+schema.AddrForms()+", after agent.<name>. or search.<name>. when several are declared (repeatable)")
	fs.Var(&f.excludes, "exclude", "leave this object out of the plan (repeatable)")
	fs.Var(&f.replace, "replace", "register this owned service again in place even when converged, as after rotating the Consul token: service.<id> (repeatable)")
}

// operation is the run the flags describe, with the environment.
func (c *cli) operation(t run.Type, dir string, f *planFlags) run.Operation {
	o := run.Operation{Type: t, Dir: dir, Vars: f.vars.vars, VarFiles: f.vars.files, Getenv: c.getenv, Environ: c.environ,
		SearchIndices: true, Replace: f.replace, Targets: f.targets, Excludes: f.excludes, VerifyTimeout: f.verifyTimeout}
	if f.net.request != nil {
		o.Deadlines = f.net.deadlines()
	}
	if f.prune != nil {
		o.PruneIndices = *f.prune
	}
	if f.generated != "" {
		o.Extra = []string{f.generated}
	}
	return o
}

func (c *cli) plan(args []string) int {
	fs := c.flagSet("plan")
	out := fs.String("out", "", "save the plan to `FILE`, for apply FILE")
	jsonOut := fs.Bool("json", false, "print the plan as JSON (format_version "+plans.FormatVersion+"); same as -format=json")
	format := fs.String("format", "text", "`text`, json, or markdown (a pull-request comment, in parts under 65,000 characters)")
	detailed := fs.Bool("detailed-exitcode", false, "exit 0 with no changes, 1 on error, 2 with changes")
	noColor := noColorFlag(fs)
	generate := fs.String("generate-config-out", "", "write the declarations of the objects that import blocks name and no block declares to `FILE` (never overwritten), then plan with it")
	snapshot := fs.String("snapshot", "", "plan from the live state recorded in `FILE` by provision snapshot, with no network; such a plan is never applied")
	var pf planFlags
	pf.register(fs)
	pos, code, ok := c.parse(fs, args, 1, &jsonView{o: c.output})
	if !ok {
		return code
	}
	if *jsonOut {
		*format = "json"
	}
	v, err := c.formatView(*format, *noColor)
	if err != nil {
		c.textView(*noColor).Diagnostics(run.Refusal("Invalid -format", err.Error()+".", nil))
		return exitError
	}
	ctx, cancel := pf.net.bound(context.Background())
	defer cancel()
	if *generate != "" && !c.generateConfig(ctx, v, dirArg(pos), *generate, &pf) {
		return exitError
	}
	op := c.operation(run.Plan, dirArg(pos), &pf)
	if *snapshot != "" {
		if *generate != "" {
			v.Diagnostics(run.Refusal("Invalid options", "-generate-config-out reads the live objects; it cannot be used with -snapshot.", nil))
			return exitError
		}
		var diags hcl.Diagnostics
		if op.From, diags = provision.ReadSnapshot(*snapshot); diags.HasErrors() {
			v.Diagnostics(diags)
			return exitError
		}
	}
	if *out != "" {
		op.Hooks = map[run.Phase][]run.Hook{run.Diff: {func(_ context.Context, r *run.Run) hcl.Diagnostics {
			if err := plans.WritePlanFile(*out, r.Plan); err != nil {
				return run.Refusal("Cannot save the plan", err.Error()+".", nil)
			}
			v.note("\nSaved the plan to %s. Apply exactly these requests with: provision apply %s", *out, *out)
			return nil
		}}}
	}
	r := op.Start(ctx, v)
	switch {
	case r.Failed():
		if pf.generated != "" {
			setAside(v, pf.generated)
		}
		return exitError
	case *detailed && r.Plan.Summary.HasChanges():
		return exitChanges
	}
	return exitOK
}

// generateConfig writes the declarations of the undeclared imports of dir
// to path, which must not exist, and has the plan read it beside dir. It
// returns false when the command must stop.
func (c *cli) generateConfig(ctx context.Context, v planView, dir, path string, pf *planFlags) bool {
	if _, err := os.Lstat(path); err == nil {
		v.Diagnostics(run.Refusal("Generated spec file exists",
			fmt.Sprintf("-generate-config-out names %s, which exists; provision never overwrites a file with generated declarations. Name a new file, or move this one away.", path), nil))
		return false
	}
	r := c.operation(run.Generate, dir, pf).Start(ctx, v)
	switch {
	case r.Failed():
		return false
	case r.Generated == nil:
		v.note("Nothing to generate: every import block names a declared object. %s was not written.", path)
		return true
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err == nil {
		_, err = f.Write(r.Generated)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		v.Diagnostics(run.Refusal("Cannot write the generated spec", err.Error()+".", nil))
		return false
	}
	v.note("Wrote the generated declarations to %s. Review them; the plan below reads them.\n", path)
	pf.generated = path
	return true
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
	fs := c.flagSet("graph")
	var pf planFlags
	pf.register(fs)
	pos, code, ok := c.parse(fs, args, 1, nil)
	if !ok {
		return code
	}
	ctx, cancel := pf.net.bound(context.Background())
	defer cancel()
	v := &dotView{textView: &textView{o: c.output}}
	if c.operation(run.Plan, dirArg(pos), &pf).Start(ctx, v).Failed() || v.failed {
		return exitError
	}
	return exitOK
}

func (c *cli) show(args []string) int {
	fs := c.flagSet("show")
	jsonOut := fs.Bool("json", false, "print the plan as JSON; same as -format=json")
	format := fs.String("format", "text", "`text`, json, or markdown")
	noColor := noColorFlag(fs)
	partsDir := fs.String("parts-dir", "", "with -format=markdown, write each part to `DIR`/part-N.md (one pull-request comment each) instead of printing")
	pos, code, ok := c.parse(fs, args, 1, &jsonView{o: c.output})
	if !ok {
		return code
	}
	if *jsonOut {
		*format = "json"
	}
	v, err := c.formatView(*format, *noColor)
	if err != nil {
		c.textView(*noColor).Diagnostics(run.Refusal("Invalid -format", err.Error()+".", nil))
		return exitError
	}
	if len(pos) != 1 {
		v.Diagnostics(run.Refusal("No saved plan", "show needs the saved plan to print: provision show PLANFILE.", nil))
		return exitError
	}
	p, err := plans.ReadPlanFile(pos[0])
	switch {
	case err != nil:
		v.Diagnostics(run.Refusal("Cannot read the saved plan", err.Error()+".", nil))
		return exitError
	case *partsDir == "":
		v.Plan(p, nil)
	default:
		if err := writeParts(*partsDir, render.Markdown(p.Redacted())); err != nil {
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
	fs := c.flagSet("validate")
	jsonOut := fs.Bool("json", false, "print the diagnostics as JSON")
	noColor := noColorFlag(fs)
	var pf planFlags
	pf.vars.register(fs)
	pos, code, ok := c.parse(fs, args, 1, jsonValidate{&jsonView{o: c.output}})
	if !ok {
		return code
	}
	var v validateView = textValidate{&textView{o: c.output, color: c.color(c.stderr, *noColor)}}
	if *jsonOut {
		v = jsonValidate{&jsonView{o: c.output}}
	}
	r := c.operation(run.Validate, dirArg(pos), &pf).Start(context.Background(), v)
	if r.Failed() {
		return exitError
	}
	v.valid(dirArg(pos), r.Warnings)
	return exitOK
}
