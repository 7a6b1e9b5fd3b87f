package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision"
	"github.com/provision-dev/provision/provision/consul"
	"github.com/provision-dev/provision/provision/search"
)

// backends opens the backends the specs need, by name. With indices false
// the search backends are left out (destroy without -indices).
func (c *cli) backends(s *specs, indices bool) ([]provision.Backend, hcl.Diagnostics) {
	var out []provision.Backend
	cb, diags := consul.New(s.cfg)
	if cb != nil {
		out = append(out, cb)
	}
	if indices {
		sbs, sdiags := search.New(s.cfg, c.getenv)
		out = append(out, sbs...)
		diags = append(diags, sdiags...)
	}
	return out, diags
}

// reopen opens the backends a saved plan names.
func (c *cli) reopen(p *provision.Plan) (map[string]provision.Backend, error) {
	out := map[string]provision.Backend{}
	for _, info := range p.Backends {
		var (
			b   provision.Backend
			err error
		)
		switch info.Kind {
		case "consul":
			b, err = consul.Reopen(info)
		case "search":
			b, err = search.Reopen(info, c.getenv)
		default:
			err = fmt.Errorf("unknown backend kind %q", info.Kind)
		}
		if err != nil {
			return nil, fmt.Errorf("backend %s: %w", info.Name, err)
		}
		out[info.Name] = b
	}
	return out, nil
}

// planFlags are the options of every command that plans.
type planFlags struct {
	vars              varFlags
	targets, excludes listFlag
}

func (f *planFlags) register(fs *flag.FlagSet) {
	f.vars.register(fs)
	fs.Var(&f.targets, "target", "plan only this object: service.<id> or index.<name> (repeatable)")
	fs.Var(&f.excludes, "exclude", "leave this object out of the plan (repeatable)")
}

// open loads the specs of dir and opens the backends they need.
func (c *cli) open(dir string, f *planFlags, indices bool) (*specs, []provision.Backend, hcl.Diagnostics) {
	s, diags := c.load(dir, f.vars)
	if diags.HasErrors() {
		return s, nil, diags
	}
	bs, bdiags := c.backends(s, indices)
	return s, bs, append(diags, bdiags...)
}

// makePlan plans the specs against the backends' live state and applies
// -target and -exclude.
func (c *cli) makePlan(ctx context.Context, s *specs, bs []provision.Backend, f *planFlags, mode provision.Mode) (*provision.Plan, hcl.Diagnostics) {
	p, diags := provision.MakePlan(ctx, s.cfg.Project, mode, bs)
	if diags.HasErrors() {
		return nil, diags
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
	return p, diags
}

// planDir plans dir with all its backends, for the commands that only
// show a plan.
func (c *cli) planDir(dir string, pf *planFlags) (*specs, *provision.Plan, hcl.Diagnostics) {
	s, bs, diags := c.open(dir, pf, true)
	if diags.HasErrors() {
		return s, nil, diags
	}
	p, diags := c.makePlan(context.Background(), s, bs, pf, provision.Converge)
	return s, p, diags
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
	var pf planFlags
	pf.register(fs)
	pos, code, ok := c.parse(fs, args, 1)
	if !ok {
		return code
	}
	s, p, diags := c.planDir(dirArg(pos), &pf)
	if *jsonOut {
		*format = "json"
	}
	v, err := c.formatView(*format, *noColor, s)
	if err != nil {
		fmt.Fprintf(c.stderr, "Error: %s\n", err)
		return exitError
	}
	if diags.HasErrors() {
		v.failed(diags)
		return exitError
	}
	v.plan(p, diags)
	if *out != "" {
		if err := provision.WritePlanFile(*out, p); err != nil {
			fmt.Fprintf(c.stderr, "Error: cannot save the plan: %s\n", err)
			return exitError
		}
		fmt.Fprintf(c.stderr, "\nSaved the plan to %s. Apply exactly these requests with: provision apply %s\n", *out, *out)
	}
	if *detailed && p.Summary.HasChanges() {
		return exitChanges
	}
	return exitOK
}

// planView prints a plan or the diagnostics that stopped it, as text or
// JSON, chosen once per command.
type planView interface {
	plan(p *provision.Plan, warnings hcl.Diagnostics)
	failed(diags hcl.Diagnostics)
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

type jsonView struct{ c *cli }

func (v jsonView) plan(p *provision.Plan, _ hcl.Diagnostics) { v.write(p.Redacted()) }

func (v jsonView) failed(diags hcl.Diagnostics) {
	v.write(struct {
		FormatVersion string                 `json:"format_version"`
		Diagnostics   []provision.Diagnostic `json:"diagnostics"`
	}{provision.FormatVersion, provision.JSONDiagnostics(diags)})
}

func (v jsonView) write(x any) {
	b, _ := json.MarshalIndent(x, "", "  ")
	fmt.Fprintf(v.c.stdout, "%s\n", b)
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
	if diags.HasErrors() {
		c.printDiags(diags, s.parser.Files(), false)
		return exitError
	}
	if err := provision.RenderDOT(c.stdout, p); err != nil {
		fmt.Fprintf(c.stderr, "Error: %s\n", err)
		return exitError
	}
	return exitOK
}

func (c *cli) show(args []string) int {
	fs := c.flagSet("show", "show [options] PLANFILE")
	jsonOut := fs.Bool("json", false, "print the plan as JSON; same as -format=json")
	format := fs.String("format", "text", "`text`, json, or markdown")
	noColor := fs.Bool("no-color", false, "no colors in the output")
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
	if err == nil {
		var p *provision.Plan
		if p, err = provision.ReadPlanFile(pos[0]); err == nil {
			v.plan(p, nil)
			return exitOK
		}
	}
	fmt.Fprintf(c.stderr, "Error: %s\n", err)
	return exitError
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
		}{provision.FormatVersion, !diags.HasErrors(), provision.JSONDiagnostics(diags)})
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

// confirm asks for "yes" on a terminal; anywhere else it refuses, since a
// pipeline that waits for input would hang.
func (c *cli) confirm(command, question string) bool {
	if !c.isTerminal(c.stdin) {
		fmt.Fprintf(c.stderr, "\nError: %s needs confirmation, and standard input is not a terminal.\n"+
			"Pass -auto-approve, or save a reviewed plan with plan -out=FILE and apply that file.\n", command)
		return false
	}
	fmt.Fprintf(c.stdout, "\n%s Only 'yes' will be accepted.\n  Enter a value: ", question)
	line, _ := bufio.NewReader(c.stdin).ReadString('\n')
	if strings.TrimSpace(line) != "yes" {
		fmt.Fprintf(c.stderr, "\nCancelled: nothing was sent.\n")
		return false
	}
	return true
}
