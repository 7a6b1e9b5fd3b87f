package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision/cli/render"
	"github.com/provision-dev/provision/provision/plans"
	"github.com/provision-dev/provision/provision/run"
)

// planView shows a plan or the diagnostics that stopped it, as text, JSON
// or markdown, chosen once per command.
type planView interface {
	run.View
	// note tells a person what the command did beside its output (a file
	// written); on stderr, so that stdout stays the plan (or the JSON).
	note(format string, args ...any)
}

// formatView is the view -format names.
func (c *cli) formatView(format string, noColor bool) (planView, error) {
	switch format {
	case "text":
		return c.textView(noColor), nil
	case "json":
		return &jsonView{o: c.output}, nil
	case "markdown":
		return markdownView{&textView{o: c.output}}, nil
	}
	return nil, fmt.Errorf("unknown -format %q: use text, json or markdown", format)
}

// textView is the human rendering: the plan on stdout, diagnostics with
// their source snippets on stderr.
type textView struct {
	run.Silent
	o     *output
	color bool
	files map[string]*hcl.File
}

func (c *cli) textView(noColor bool) *textView {
	return &textView{o: c.output, color: c.color(c.stdout, noColor)}
}

func (v *textView) Loaded(files map[string]*hcl.File, secrets []string) {
	v.files = files
	v.o.secrets = append(v.o.secrets, secrets...)
}

func (v *textView) Plan(p *plans.Plan, warnings hcl.Diagnostics) {
	v.o.printDiags(warnings, v.files, v.color)
	_ = render.Text(v.o.stdout, shown(p).Redacted(), render.TextOptions{Color: v.color})
}

// shown is p as the text and markdown views read it: their no-op changes
// without the values (before, after, requests) they never print, so that
// a converged plan of 10,000 objects is not redacted for a summary line.
func shown(p *plans.Plan) *plans.Plan {
	q := *p
	q.Changes = make([]*plans.Change, len(p.Changes))
	for i, c := range p.Changes {
		if c.Action == plans.NoOp {
			d := *c
			d.Before, d.After, d.Requests = plans.View{}, plans.View{}, nil
			c = &d
		}
		q.Changes[i] = c
	}
	return &q
}

func (v *textView) Diagnostics(diags hcl.Diagnostics) { v.o.printDiags(diags, v.files, v.color) }

func (v *textView) note(format string, args ...any) { fmt.Fprintf(v.o.stderr, format+"\n", args...) }

// markdownView prints the plan for a pull-request comment, and its
// diagnostics as text on stderr.
type markdownView struct{ *textView }

func (v markdownView) Plan(p *plans.Plan, warnings hcl.Diagnostics) {
	v.o.printDiags(warnings, v.files, false)
	fmt.Fprint(v.o.stdout, strings.Join(render.Markdown(shown(p).Redacted()), "\n"))
}

// renderView prints what render makes of the plan (graph's apply order,
// list's addresses, output's values) instead of the plan, its warnings on
// stderr; failed is set when render failed.
type renderView struct {
	*textView
	render func(io.Writer, *plans.Plan) error
	failed bool
}

func (v *renderView) Plan(p *plans.Plan, warnings hcl.Diagnostics) {
	v.o.printDiags(warnings, v.files, false)
	if err := v.render(v.o.stdout, p.Redacted()); err != nil {
		v.failed = true
		v.Diagnostics(run.Refusal("Cannot print the plan", err.Error()+".", nil))
	}
}

// jsonView prints one JSON document: the plan, or the diagnostics that
// stopped the command.
type jsonView struct {
	run.Silent
	o *output
}

func (v *jsonView) Loaded(_ map[string]*hcl.File, secrets []string) {
	v.o.secrets = append(v.o.secrets, secrets...)
}

func (v *jsonView) Plan(p *plans.Plan, _ hcl.Diagnostics) { v.write(p.Redacted()) }

func (v *jsonView) note(format string, args ...any) { fmt.Fprintf(v.o.stderr, format+"\n", args...) }

func (v *jsonView) Diagnostics(diags hcl.Diagnostics) {
	v.write(struct {
		FormatVersion string             `json:"format_version"`
		Diagnostics   []plans.Diagnostic `json:"diagnostics"`
	}{plans.FormatVersion, plans.JSONDiagnostics(v.o.hide(diags))})
}

// write prints x as compact JSON on one line, as Terraform's -json
// output: indenting a large plan costs more than making it (pipe it to
// jq for a person).
func (v *jsonView) write(x any) {
	b, err := plans.MarshalJSON(x, "")
	if err == nil {
		_, _ = v.o.stdout.Write(append(b, '\n'))
	}
}

// validateView reports a validation: the diagnostics, and that the specs
// are valid.
type validateView interface {
	run.View
	valid(dir, project string, warnings hcl.Diagnostics)
}

// textValidate prints the diagnostics on stderr, colored for stderr.
type textValidate struct{ *textView }

func (v textValidate) valid(dir, _ string, warnings hcl.Diagnostics) {
	v.Diagnostics(warnings)
	fmt.Fprintf(v.o.stdout, "The specs in %s are valid.\n", dir)
}

// jsonValidate prints one document: whether the specs are valid, and the
// diagnostics.
type jsonValidate struct{ *jsonView }

type validation struct {
	FormatVersion string `json:"format_version"`
	Valid         bool   `json:"valid"`
	// Project is the specs' project, when they are valid: the pipeline
	// step refuses two folders of one project.
	Project     string             `json:"project,omitempty"`
	Diagnostics []plans.Diagnostic `json:"diagnostics"`
}

func (v jsonValidate) Diagnostics(diags hcl.Diagnostics) {
	v.write(validation{FormatVersion: plans.FormatVersion, Valid: !diags.HasErrors(), Diagnostics: plans.JSONDiagnostics(v.o.hide(diags))})
}

func (v jsonValidate) valid(_, project string, warnings hcl.Diagnostics) {
	v.write(validation{FormatVersion: plans.FormatVersion, Valid: true, Project: project, Diagnostics: plans.JSONDiagnostics(v.o.hide(warnings))})
}
