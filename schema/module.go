package schema

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// Modules, as Terraform's local modules: module "<name>" { source =
// "./modules/gated-api"  <inputs> } calls the directory of spec files at
// source (from the calling module's directory), with for_each or count,
// once per instance. A module declares its inputs with variable blocks and
// what it gives back with output blocks; its objects are the specs' own,
// addressed module.<name>[<key>].<address>; the blocks that say where the
// live systems are (project, and the places' blocks: PlaceSchema) and
// import and removed blocks are the root's alone, and a module refers to
// them by name. Every instance is decoded from the module's files, which
// are read and parsed once.

// Output is an output block of the root specs: a value printed after plan
// and apply, and in the JSON plan.
type Output struct {
	Name        string
	Description string
	// Value is unmarked; Sensitive outputs are "(sensitive)" in every view.
	Value     cty.Value
	Sensitive bool
	DeclRange hcl.Range
}

var moduleCallSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "source", Required: true}, {Name: "for_each"}, {Name: "count"}}}

var outputSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "value", Required: true}, {Name: "sensitive"}, {Name: "description"}}}

// rootOnly are the top-level blocks that only the root specs may hold,
// with the places'.
var rootOnly = []string{"import", "removed"}

// moduleFiles is a module's directory, read and parsed once.
type moduleFiles struct {
	contents  []*hcl.BodyContent
	variables []*Variable
	locals    []*hcl.Block
	diags     hcl.Diagnostics
}

// call is where a module's instance is decoded: its directory (from the
// root), the address prefix of its objects, and the directories of the
// calls it is within, for cycles.
type call struct {
	dir    string
	prefix string
	stack  []string
}

// moduleFiles reads the module at dir (from the root) once.
func (d *decoder) moduleFiles(dir string) *moduleFiles {
	if m, ok := d.modules[dir]; ok {
		return m
	}
	m := &moduleFiles{}
	d.modules[dir] = m
	paths, _ := SpecFiles(filepath.Join(d.files.dir, filepath.FromSlash(dir)))
	bodies, _, diags := d.parser.parseFiles(paths, nil)
	m.diags = diags
	top := d.lang.fileSchema()
	for _, body := range bodies {
		d.bg.bound(body)
		c, cdiags := d.lang.fileContent(body, top)
		m.diags = append(m.diags, cdiags...)
		if attr, ok := c.Attributes["project"]; ok {
			m.diags = append(m.diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Project in a module",
				Detail: "project is set once, in the root specs: the owner of every object, whichever module declares it.", Subject: attr.NameRange.Ptr()})
		}
		for _, b := range c.Blocks {
			switch {
			case slices.Contains(rootOnly, b.Type) || d.lang.places[b.Type] != nil:
				m.diags = append(m.diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: fmt.Sprintf("%s block in a module", b.Type),
					Detail:  fmt.Sprintf("A %s block is the root specs' alone; a module refers to the root's %s blocks by name, and takes no import or removed block (write them in the root, with module addresses).", b.Type, strings.Join(d.lang.placeTypes, ", ")),
					Subject: b.DefRange.Ptr()})
			case b.Type == "variable":
				v, vdiags := decodeVariableBlock(b)
				m.diags = append(m.diags, vdiags...)
				if i := slices.IndexFunc(m.variables, func(p *Variable) bool { return p.Name == v.Name }); i >= 0 {
					m.diags = append(m.diags, duplicate("Duplicate variable block", fmt.Sprintf("variable %q", v.Name), b.LabelRanges[0], m.variables[i].DeclRange))
					continue
				}
				m.variables = append(m.variables, v)
			case b.Type == "locals":
				m.locals = append(m.locals, b)
			}
		}
		m.contents = append(m.contents, c)
	}
	return m
}

// call decodes one module block: its source, its instances and, for each,
// the module's objects with the instance's inputs.
func (d *decoder) call(cfg *Config, b *hcl.Block, at call) cty.Value {
	c, rest, diags := b.Body.PartialContent(moduleCallSchema)
	d.diags = append(d.diags, diags...)
	attr, ok := c.Attributes["source"]
	if !ok {
		return cty.DynamicVal
	}
	dir, ok := d.moduleSource(attr, b, at)
	if !ok {
		return cty.DynamicVal
	}
	m := d.moduleFiles(dir)
	d.diags = append(d.diags, m.diags...)
	m.diags = nil // said once, whatever the number of calls and instances
	inputs, idiags := rest.JustAttributes()
	d.diags = append(d.diags, idiags...)
	for name, in := range inputs {
		if !slices.ContainsFunc(m.variables, func(v *Variable) bool { return v.Name == name }) {
			d.errorf(in.NameRange, b.DefRange, "Unsupported module input",
				"The module at %q declares no variable %q. Its inputs are: %s.", dir, name, variableNames(m.variables))
		}
	}
	base := at.prefix + "module." + b.Labels[0]
	instance := func(key, each cty.Value, prefix string) cty.Value {
		ctx := d.ctx.NewChild()
		ctx.Variables = map[string]cty.Value{}
		if each != cty.NilVal {
			ctx.Variables["each"] = cty.ObjectVal(map[string]cty.Value{"key": key, "value": each})
		} else if key != cty.NilVal {
			ctx.Variables["count"] = cty.ObjectVal(map[string]cty.Value{"index": key})
		}
		var inst *Instance
		if each != cty.NilVal {
			inst = &Instance{Key: key.AsString()}
		}
		return d.instanceOf(cfg, b, m, inputs, ctx, inst, call{dir: dir, prefix: prefix + ".", stack: append(slices.Clip(at.stack), dir)})
	}
	fe, hasEach := c.Attributes["for_each"]
	count, hasCount := c.Attributes["count"]
	switch {
	case hasEach && hasCount:
		d.errorf(count.NameRange, b.DefRange, "Invalid combination of count and for_each", "A module block takes for_each or count, not both.")
		return cty.DynamicVal
	case hasEach:
		out := map[string]cty.Value{}
		for _, e := range d.forEach(b, fe) {
			out[e.key] = instance(cty.StringVal(e.key), e.value, base+"["+strconv.Quote(e.key)+"]")
		}
		return cty.ObjectVal(out)
	case hasCount:
		n, ok := d.count(count, b)
		if !ok {
			return cty.DynamicVal
		}
		out := make([]cty.Value, n)
		for i := range n {
			out[i] = instance(cty.NumberIntVal(int64(i)), cty.NilVal, base+"["+strconv.Itoa(i)+"]")
		}
		return cty.TupleVal(out)
	}
	return instance(cty.NilVal, cty.NilVal, base)
}

// count is a module block's count: a whole number from 0.
func (d *decoder) count(attr *hcl.Attribute, b *hcl.Block) (int, bool) {
	v, ok := d.value(attr, cty.Number)
	if !ok {
		return 0, false
	}
	n, acc := v.AsBigFloat().Int64()
	if acc != 0 || n < 0 || n > MaxValues {
		d.errorf(attr.Expr.Range(), b.DefRange, "Invalid count", "count is a whole number from 0 to %s.", thousands(MaxValues))
		return 0, false
	}
	return int(n), true
}

// moduleSource resolves a module block's source: a local path, "./" or
// "../", from the calling module's directory, inside the specs, holding
// spec files, and not a module the call is already within.
func (d *decoder) moduleSource(attr *hcl.Attribute, b *hcl.Block, at call) (string, bool) {
	v, diags := attr.Expr.Value(nil)
	bad := func(summary, format string, args ...any) (string, bool) {
		d.errorf(attr.Expr.Range(), b.DefRange, summary, format, args...)
		return "", false
	}
	if diags.HasErrors() || v.Type() != cty.String || v.IsNull() {
		return bad("Invalid module source", "source is a literal string: the module's directory, as \"./modules/gated-api\".")
	}
	src := v.AsString()
	if !strings.HasPrefix(src, "./") && !strings.HasPrefix(src, "../") {
		return bad("Invalid module source", "%q is not a local path. provision calls local modules only: a directory of spec files named from the calling module's directory, starting with ./ or ../.", src)
	}
	dir := path.Join(at.dir, src)
	if _, err := d.files.resolve(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return bad("Module outside "+d.files.bound.short, "%s.", err)
	}
	files, err := SpecFiles(filepath.Join(d.files.dir, filepath.FromSlash(dir)))
	if st, serr := os.Stat(filepath.Join(d.files.dir, filepath.FromSlash(dir))); err != nil || serr != nil || !st.IsDir() || len(files) == 0 {
		return bad("Module not found", "%q (%s from the specs) is not a directory of *.hcl spec files.", src, dir)
	}
	if i := slices.Index(at.stack, dir); i >= 0 {
		return bad("Module cycle", "The module at %q calls itself: %s.", dir, strings.Join(append(slices.Clone(at.stack[i:]), dir), " calls "))
	}
	return dir, true
}

// instanceOf decodes one instance of a module: its variables from the
// inputs (evaluated in ctx, the caller's with each or count), its locals,
// objects and module calls, and returns its outputs.
func (d *decoder) instanceOf(cfg *Config, b *hcl.Block, m *moduleFiles, inputs hcl.Attributes, ctx *hcl.EvalContext, each *Instance, at call) cty.Value {
	vars := map[string]*Variable{}
	broken := false
	caller, callerEach := d.ctx, d.each
	d.ctx, d.each = ctx, each
	for _, mv := range m.variables {
		v := *mv
		v.Value = v.Default
		if in, ok := inputs[v.Name]; ok && d.checkRefs(in.Expr) {
			val, diags := d.evaluate(in.Expr)
			d.diags = append(d.diags, diags...)
			if val.IsMarked() {
				v.Sensitive = true // a secret stays one inside the module
			}
			val, _ = val.Unmark()
			if conv, err := convert.Convert(val, v.Type); err != nil && !diags.HasErrors() {
				d.diags = append(d.diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid value for module input",
					Detail:  fmt.Sprintf("The value given for %s is not compatible with its type constraint in the module: %s. (In %s.)", v.Name, err, strings.TrimSuffix(at.prefix, ".")),
					Subject: in.Expr.Range().Ptr(), Context: in.Range.Ptr()})
				v.Value, broken = cty.DynamicVal, true
			} else if err == nil {
				v.Value = conv
			}
		}
		if v.Value == cty.NilVal {
			// Said once for the call, whatever its instances: the
			// call is what lacks it.
			d.diags = append(d.diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Missing required module input",
				Detail:  fmt.Sprintf("The module at %q requires the input %q (its variable has no default): give it in this module block.", at.dir, v.Name),
				Subject: b.DefRange.Ptr(), Context: b.DefRange.Ptr()})
			broken = true
		}
		vars[v.Name] = &v
	}
	d.ctx, d.each = caller, callerEach
	if broken {
		// Nothing inside a call without its inputs is decoded: every
		// error it would find follows from what the call lacks.
		return cty.DynamicVal
	}
	child := &decoder{lang: d.lang, parser: d.parser, files: d.files, modules: d.modules, functions: d.functions, vars: vars, bg: d.bg, alike: d.alike}
	child.diags = validate(vars, d.functions)
	child.ctx = evalContext(vars, d.functions)
	child.ctx.Variables["path"] = cty.ObjectVal(map[string]cty.Value{"root": cty.StringVal("."), "module": cty.StringVal(at.dir)})
	var ldiags hcl.Diagnostics
	child.locals, ldiags = decodeLocals(m.locals)
	child.diags = append(child.diags, ldiags...)
	calls := child.moduleCalls(m.contents)
	early, late := lateLocals(child.locals, calls)
	child.evalLocals(early)
	child.ctx.Variables["module"] = child.evalInOrder(cfg, m.contents, calls, early, late, at)
	outputs := map[string]cty.Value{}
	for _, o := range child.outputs(m.contents) {
		outputs[o.Name] = o.Value
	}
	for _, v := range vars {
		if v.Sensitive && v.Value.IsWhollyKnown() {
			child.secrets = append(child.secrets, stringLeaves(v.Value)...)
		}
	}
	where := strings.TrimSuffix(at.prefix, ".")
	for _, diag := range child.diags {
		if diag.Severity == hcl.DiagError && !strings.Contains(diag.Detail, "(In "+where) {
			diag.Detail += " (In " + where + ".)"
		}
	}
	d.diags = append(d.diags, child.diags...)
	d.secrets = append(d.secrets, child.secrets...)
	return cty.ObjectVal(outputs)
}

// outputs decodes the output blocks of contents; their values keep their
// sensitive marks (Output.Value of the root's is unmarked by the loader).
func (d *decoder) outputs(contents []*hcl.BodyContent) []*Output {
	var out []*Output
	seen := map[string]*Output{}
	for _, c := range contents {
		for _, b := range c.Blocks.OfType("output") {
			o := &Output{Name: b.Labels[0], DeclRange: b.DefRange, Value: cty.DynamicVal}
			if prev, dup := seen[o.Name]; dup {
				d.diags = append(d.diags, duplicate("Duplicate output", fmt.Sprintf("output %q", o.Name), b.LabelRanges[0], prev.DeclRange))
				continue
			}
			seen[o.Name] = o
			oc := d.content(b.Body, outputSchema)
			if a, ok := oc.Attributes["description"]; ok {
				o.Description = d.str(a)
			}
			if a, ok := oc.Attributes["sensitive"]; ok {
				if v, ok := d.value(a, cty.Bool); ok {
					o.Sensitive = v.True()
				}
			}
			if a, ok := oc.Attributes["value"]; ok && d.checkRefs(a.Expr) {
				v, diags := d.evaluate(a.Expr)
				d.diags = append(d.diags, diags...)
				if !diags.HasErrors() {
					o.Value = v
				}
				if v.ContainsMarked() && !o.Sensitive {
					d.errorf(a.Expr.Range(), b.DefRange, "Output refers to sensitive values",
						"The value of output %q is computed from a sensitive value. Set sensitive = true on the output, so that every view shows it as (sensitive).", o.Name)
				}
			}
			out = append(out, o)
		}
	}
	return out
}

func variableNames(vars []*Variable) string {
	if len(vars) == 0 {
		return "none"
	}
	names := make([]string, len(vars))
	for i, v := range vars {
		names[i] = v.Name
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}
