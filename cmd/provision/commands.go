package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision"
	"github.com/provision-dev/provision/provision/connect"
	"github.com/provision-dev/provision/schema"
)

// backends opens the backends the specs need, by name, with the flags'
// deadlines, pruning and replacements. With indices false the search
// backends are left out (destroy without -indices).
func (c *cli) backends(s *specs, f *planFlags, indices bool) ([]provision.Backend, hcl.Diagnostics) {
	o, diags := c.options(f, indices)
	bs, bdiags := connect.Backends(s.cfg, o)
	return bs, append(diags, bdiags...)
}

// options are the flags' and the environment's, for connect.
func (c *cli) options(f *planFlags, indices bool) (connect.Options, hcl.Diagnostics) {
	o := connect.Options{Env: c.getenv, Deadlines: f.net.deadlines(), Indices: indices, PruneIndices: f.prune != nil && *f.prune, VerifyTimeout: f.verifyTimeout}
	replace, err := parseAddrs(f.replace)
	if err != nil {
		return o, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Invalid -replace address", Detail: err.Error() + "."}}
	}
	o.Replace = replace
	return o, nil
}

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
	fs.Var(&f.targets, "target", "plan only this object: service.<id> or index.<name>, after agent.<name>. or search.<name>. when several are declared (repeatable)")
	fs.Var(&f.excludes, "exclude", "leave this object out of the plan (repeatable)")
	fs.Var(&f.replace, "replace", "register this owned service again in place even when converged, as after rotating the Consul token: service.<id> (repeatable)")
}

// open loads the specs of dir and opens the backends they need.
func (c *cli) open(dir string, f *planFlags, indices bool) (*specs, []provision.Backend, hcl.Diagnostics) {
	var extra []string
	if f.generated != "" {
		extra = append(extra, f.generated)
	}
	s, diags := c.loadWith(dir, f.vars, schema.Inputs{}, extra...)
	if diags.HasErrors() {
		return s, nil, diags
	}
	bs, bdiags := c.backends(s, f, indices)
	return s, bs, append(diags, bdiags...)
}

// makePlan plans the specs against the backends' live state and applies
// -target and -exclude.
func (c *cli) makePlan(ctx context.Context, s *specs, bs []provision.Backend, f *planFlags, mode provision.Mode) (*provision.Plan, hcl.Diagnostics) {
	p, diags := provision.MakePlan(ctx, s.cfg.Project, mode, bs)
	if diags.HasErrors() {
		return nil, diags
	}
	if k := c.clusterAgent(s, &f.net); k != nil {
		diags = append(diags, k.Forgotten(ctx, s.cfg.Project, p.Backends)...)
	}
	if err := replaced(p, f.replace); err != nil {
		return nil, append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid -replace address", Detail: err.Error()})
	}
	include, err := parseAddrs(f.targets)
	if err == nil {
		var exclude []provision.Addr
		if exclude, err = parseAddrs(f.excludes); err == nil {
			err = p.Target(include, exclude)
		}
	}
	if err != nil {
		return nil, append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid target", Detail: err.Error() + "."})
	}
	p.Diagnostics = provision.JSONDiagnostics(diags)
	p.Secrets = s.cfg.Secrets
	return p, diags
}

// clusterAgent is the cluster's agent, which holds the lock and keeps the
// record of the agents the project's services are on, with the flags'
// deadlines; nil when the specs use no Consul. Its settings are those of
// the backends, whose errors the commands have reported already.
func (c *cli) clusterAgent(s *specs, f *netFlags) connect.Cluster {
	k, _ := connect.OpenCluster(s.cfg, connect.Options{Deadlines: f.deadlines()})
	return k
}

// planDir plans dir with all its backends, for the commands that only
// show a plan.
func (c *cli) planDir(dir string, pf *planFlags) (*specs, *provision.Plan, hcl.Diagnostics) {
	s, bs, diags := c.open(dir, pf, true)
	if diags.HasErrors() {
		return s, nil, diags
	}
	ctx, cancel := pf.net.bound(context.Background())
	defer cancel()
	p, diags := c.makePlan(ctx, s, bs, pf, provision.Converge)
	return s, p, diags
}

// replaced checks that every -replace address is a service the plan
// registers again: one the project owns and the specs declare.
func replaced(p *provision.Plan, addrs []string) error {
	for _, a := range addrs {
		addr, _ := provision.ParseAddr(a)
		i := slices.IndexFunc(p.Changes, func(c *provision.Change) bool { return c.Addr == addr })
		if i < 0 || addr.Kind != "service" || p.Changes[i].Action == provision.Delete || p.Changes[i].Action == provision.Create {
			return fmt.Errorf("-replace %s names no service that the specs declare and the project owns: only such a service is registered again in place", a)
		}
	}
	return nil
}

func parseAddrs(ss []string) ([]provision.Addr, error) {
	var out []provision.Addr
	for _, s := range ss {
		a, err := provision.ParseAddr(s)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}

func byName(bs []provision.Backend) map[string]provision.Backend {
	m := map[string]provision.Backend{}
	for _, b := range bs {
		m[b.Info().Name] = b
	}
	return m
}

func (c *cli) plan(args []string) int {
	fs := c.flagSet("plan", "plan [options] [DIR]")
	out := fs.String("out", "", "save the plan to `FILE`, for apply FILE")
	jsonOut := fs.Bool("json", false, "print the plan as JSON (format_version "+provision.FormatVersion+"); same as -format=json")
	format := fs.String("format", "text", "`text`, json, or markdown (a pull-request comment, in parts under 65,000 characters)")
	detailed := fs.Bool("detailed-exitcode", false, "exit 0 with no changes, 1 on error, 2 with changes")
	noColor := fs.Bool("no-color", false, "no colors in the output")
	generate := fs.String("generate-config-out", "", "write the declarations of the objects that import blocks name and no block declares to `FILE` (never overwritten), then plan with it")
	var pf planFlags
	pf.register(fs)
	pos, code, ok := c.parse(fs, args, 1)
	if !ok {
		return code
	}
	if *jsonOut {
		*format = "json"
	}
	if _, err := c.formatView(*format, *noColor, nil); err != nil {
		c.planView(false, *noColor, nil).failed(refusal("Invalid -format", err.Error()+".", nil))
		return exitError
	}
	if *generate != "" {
		v, _ := c.formatView(*format, *noColor, nil)
		s, diags := c.generateConfig(v, dirArg(pos), *generate, &pf)
		if diags.HasErrors() {
			v, _ := c.formatView(*format, *noColor, s)
			v.failed(diags)
			return exitError
		}
	}
	s, p, diags := c.planDir(dirArg(pos), &pf)
	v, _ := c.formatView(*format, *noColor, s)
	if diags.HasErrors() {
		v.failed(diags)
		return exitError
	}
	p.Dir = dirArg(pos)
	v.plan(p, diags)
	if *out != "" {
		if err := provision.WritePlanFile(*out, p); err != nil {
			v.failed(refusal("Cannot save the plan", err.Error()+".", nil))
			return exitError
		}
		v.note("\nSaved the plan to %s. Apply exactly these requests with: provision apply %s", *out, *out)
	}
	if *detailed && p.Summary.HasChanges() {
		return exitChanges
	}
	return exitOK
}

// generateConfig writes the declarations of the undeclared imports of dir
// to path, which must not exist, and has the plan read it beside dir.
func (c *cli) generateConfig(v planView, dir, path string, pf *planFlags) (*specs, hcl.Diagnostics) {
	if _, err := os.Lstat(path); err == nil {
		return nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Generated spec file exists",
			Detail: fmt.Sprintf("-generate-config-out names %s, which exists; provision never overwrites a file with generated declarations. Name a new file, or move this one away.", path)}}
	}
	s, diags := c.loadWith(dir, pf.vars, schema.Inputs{GenerateConfig: true})
	if diags.HasErrors() {
		return s, diags
	}
	bs, bdiags := c.backends(s, pf, true)
	if diags = append(diags, bdiags...); diags.HasErrors() {
		return s, diags
	}
	ctx, cancel := pf.net.bound(context.Background())
	defer cancel()
	src, gdiags := provision.GenerateConfig(ctx, bs)
	if diags = append(diags, gdiags...); diags.HasErrors() {
		return s, diags
	}
	if src == nil {
		v.note("Nothing to generate: every import block names a declared object. %s was not written.", path)
		return s, diags
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err == nil {
		_, err = f.Write(src)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return s, append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Cannot write the generated spec", Detail: err.Error() + "."})
	}
	v.note("Wrote the generated declarations to %s. Review them; the plan below reads them.\n", path)
	pf.generated = path
	return s, diags
}

// planView prints a plan or the diagnostics that stopped it, as text or
// JSON, chosen once per command.
type planView interface {
	plan(p *provision.Plan, warnings hcl.Diagnostics)
	failed(diags hcl.Diagnostics)
	// note tells a person what the command did beside its output (a file
	// written); on stderr, so that stdout stays the plan (or the JSON).
	note(format string, args ...any)
}

// formatView is the view -format names.
func (c *cli) formatView(format string, noColor bool, s *specs) (planView, error) {
	switch format {
	case "text", "json":
		return c.planView(format == "json", noColor, s), nil
	case "markdown":
		v := textView{c: c}
		if s != nil {
			v.files = s.parser.Files()
		}
		return markdownView{v}, nil
	}
	return nil, fmt.Errorf("unknown -format %q: use text, json or markdown", format)
}

// markdownView prints the plan for a pull-request comment, and its
// diagnostics as text on stderr.
type markdownView struct{ textView }

func (v markdownView) plan(p *provision.Plan, warnings hcl.Diagnostics) {
	v.c.printDiags(warnings, v.files, false)
	fmt.Fprint(v.c.stdout, strings.Join(provision.RenderMarkdown(p.Redacted()), "\n"))
}

func (c *cli) planView(jsonOut, noColor bool, s *specs) planView {
	if jsonOut {
		return jsonView{c}
	}
	var files map[string]*hcl.File
	if s != nil {
		files = s.parser.Files()
	}
	return textView{c: c, color: c.color(c.stdout, noColor), files: files}
}

type textView struct {
	c     *cli
	color bool
	files map[string]*hcl.File
}

func (v textView) plan(p *provision.Plan, warnings hcl.Diagnostics) {
	v.c.printDiags(warnings, v.files, v.color)
	_ = provision.RenderText(v.c.stdout, p.Redacted(), provision.TextOptions{Color: v.color})
}

func (v textView) failed(diags hcl.Diagnostics) { v.c.printDiags(diags, v.files, v.color) }

func (v textView) note(format string, args ...any) { fmt.Fprintf(v.c.stderr, format+"\n", args...) }

type jsonView struct{ c *cli }

func (v jsonView) plan(p *provision.Plan, _ hcl.Diagnostics) { v.write(p.Redacted()) }

func (v jsonView) note(format string, args ...any) { fmt.Fprintf(v.c.stderr, format+"\n", args...) }

func (v jsonView) failed(diags hcl.Diagnostics) {
	v.write(struct {
		FormatVersion string                 `json:"format_version"`
		Diagnostics   []provision.Diagnostic `json:"diagnostics"`
	}{provision.FormatVersion, provision.JSONDiagnostics(v.c.hide(diags))})
}

// write prints x as compact JSON on one line, as Terraform's -json
// output: indenting a plan of 10,000 objects took longer than making it
// (pipe it to jq for a person).
func (v jsonView) write(x any) {
	_ = json.NewEncoder(v.c.stdout).Encode(x)
}

func (c *cli) graph(args []string) int {
	fs := c.flagSet("graph", "graph [options] [DIR]")
	var pf planFlags
	pf.register(fs)
	pos, code, ok := c.parse(fs, args, 1)
	if !ok {
		return code
	}
	s, p, diags := c.planDir(dirArg(pos), &pf)
	v := c.planView(false, true, s)
	if diags.HasErrors() {
		v.failed(diags)
		return exitError
	}
	if err := provision.RenderDOT(c.stdout, p); err != nil {
		v.failed(refusal("Cannot write the graph", err.Error()+".", nil))
		return exitError
	}
	return exitOK
}

func (c *cli) show(args []string) int {
	fs := c.flagSet("show", "show [options] PLANFILE")
	jsonOut := fs.Bool("json", false, "print the plan as JSON; same as -format=json")
	format := fs.String("format", "text", "`text`, json, or markdown")
	noColor := fs.Bool("no-color", false, "no colors in the output")
	partsDir := fs.String("parts-dir", "", "with -format=markdown, write each part to `DIR`/part-N.md (one pull-request comment each) instead of printing")
	pos, code, ok := c.parse(fs, args, 1)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		fs.Usage()
		return exitError
	}
	if *jsonOut {
		*format = "json"
	}
	v, err := c.formatView(*format, *noColor, nil)
	if err != nil {
		c.planView(false, *noColor, nil).failed(refusal("Invalid -format", err.Error()+".", nil))
		return exitError
	}
	p, err := provision.ReadPlanFile(pos[0])
	switch {
	case err != nil:
		v.failed(refusal("Cannot read the saved plan", err.Error()+".", nil))
		return exitError
	case *partsDir == "":
		v.plan(p, nil)
	default:
		if err := writeParts(*partsDir, provision.RenderMarkdown(p.Redacted())); err != nil {
			v.failed(refusal("Cannot write the parts", err.Error()+".", nil))
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
	fs := c.flagSet("validate", "validate [options] [DIR]")
	jsonOut := fs.Bool("json", false, "print the diagnostics as JSON")
	noColor := fs.Bool("no-color", false, "no colors in the output")
	var vf varFlags
	vf.register(fs)
	pos, code, ok := c.parse(fs, args, 1)
	if !ok {
		return code
	}
	s, diags := c.load(dirArg(pos), vf)
	if *jsonOut {
		jsonView{c}.write(struct {
			FormatVersion string                 `json:"format_version"`
			Valid         bool                   `json:"valid"`
			Diagnostics   []provision.Diagnostic `json:"diagnostics"`
		}{provision.FormatVersion, !diags.HasErrors(), provision.JSONDiagnostics(c.hide(diags))})
	} else {
		c.printDiags(diags, s.parser.Files(), c.color(c.stderr, *noColor))
		if !diags.HasErrors() {
			fmt.Fprintf(c.stdout, "The specs in %s are valid.\n", dirArg(pos))
		}
	}
	if diags.HasErrors() {
		return exitError
	}
	return exitOK
}
