package policies

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision/addrs"
	"github.com/provision-dev/provision/provision/plans"
	"github.com/provision-dev/provision/schema"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
	"github.com/zclconf/go-cty/cty/function"
	ctyjson "github.com/zclconf/go-cty/cty/json"
)

// Kind is what a policy sees of one kind of object: its name (the first
// label of a resource_policy), the type of its attributes (an object
// type, each attribute as the specs name it), and how they are read, for
// the specs cfg, from one side of a change (its Before or After view,
// declared says which) of the object at addr.
type Kind struct {
	Name  string
	Attrs cty.Type
	Of    func(cfg *schema.Config) Reader
}

// Reader reads the attributes of one side of an object's change.
type Reader func(addr addrs.Addr, view json.RawMessage, declared bool) (cty.Value, error)

// meta is what a policy knows of the object besides its attributes:
// Terraform Policy's operation, type and module_path, and provision's
// address and place (agent.<name>, search.<name>; "" for the one place of
// a kind).
var metaType = cty.Object(map[string]cty.Type{
	"operation": cty.String, "type": cty.String, "module_path": cty.String, "address": cty.String, "place": cty.String,
})

// roots are the variables a policy's expressions may refer to; a file's
// own locals may refer only to local.
var roots = []string{"attrs", "prior_attrs", "meta", "local"}

// functions are provision's functions, by their names and by Terraform
// Policy's (core::length), so that its documented examples read as they
// are written.
var functions = func() map[string]function.Function {
	out := maps.Clone(schema.Functions)
	for name, f := range schema.Functions {
		out["core::"+name] = f
	}
	return out
}()

// check refers every expression of the policy to what exists (each kind's
// attributes, meta's fields, the locals), and evaluates it once per kind
// over unknown attributes, so that a filter or a condition that is not a
// boolean, or an expression of the wrong type, fails at load.
func (pol *policy) check() hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, e := range pol.exprs() {
		diags = append(diags, pol.refs(e, false)...)
	}
	if diags.HasErrors() {
		return diags
	}
	known, _ := pol.file.fileLocals() // checked with the file
	for _, k := range pol.kinds {
		unknown := cty.UnknownVal(k.Attrs)
		ctx, ldiags := pol.context(known, unknown, unknown, cty.UnknownVal(metaType), true)
		diags = append(diags, ldiags...)
		if ldiags.HasErrors() {
			continue
		}
		if pol.filter != nil {
			_, fdiags := boolean(pol.filter, ctx, "filter", k.Name)
			diags = append(diags, fdiags...)
		}
		for _, e := range pol.enforce {
			_, cdiags := boolean(e.condition, ctx, "condition", k.Name)
			diags = append(diags, cdiags...)
			for _, m := range []hcl.Expression{e.errorMessage, e.infoMessage} {
				if m != nil {
					_, mdiags := message(m, ctx)
					diags = append(diags, mdiags...)
				}
			}
		}
	}
	return distinct(diags)
}

// exprs are the policy's own expressions: its filter, locals and enforce
// blocks'.
func (pol *policy) exprs() []hcl.Expression {
	var out []hcl.Expression
	if pol.filter != nil {
		out = append(out, pol.filter)
	}
	for _, a := range pol.locals {
		out = append(out, a.Expr)
	}
	for _, e := range pol.enforce {
		out = append(out, e.condition)
		for _, m := range []hcl.Expression{e.errorMessage, e.infoMessage} {
			if m != nil {
				out = append(out, m)
			}
		}
	}
	return out
}

// check checks the file's locals: each refers to the file's other locals
// only, and evaluates.
func (f *file) check() hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, a := range f.locals {
		diags = append(diags, (&policy{file: f, locals: hcl.Attributes{}}).refs(a.Expr, true)...)
	}
	if diags.HasErrors() {
		return diags
	}
	_, ldiags := f.fileLocals()
	return append(diags, ldiags...)
}

// refs checks what expr refers to: attrs.<name> and prior_attrs.<name>
// an attribute of every kind the policy judges, meta.<name> one of meta's
// fields, local.<name> a local of the policy or its file. A file's local
// (fileLocal) refers to the file's locals only.
func (pol *policy) refs(expr hcl.Expression, fileLocal bool) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, t := range expr.Variables() {
		root := t.RootName()
		allowed := roots
		if fileLocal {
			allowed = []string{"local"}
		}
		if !slices.Contains(allowed, root) {
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Unknown variable",
				Detail:  fmt.Sprintf("A policy refers to %s here, and to nothing else: %q is none of them.", strings.Join(allowed, ", "), root),
				Subject: t.SourceRange().Ptr()})
			continue
		}
		name, rng, ok := step(t)
		if !ok {
			continue
		}
		switch root {
		case "attrs", "prior_attrs":
			for _, k := range pol.kinds {
				if !k.Attrs.HasAttribute(name) {
					diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "No such attribute",
						Detail:  fmt.Sprintf("A %s has no attribute %q (its attributes: %s), and resource_policy %q judges %ss.", k.Name, name, attributeNames(k.Attrs), pol.kind, k.Name),
						Subject: rng.Ptr()})
					break
				}
			}
		case "meta":
			if !metaType.HasAttribute(name) {
				diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "No such attribute",
					Detail: fmt.Sprintf("meta has no attribute %q (its attributes: %s).", name, attributeNames(metaType)), Subject: rng.Ptr()})
			}
		case "local":
			_, mine := pol.locals[name]
			if _, theirs := pol.file.locals[name]; !theirs && (fileLocal || !mine) {
				diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Reference to undeclared local value",
					Detail: fmt.Sprintf("No locals block of this policy or of its file defines %q.", name), Subject: rng.Ptr()})
			}
		}
	}
	return diags
}

// step is the name of the first step after a traversal's root
// (attrs.port, attrs["port"]) and its range; false when there is none.
func step(t hcl.Traversal) (string, hcl.Range, bool) {
	if len(t) < 2 {
		return "", hcl.Range{}, false
	}
	switch s := t[1].(type) {
	case hcl.TraverseAttr:
		return s.Name, s.SrcRange, true
	case hcl.TraverseIndex:
		if s.Key.Type() == cty.String && s.Key.IsKnown() {
			return s.Key.AsString(), s.SrcRange, true
		}
	}
	return "", hcl.Range{}, false
}

func attributeNames(t cty.Type) string {
	return strings.Join(slices.Sorted(maps.Keys(t.AttributeTypes())), ", ")
}

// fileLocals are the values of a file's locals, which refer to no
// object: evaluated once.
func (f *file) fileLocals() (map[string]cty.Value, hcl.Diagnostics) {
	return evalLocals(f.locals, nil, &hcl.EvalContext{Functions: functions})
}

// context is the scope of the policy's expressions for one object: attrs,
// prior_attrs, meta, the functions, and local: the file's locals (known),
// then, with withLocals, the policy's, which win over a file's of one
// name.
func (pol *policy) context(known map[string]cty.Value, attrs, prior, meta cty.Value, withLocals bool) (*hcl.EvalContext, hcl.Diagnostics) {
	ctx := &hcl.EvalContext{Functions: functions, Variables: map[string]cty.Value{"attrs": attrs, "prior_attrs": prior, "meta": meta, "local": cty.ObjectVal(known)}}
	if !withLocals {
		return ctx, nil
	}
	locals, diags := evalLocals(pol.locals, known, ctx)
	ctx.Variables["local"] = cty.ObjectVal(locals)
	return ctx, diags
}

// evalLocals evaluates locals in ctx, beside known (which they may refer
// to, and which a local of the same name replaces), each once the locals
// it refers to are.
func evalLocals(locals hcl.Attributes, known map[string]cty.Value, ctx *hcl.EvalContext) (map[string]cty.Value, hcl.Diagnostics) {
	out := maps.Clone(known)
	if out == nil {
		out = map[string]cty.Value{}
	}
	pending := slices.Sorted(maps.Keys(locals))
	for len(pending) > 0 {
		var left []string
		for _, name := range pending {
			if slices.ContainsFunc(locals[name].Expr.Variables(), func(t hcl.Traversal) bool {
				n, _, _ := step(t)
				return t.RootName() == "local" && n != name && slices.Contains(pending, n)
			}) {
				left = append(left, name)
				continue
			}
			child := ctx.NewChild()
			child.Variables = map[string]cty.Value{"local": cty.ObjectVal(out)}
			v, diags := locals[name].Expr.Value(child)
			if diags.HasErrors() {
				return nil, diags
			}
			out[name] = v
		}
		if len(left) == len(pending) {
			a := locals[left[0]]
			return nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Local values refer to each other",
				Detail: fmt.Sprintf("The locals %s refer to one another, and none can be evaluated first.", strings.Join(left, ", ")), Subject: a.Expr.Range().Ptr()}}
		}
		pending = left
	}
	return out, nil
}

// boolean is expr's value as a boolean (what of filter or condition),
// true while it is unknown; an error when it is not one.
func boolean(expr hcl.Expression, ctx *hcl.EvalContext, what, kind string) (bool, hcl.Diagnostics) {
	v, diags := expr.Value(ctx)
	if diags.HasErrors() {
		return false, diags
	}
	b, _ := v.Unmark()
	switch {
	case b.Type() != cty.Bool && b.Type() != cty.DynamicPseudoType: // no "true" string: a condition is a boolean
		return false, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: fmt.Sprintf("Invalid %s", what),
			Detail: fmt.Sprintf("The %s must be a boolean; it is %s.", what, b.Type().FriendlyName()), Subject: expr.Range().Ptr()}}
	case !b.IsKnown():
		return true, nil
	case b.IsNull():
		return false, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: fmt.Sprintf("Invalid %s", what),
			Detail: fmt.Sprintf("The %s of a %s is null: it must be true or false.", what, kind), Subject: expr.Range().Ptr()}}
	}
	return b.True(), nil
}

// message is a message's text; "" while it is unknown.
func message(expr hcl.Expression, ctx *hcl.EvalContext) (string, hcl.Diagnostics) {
	v, diags := expr.Value(ctx)
	if diags.HasErrors() {
		return "", diags
	}
	if v.ContainsMarked() { // computed from a secret (markSecrets)
		return "(sensitive)", nil
	}
	s, err := convert.Convert(v, cty.String)
	if err != nil {
		return "", hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Invalid message",
			Detail: fmt.Sprintf("A message is a string; this one is %s.", v.Type().FriendlyName()), Subject: expr.Range().Ptr()}}
	}
	return str(s), nil
}

func distinct(diags hcl.Diagnostics) hcl.Diagnostics {
	var out hcl.Diagnostics
	for _, d := range diags {
		if !slices.ContainsFunc(out, func(o *hcl.Diagnostic) bool {
			return o.Summary == d.Summary && o.Detail == d.Detail && o.Subject != nil && d.Subject != nil && *o.Subject == *d.Subject
		}) {
			out = append(out, d)
		}
	}
	return out
}

// operation is how Terraform Policy names what a change does; "" for
// what no policy judges (a forget sends nothing to the object). An import
// adopts the live object and writes provision's marks on it: an update.
func operation(a plans.Action) string {
	switch a {
	case plans.Create:
		return "create"
	case plans.Update, plans.Import:
		return "update"
	case plans.Delete:
		return "delete"
	case plans.NoOp:
		return "no-op"
	}
	return ""
}

// Check evaluates the policies on every change of p (cfg the specs it was
// planned from): for each object a policy judges (its kind, operation and
// filter), each enforce block's result, in the plan's order; and a
// diagnostic for each failure, an error for a mandatory policy (but a
// mandatory_overridable one that overrides names, which an owner let
// through) and a warning for an advisory one. A policy that cannot be
// evaluated on an object is an error at its line.
func (s *Set) Check(p *plans.Plan, cfg *schema.Config, overrides []string) ([]plans.PolicyResult, hcl.Diagnostics) {
	var results []plans.PolicyResult
	var diags hcl.Diagnostics
	hide := func(m string) string { return plans.HideSecrets(m, p.Secrets) }
	readers := map[string]Reader{}
	for _, k := range s.kinds {
		readers[k.Name] = k.Of(cfg)
	}
	known := map[*file]map[string]cty.Value{}
	for _, f := range s.files {
		var fdiags hcl.Diagnostics
		if known[f], fdiags = f.fileLocals(); fdiags.HasErrors() {
			return nil, fdiags
		}
	}
	for _, c := range p.Changes {
		op := operation(c.Action)
		if op == "" {
			continue
		}
		o := object{change: c, read: readers[c.Addr.Kind.Name()], op: op, secrets: p.Secrets}
		for _, f := range s.files {
			for _, pol := range f.policies {
				k := slices.IndexFunc(pol.kinds, func(k Kind) bool { return k.Name == c.Addr.Kind.Name() })
				if k < 0 || !slices.Contains(pol.operations, op) {
					continue
				}
				r, rdiags := pol.judge(&o, pol.kinds[k], known[f], hide, slices.Contains(overrides, pol.name()))
				results = append(results, r...)
				diags = append(diags, rdiags...)
			}
		}
	}
	return results, diags
}

// object is one change as the policies see it, its attributes read once.
type object struct {
	change       *plans.Change
	read         Reader
	op           string
	secrets      []string
	done         bool
	attrs, prior cty.Value
	err          error
}

// values are the object's attrs (after the change, as declared; before it
// for a delete) and prior_attrs (before it, for an update or a delete;
// null otherwise).
func (o *object) values(k Kind) (cty.Value, cty.Value, error) {
	if !o.done {
		o.done = true
		c := o.change
		if o.op == "delete" {
			o.attrs, o.err = o.read(c.Addr, c.Before.JSON(), false)
		} else {
			o.attrs, o.err = o.read(c.Addr, c.After.JSON(), true)
		}
		o.prior = cty.NullVal(k.Attrs)
		if o.err == nil && (o.op == "update" || o.op == "delete") && c.Before.JSON() != nil {
			o.prior, o.err = o.read(c.Addr, c.Before.JSON(), false)
		}
		if o.err == nil {
			o.attrs, o.prior = markSecrets(o.attrs, o.secrets), markSecrets(o.prior, o.secrets)
		}
	}
	return o.attrs, o.prior, o.err
}

// sensitive marks a value computed from a secret: a message that holds one
// is "(sensitive)", whatever a function made of it.
const sensitive = "sensitive"

// markSecrets marks each string of v that holds one of secrets (the
// values of the specs' sensitive variables).
func markSecrets(v cty.Value, secrets []string) cty.Value {
	if len(secrets) == 0 || v.IsNull() {
		return v
	}
	out, _ := cty.Transform(v, func(_ cty.Path, v cty.Value) (cty.Value, error) {
		if v.Type() == cty.String && v.IsKnown() && !v.IsNull() && slices.ContainsFunc(secrets, func(x string) bool { return x != "" && strings.Contains(v.AsString(), x) }) {
			return v.Mark(sensitive), nil
		}
		return v, nil
	})
	return out
}

func (o *object) meta() cty.Value {
	a := o.change.Addr
	return cty.ObjectVal(map[string]cty.Value{
		"operation": cty.StringVal(o.op), "type": cty.StringVal(a.Kind.Name()), "module_path": cty.StringVal(a.Module.String()),
		"address": cty.StringVal(a.String()), "place": cty.StringVal(a.In),
	})
}

// judge evaluates the policy on one object of kind k.
func (pol *policy) judge(o *object, k Kind, known map[string]cty.Value, hide func(string) string, overridden bool) ([]plans.PolicyResult, hcl.Diagnostics) {
	addr := o.change.Addr
	attrs, prior, err := o.values(k)
	if err != nil {
		return nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Policy cannot read the object",
			Detail:  fmt.Sprintf("The attributes of %s cannot be read for resource_policy %q %q: %s.", addr, pol.kind, pol.label, err),
			Subject: pol.declRange.Ptr()}}
	}
	// The policy's locals once the filter keeps the object (but for a
	// filter that reads them): a local may hold what only the objects it
	// keeps have.
	ctx, diags := pol.context(known, attrs, prior, o.meta(), pol.filterReadsLocals)
	if diags.HasErrors() {
		return nil, at(diags, addr)
	}
	if pol.filter != nil {
		keep, fdiags := boolean(pol.filter, ctx, "filter", k.Name)
		if fdiags.HasErrors() || !keep {
			return nil, at(fdiags, addr)
		}
	}
	if !pol.filterReadsLocals && len(pol.locals) > 0 {
		if ctx, diags = pol.context(known, attrs, prior, o.meta(), true); diags.HasErrors() {
			return nil, at(diags, addr)
		}
	}
	var out []plans.PolicyResult
	for i, e := range pol.enforce {
		ok, cdiags := boolean(e.condition, ctx, "condition", k.Name)
		if cdiags.HasErrors() {
			diags = append(diags, at(cdiags, addr)...)
			continue
		}
		r := plans.PolicyResult{Policy: pol.name(), Range: *plans.At(&e.declRange), Level: string(pol.level),
			Address: addr, Operation: o.op, Enforce: i, Result: plans.PolicyPassed}
		if e.infoMessage != nil {
			info, mdiags := message(e.infoMessage, ctx)
			diags = append(diags, at(mdiags, addr)...)
			r.Info = hide(info)
		}
		if !ok {
			r.Result = plans.PolicyFailed
			r.Message = fmt.Sprintf("The condition of enforce block %d of resource_policy %q %q is false.", i+1, pol.kind, pol.label)
			if e.errorMessage != nil {
				msg, mdiags := message(e.errorMessage, ctx)
				diags = append(diags, at(mdiags, addr)...)
				r.Message = hide(msg)
			}
			r.Overridden = pol.level == MandatoryOverridable && overridden
			diags = append(diags, failure(pol, e, r))
		}
		out = append(out, r)
	}
	return out, diags
}

// failure is the diagnostic of a failed result: an error for a mandatory
// policy not overridden, a warning otherwise.
func failure(pol *policy, e *enforce, r plans.PolicyResult) *hcl.Diagnostic {
	d := &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Policy failed: " + r.Policy,
		Detail:  fmt.Sprintf("%s (%s): %s (resource_policy %q %q, %s.)", r.Address, r.Operation, r.Message, pol.kind, pol.label, pol.level),
		Subject: e.condition.Range().Ptr(), Context: e.declRange.Ptr()}
	switch {
	case pol.level == Advisory:
		d.Severity, d.Summary = hcl.DiagWarning, "Advisory policy failed: "+r.Policy
	case r.Overridden:
		d.Severity, d.Summary = hcl.DiagWarning, "Policy failed, overridden: "+r.Policy
	}
	return d
}

// at says which object an evaluation's diagnostics are of; they do not
// carry the values they were evaluated with (which a view would print,
// and which may hold a secret).
func at(diags hcl.Diagnostics, addr addrs.Addr) hcl.Diagnostics {
	for _, d := range diags {
		d.Detail = fmt.Sprintf("%s (evaluated on %s.)", d.Detail, addr)
		d.Expression, d.EvalContext = nil, nil
	}
	return diags
}

// Value is v, a value as encoding/json decodes it (an object, an array,
// a string, a number, a boolean, null), as a policy's expressions see it:
// an object is an object, an array a tuple.
func Value(v any) (cty.Value, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return cty.NilVal, err
	}
	return FromJSON(b)
}

// FromJSON is the JSON value b as a policy's expressions see it.
func FromJSON(b []byte) (cty.Value, error) {
	t, err := ctyjson.ImpliedType(b)
	if err != nil {
		return cty.NilVal, err
	}
	return ctyjson.Unmarshal(b, t)
}
