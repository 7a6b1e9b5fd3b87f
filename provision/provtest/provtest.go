// Package provtest runs a project's own golden-file tests of its plans:
// the run blocks of DIR/tests/*.provtest.hcl, each a plan of the specs
// made with no network from a snapshot of the live state (or from nothing
// live), compared with the golden text and JSON plans kept beside the test
// file. A run is one plan operation of package run, given the snapshot in
// place of its reads, so a test plans exactly as plan -snapshot does.
package provtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/provision-dev/provision/provision"
	"github.com/provision-dev/provision/provision/addrs"
	"github.com/provision-dev/provision/provision/plans"
	"github.com/provision-dev/provision/provision/policies"
	"github.com/provision-dev/provision/provision/run"
	"github.com/provision-dev/provision/schema"
	"github.com/zclconf/go-cty/cty"
	ctyjson "github.com/zclconf/go-cty/cty/json"
)

// Run is one run block.
type Run struct {
	Name string
	// File is the test file, Snapshot the snapshot's path as the block
	// gives it (relative to the file); "" plans against nothing live.
	File, Snapshot  string
	Variables       map[string]cty.Value
	ExpectNoChanges bool
	// ExpectFailures are the references where the plan must fail
	// ("var.api_port").
	ExpectFailures []string
	// Asserts are the run's assert blocks: rules over the plan.
	Asserts   []Assert
	DeclRange hcl.Range
}

// Assert is an assert block, as terraform test's: condition is an
// expression over plan, the JSON plan's model (plan.summary.delete,
// plan.changes[*].action, .address, .reasons, ...), and declared, the
// objects the specs declare (each its address, kind, name and module),
// with the specs' functions; error_message says what failed.
type Assert struct {
	Condition    hcl.Expression
	ErrorMessage string
	DeclRange    hcl.Range
}

// Golden is the base path of the run's golden files (.txt, .json):
// tests/golden/<file stem>/<run name>, beside the test file.
func (r *Run) Golden() string {
	stem := strings.TrimSuffix(filepath.Base(r.File), ".provtest.hcl")
	return filepath.Join(filepath.Dir(r.File), "golden", stem, slug(r.Name))
}

var unsafe = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

func slug(name string) string { return strings.Trim(unsafe.ReplaceAllString(name, "-"), "-") }

var fileSchema = &hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{{Type: "run", LabelNames: []string{"name"}}}}

var runSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "snapshot"}, {Name: "variables"}, {Name: "expect_no_changes"}, {Name: "expect_failures"}},
	Blocks:     []hcl.BlockHeaderSchema{{Type: "assert"}},
}

var assertSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "condition", Required: true}, {Name: "error_message", Required: true}}}

// Load reads the run blocks of dir/tests/*.provtest.hcl, in file and
// block order. The sources are in parser, for diagnostics.
func Load(parser *hclparse.Parser, dir string) ([]*Run, hcl.Diagnostics) {
	files, _ := filepath.Glob(filepath.Join(dir, "tests", "*.provtest.hcl"))
	sort.Strings(files)
	var runs []*Run
	var diags hcl.Diagnostics
	for _, path := range files {
		f, fdiags := parser.ParseHCLFile(path)
		diags = append(diags, fdiags...)
		if f == nil {
			continue
		}
		content, cdiags := f.Body.Content(fileSchema)
		diags = append(diags, cdiags...)
		for _, b := range content.Blocks {
			r, rdiags := decodeRun(path, b)
			diags = append(diags, rdiags...)
			if r == nil {
				continue
			}
			if i := slices.IndexFunc(runs, func(o *Run) bool { return o.File == r.File && slug(o.Name) == slug(r.Name) }); i >= 0 {
				diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Duplicate run block",
					Detail:  fmt.Sprintf("A run named %q (golden files %s) is already declared at %s; give each run of a file its own name.", r.Name, r.Golden(), runs[i].DeclRange),
					Subject: b.LabelRanges[0].Ptr()})
				continue
			}
			runs = append(runs, r)
		}
	}
	return runs, diags
}

func decodeRun(path string, b *hcl.Block) (*Run, hcl.Diagnostics) {
	r := &Run{Name: b.Labels[0], File: path, DeclRange: b.DefRange}
	content, diags := b.Body.Content(runSchema)
	if diags.HasErrors() {
		return nil, diags
	}
	if a := content.Attributes["snapshot"]; a != nil {
		v, d := a.Expr.Value(nil)
		diags = append(diags, d...)
		if !d.HasErrors() && (v.Type() != cty.String || v.IsNull()) {
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid snapshot", Detail: "snapshot is the path of a snapshot file, relative to the test file.", Subject: a.Expr.Range().Ptr()})
		} else if !d.HasErrors() {
			r.Snapshot = v.AsString()
			if _, err := os.Stat(r.snapshotPath()); err != nil {
				diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Snapshot file not found",
					Detail:  fmt.Sprintf("%s. Take one with provision snapshot -out %s, or leave snapshot out to plan against nothing live.", err, r.snapshotPath()),
					Subject: a.Expr.Range().Ptr()})
			} else if _, err := schema.Confined(r.snapshotPath(), filepath.Dir(r.File)); err != nil {
				diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Snapshot file refused",
					Detail:  fmt.Sprintf("The snapshot %s: a test reads its snapshot from the test file's folder or below, so that no test shows another file.", err),
					Subject: a.Expr.Range().Ptr()})
			}
		}
	}
	if a := content.Attributes["variables"]; a != nil {
		v, d := a.Expr.Value(nil)
		diags = append(diags, d...)
		if !d.HasErrors() && (!v.Type().IsObjectType() && !v.Type().IsMapType() || v.IsNull()) {
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid variables", Detail: "variables is an object of the values to give the specs' variables, as -var does: { api_port = 8081 }.", Subject: a.Expr.Range().Ptr()})
		} else if !d.HasErrors() {
			r.Variables = v.AsValueMap()
		}
	}
	if a := content.Attributes["expect_no_changes"]; a != nil {
		v, d := a.Expr.Value(nil)
		diags = append(diags, d...)
		if !d.HasErrors() && (v.Type() != cty.Bool || v.IsNull()) {
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid expect_no_changes", Detail: "expect_no_changes is true or false.", Subject: a.Expr.Range().Ptr()})
		} else if !d.HasErrors() {
			r.ExpectNoChanges = v.True()
		}
	}
	if a := content.Attributes["expect_failures"]; a != nil {
		exprs, d := hcl.ExprList(a.Expr)
		diags = append(diags, d...)
		for _, e := range exprs {
			t, td := hcl.AbsTraversalForExpr(e)
			if td.HasErrors() {
				diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid expect_failures", Detail: "expect_failures lists references, such as var.api_port, where the plan must fail.", Subject: e.Range().Ptr()})
				continue
			}
			r.ExpectFailures = append(r.ExpectFailures, traversalString(t))
		}
	}
	for _, ab := range content.Blocks.OfType("assert") {
		ac, d := ab.Body.Content(assertSchema)
		diags = append(diags, d...)
		if d.HasErrors() {
			continue
		}
		a := Assert{Condition: ac.Attributes["condition"].Expr, DeclRange: ab.DefRange}
		for _, tr := range a.Condition.Variables() {
			if tr.RootName() != "plan" && tr.RootName() != "declared" {
				diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid assert condition",
					Detail: "An assert condition refers to plan (the JSON plan: plan.summary, plan.changes, plan.outputs, ...) and declared (the declared objects: address, kind, name, module) and calls functions; nothing else is known to it.", Subject: tr.SourceRange().Ptr()})
			}
		}
		msg, md := ac.Attributes["error_message"].Expr.Value(nil)
		if md.HasErrors() || msg.Type() != cty.String || msg.IsNull() {
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid error_message", Detail: "error_message is a literal string: what the rule is, for the failure.", Subject: ac.Attributes["error_message"].Expr.Range().Ptr()})
			continue
		}
		a.ErrorMessage = msg.AsString()
		r.Asserts = append(r.Asserts, a)
	}
	return r, diags
}

// asserts checks the run's assert blocks against the plan (redacted, as
// its JSON): each condition false, or that cannot be evaluated, is a
// failure with its message and where the block is.
func (res *Result) asserts(p *plans.Plan, cfg *schema.Config) {
	if len(res.Run.Asserts) == 0 {
		return
	}
	b, err := json.Marshal(p.Redacted())
	if err == nil {
		var v cty.Value
		var ty cty.Type
		if ty, err = ctyjson.ImpliedType(b); err == nil {
			if v, err = ctyjson.Unmarshal(b, ty); err == nil {
				res.check(v, declaredValue(cfg))
				return
			}
		}
	}
	res.Failures = append(res.Failures, "the plan cannot be read by the assert blocks: "+err.Error())
}

// declaredValue is declared for the assert blocks: each declared object's
// address (as plans write it), kind, name and module ("" in the root).
func declaredValue(cfg *schema.Config) cty.Value {
	var out []cty.Value
	for _, d := range cfg.Declared() {
		a := addrs.Addr{Module: d.Module, In: d.In, Kind: d.Kind, Name: d.Name}
		out = append(out, cty.ObjectVal(map[string]cty.Value{
			"address": cty.StringVal(a.String()), "kind": cty.StringVal(d.Kind.Name()), "name": cty.StringVal(d.Name), "module": cty.StringVal(d.Module.String())}))
	}
	if len(out) == 0 {
		return cty.ListValEmpty(cty.Object(map[string]cty.Type{"address": cty.String, "kind": cty.String, "name": cty.String, "module": cty.String}))
	}
	return cty.ListVal(out)
}

func (res *Result) check(plan, declared cty.Value) {
	ctx := &hcl.EvalContext{Variables: map[string]cty.Value{"plan": plan, "declared": declared}, Functions: schema.Functions}
	for _, a := range res.Run.Asserts {
		v, diags := a.Condition.Value(ctx)
		switch {
		case diags.HasErrors():
			res.Failures = append(res.Failures, fmt.Sprintf("the assert at %s cannot be evaluated: %s", a.DeclRange, summaries(diags)))
		case v.Type() != cty.Bool || v.IsNull() || !v.IsKnown():
			res.Failures = append(res.Failures, fmt.Sprintf("the assert at %s: its condition is not true or false", a.DeclRange))
		case v.False():
			res.Failures = append(res.Failures, fmt.Sprintf("assertion failed: %s (the assert at %s)", a.ErrorMessage, a.DeclRange))
		}
	}
}

func traversalString(t hcl.Traversal) string {
	var b strings.Builder
	for _, step := range t {
		switch s := step.(type) {
		case hcl.TraverseRoot:
			b.WriteString(s.Name)
		case hcl.TraverseAttr:
			b.WriteString("." + s.Name)
		}
	}
	return b.String()
}

func (r *Run) snapshotPath() string {
	if filepath.IsAbs(r.Snapshot) {
		return r.Snapshot
	}
	return filepath.Join(filepath.Dir(r.File), r.Snapshot)
}

// Options are how runs are run.
type Options struct {
	// Language is what the specs may declare (run.Operation's).
	Language *schema.Language
	// Update writes the golden files (new or changed) instead of failing.
	Update bool
	// Filter keeps the runs whose name it matches; nil keeps all.
	Filter  *regexp.Regexp
	Getenv  func(string) string
	Environ func() []string
	// Text writes a plan's text form, as the CLI renders it, for the
	// .txt golden files (the rendering is the command layer's).
	Text func(w io.Writer, p *plans.Plan) error
	// Policies are the folders of the policies each run's plan is held
	// to, PolicyKinds what they see of each kind (run.Operation's).
	Policies    []string
	PolicyKinds []policies.Kind
}

// Result is one run's outcome.
type Result struct {
	Run *Run
	// Failures say why the run failed, for a person; none when it passed.
	Failures []string
	// Diff is the unified diff of the text plan against its golden file
	// (old -, new +), when they differ.
	Diff string
	// Written are the golden files -update wrote.
	Written []string
	Elapsed time.Duration
	// Diagnostics are the plan's errors and warnings.
	Diagnostics hcl.Diagnostics
}

// Passed reports whether the run passed.
func (r Result) Passed() bool { return len(r.Failures) == 0 }

// Execute runs each run of runs that the filter keeps, planning the specs
// of dir; the specs are loaded once per set of variables. It returns the
// results in run order and the golden files no run produces, and the
// sources the diagnostics quote.
func Execute(dir string, runs []*Run, o Options) (results []Result, orphans []string, files map[string]*hcl.File) {
	// A load is kept with its diagnostics: a run whose variables fail the
	// specs fails whichever run loaded them first.
	type load struct {
		specs *run.Specs
		diags hcl.Diagnostics
	}
	loaded := map[string]load{}
	snapshots := map[string]*provision.Snapshot{} // each file read and decoded once
	files = map[string]*hcl.File{}
	produced := map[string]bool{}
	for _, r := range runs {
		produced[r.Golden()+".txt"], produced[r.Golden()+".json"] = true, true
		if o.Filter != nil && !o.Filter.MatchString(r.Name) {
			continue
		}
		start := time.Now()
		vars := varArgs(r.Variables)
		key := strings.Join(vars, "\x00")
		l, ok := loaded[key]
		if !ok {
			var env []string
			if o.Environ != nil {
				env = o.Environ()
			}
			l.specs, l.diags = run.LoadSpecs(o.Language, dir, vars, nil, env)
			loaded[key] = l
		}
		for name, f := range l.specs.Parser.Files() {
			files[name] = f
		}
		res := Result{Run: r}
		var p *plans.Plan
		if l.diags.HasErrors() || l.specs.Config == nil {
			res.Diagnostics = l.diags
		} else {
			var backends []provision.Backend
			p, backends, res.Diagnostics = plan(dir, r, l.specs, snapshots, o, files)
			if p != nil {
				res.asserts(p, l.specs.Config)
			}
			if p != nil && len(r.ExpectFailures) == 0 {
				res.converges(p, backends)
			}
		}
		res.judge(p, dir, o)
		res.Elapsed = time.Since(start)
		results = append(results, res)
	}
	dirs := map[string]bool{}
	for _, r := range runs {
		dirs[filepath.Dir(r.Golden())] = true
	}
	for dir := range dirs {
		for _, ext := range []string{".txt", ".json"} {
			all, _ := filepath.Glob(filepath.Join(dir, "*"+ext))
			for _, g := range all {
				if !produced[g] {
					orphans = append(orphans, g)
				}
			}
		}
	}
	sort.Strings(orphans)
	return results, orphans, files
}

// varArgs are the run's variables as -var arguments, in name order.
func varArgs(vars map[string]cty.Value) []string {
	var out []string
	for name, v := range vars {
		// A string goes as it is, as -var takes it: quoted, a variable
		// without a type would take the quotes for its value.
		if v.Type() == cty.String && v.IsKnown() && !v.IsNull() {
			out = append(out, name+"="+v.AsString())
			continue
		}
		out = append(out, name+"="+strings.TrimSpace(string(hclwrite.TokensForValue(v).Bytes())))
	}
	sort.Strings(out)
	return out
}

// plan makes the run's plan as plan -snapshot does, and returns the
// backends it was made with; snapshots are those read already, by path.
// The sources its diagnostics quote (the policies') are added to files.
func plan(dir string, r *Run, specs *run.Specs, snapshots map[string]*provision.Snapshot, o Options, files map[string]*hcl.File) (*plans.Plan, []provision.Backend, hcl.Diagnostics) {
	from := provision.Greenfield()
	if r.Snapshot != "" {
		from = snapshots[r.snapshotPath()]
		if from == nil {
			var diags hcl.Diagnostics
			if from, diags = provision.ReadSnapshot(r.snapshotPath()); diags.HasErrors() {
				return nil, nil, diags
			}
			snapshots[r.snapshotPath()] = from
		}
	}
	v := &run.Capture{}
	op := run.Operation{Type: run.Plan, Language: o.Language, Dir: dir, Specs: specs, From: from, Getenv: o.Getenv, Environ: o.Environ,
		Policies: o.Policies, PolicyKinds: o.PolicyKinds}
	rn := op.Start(context.Background(), v)
	maps.Copy(files, v.Files)
	if rn.Failed() || len(rn.PolicyFailures) > 0 {
		return nil, nil, append(v.Diags, rn.PolicyFailures...)
	}
	// The golden files hold the plan; the policies judge it apart (a
	// mandatory failure fails the run, an advisory one is its warning),
	// so that a policy added to the repository leaves them as they are.
	v.Planned.Policies = nil
	return v.Planned, rn.Opened.Backends, append(v.Diags, v.Warnings...)
}

// converges checks, with no I/O, that the plan converges: once its
// changes are done to the live state in memory, a plan made again has
// nothing to do. A change it plans again would be planned after every
// apply (a perpetual diff).
func (res *Result) converges(p *plans.Plan, backends []provision.Backend) {
	live, err := provision.Converged(p, backends)
	if err != nil {
		res.Failures = append(res.Failures, "the plan's changes cannot be done in memory: "+err.Error())
		return
	}
	again, diags := provision.PlanFrom(p.Project, plans.Converge, backends, live)
	if diags.HasErrors() {
		res.Failures = append(res.Failures, "once the plan's changes are done, planning again fails: "+summaries(diags))
		return
	}
	var left []string
	for _, c := range again.Changes {
		if c.Action != plans.NoOp {
			left = append(left, fmt.Sprintf("%s (%s: %s)", c.Addr, c.Action, c.Reason))
		}
	}
	if len(left) > 0 {
		res.Failures = append(res.Failures, "the plan does not converge: once its changes are done, a plan made again still changes "+strings.Join(left, ", "))
	}
}

// judge compares the run's plan (nil: it failed) with what the run
// expects and with its golden files.
func (res *Result) judge(p *plans.Plan, dir string, o Options) {
	r := res.Run
	if len(r.ExpectFailures) > 0 {
		res.expectFailures(p)
		return
	}
	if p == nil {
		res.Failures = append(res.Failures, "the plan failed: "+summaries(res.Diagnostics))
		return
	}
	if r.ExpectNoChanges && p.Summary.HasChanges() {
		res.Failures = append(res.Failures, fmt.Sprintf("expect_no_changes, and the plan has changes: %s", p.Summary.Line()))
	}
	// A run that fails for any other reason is never written: -update
	// would make its refused plan the expectation.
	update := o.Update && len(res.Failures) == 0
	text, js, err := renderPlan(p, dir, r, o.Text)
	if err != nil {
		res.Failures = append(res.Failures, err.Error())
		return
	}
	for _, g := range []struct {
		path string
		got  []byte
	}{{r.Golden() + ".txt", text}, {r.Golden() + ".json", js}} {
		want, err := os.ReadFile(g.path)
		switch {
		case update && (err != nil || !bytes.Equal(want, g.got)):
			err := os.MkdirAll(filepath.Dir(g.path), 0o755)
			if err == nil {
				err = os.WriteFile(g.path, g.got, 0o644)
			}
			if err != nil {
				res.Failures = append(res.Failures, err.Error())
			} else {
				res.Written = append(res.Written, g.path)
			}
		case err != nil:
			res.Failures = append(res.Failures, fmt.Sprintf("no golden file %s: run provision test -update to write it, and review it", g.path))
		case !bytes.Equal(want, g.got):
			res.Failures = append(res.Failures, fmt.Sprintf("the plan differs from %s", g.path))
			if strings.HasSuffix(g.path, ".txt") {
				res.Diff = unified(g.path, string(want), string(g.got))
			}
		}
	}
}

// expectFailures checks that the plan failed where the run says: at an
// error whose line names each reference.
func (res *Result) expectFailures(p *plans.Plan) {
	if p != nil {
		res.Failures = append(res.Failures, fmt.Sprintf("expected the plan to fail at %s, and it succeeded (%s)", strings.Join(res.Run.ExpectFailures, ", "), p.Summary.Line()))
		return
	}
	for _, ref := range res.Run.ExpectFailures {
		if !slices.ContainsFunc(res.Diagnostics, func(d *hcl.Diagnostic) bool { return d.Severity == hcl.DiagError && names(d, ref) }) {
			res.Failures = append(res.Failures, fmt.Sprintf("expected the plan to fail at %s; it failed elsewhere: %s", ref, summaries(res.Diagnostics)))
		}
	}
}

// names reports whether the diagnostic is about ref: its words name
// it, or a line it points at (its subject or its context) names it, or
// is the block ref names (var.x: variable "x"; service.x: service "x").
func names(d *hcl.Diagnostic, ref string) bool {
	if strings.Contains(d.Detail, ref) || strings.Contains(d.Summary, ref) {
		return true
	}
	kind, name, _ := strings.Cut(ref, ".")
	if kind == "var" {
		kind = "variable"
	}
	block := fmt.Sprintf("%s %q", kind, name)
	for _, rng := range []*hcl.Range{d.Subject, d.Context} {
		if rng == nil {
			continue
		}
		src, err := os.ReadFile(rng.Filename)
		if err != nil {
			continue
		}
		lines := strings.Split(string(src), "\n")
		for l := rng.Start.Line; l <= rng.End.Line && l-1 < len(lines); l++ {
			if strings.Contains(lines[l-1], ref) || strings.HasPrefix(strings.TrimSpace(lines[l-1]), block) {
				return true
			}
		}
	}
	return false
}

func summaries(diags hcl.Diagnostics) string {
	var s []string
	for _, d := range diags {
		if d.Severity == hcl.DiagError {
			w := d.Summary
			if d.Subject != nil {
				w += " (" + d.Subject.String() + ")"
			}
			s = append(s, w)
		}
	}
	return strings.Join(s, "; ")
}

// renderPlan is the plan's text and JSON views, redacted, with the paths of
// the spec directory and of the snapshot written relative to them, so
// that a golden file does not depend on where the tests run from.
func renderPlan(p *plans.Plan, dir string, r *Run, render func(io.Writer, *plans.Plan) error) (text, js []byte, err error) {
	q := *p
	q.Dir, q.Sources = "", nil
	if len(q.Variables) > 0 { // a golden file, committed, holds no digest of a secret
		q.Variables = maps.Clone(q.Variables)
		for name, v := range q.Variables {
			if v.Sensitive {
				v.Digest = "(keyed digest)"
				q.Variables[name] = v
			}
		}
	}
	if q.Snapshot != nil {
		s := *q.Snapshot
		s.File = r.Snapshot
		q.Snapshot = &s
	}
	red := q.Redacted()
	var buf bytes.Buffer
	if err := render(&buf, red); err != nil {
		return nil, nil, err
	}
	raw, err := plans.MarshalJSON(red, "  ")
	if err != nil {
		return nil, nil, err
	}
	prefix := filepath.Clean(dir) + string(filepath.Separator)
	rel := func(b []byte) []byte { return bytes.ReplaceAll(b, []byte(prefix), nil) }
	return rel(buf.Bytes()), rel(append(raw, '\n')), nil
}
