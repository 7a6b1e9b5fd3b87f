package schema

import (
	"fmt"
	"math/big"
	"slices"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
	"github.com/zclconf/go-cty/cty/function"
)

// decoder evaluates attribute expressions against the declared variables
// and collects every diagnostic instead of stopping at the first.
type decoder struct {
	// lang is the language of the specs decoded.
	lang   *Language
	ctx    *hcl.EvalContext
	vars   map[string]*Variable
	locals map[string]*Local
	// each is the instance of a block with for_each being decoded; nil
	// elsewhere, where each.key and each.value are errors.
	each  *Instance
	diags hcl.Diagnostics
	// secrets are the strings computed from sensitive variables.
	secrets []string
	// bg bounds the work the specs ask for; alike is what Decoder.Alike
	// keeps. Both are the load's, shared by its decoders.
	bg    *budget
	alike *alike
	// namespaces are the kinds' namespaces defined so far
	// (document.<type>.<label> once the documents' ids are known), by
	// name (KindSchema.Namespace).
	namespaces map[string]cty.Value
	// parser reads modules' files, files the files the functions read;
	// modules are the modules read, by directory; functions the table.
	parser    *Parser
	files     *specFiles
	modules   map[string]*moduleFiles
	functions map[string]function.Function
	// repeated are the module calls of this module with for_each or
	// count, whose outputs are named by instance.
	repeated map[string]bool
	// keyAttr is the object attribute being decoded (at keyAt), and
	// keyRanges where each of its keys is written, by its path
	// (connect.sidecar_service.kind), found when first asked (keyRange).
	keyAttr   hcl.Expression
	keyAt     string
	keyRanges map[string]hcl.Range
	// later are the root's pieces whose blocks are parsed as they are
	// decoded (kindObjects); unparsed, that one of them did not parse;
	// order, each root file's place in the load.
	later    []*piece
	unparsed bool
	order    map[string]int
	// placed are the labels of the places' blocks, by type, once
	// decoded.
	placed map[string][]string
	// late are the blocks of the Late places, decoded once every object
	// is (latePlaces).
	late map[*PlaceSchema][]*hcl.Block
}

// evaluate is expr's value in the decoder's context, refused when it is
// larger than one load may build.
func (d *decoder) evaluate(expr hcl.Expression) (cty.Value, hcl.Diagnostics) {
	v, diags := expr.Value(d.ctx)
	if !diags.HasErrors() {
		if sdiags := d.bg.checkSize(v, expr.Range()); sdiags != nil {
			return cty.DynamicVal, append(diags, sdiags...)
		}
	}
	return v, diags
}

// eval evaluates expr, unmarked (the strings that were sensitive are
// recorded as secrets). ok is false when it failed (a diagnostic was
// recorded) or is not wholly known (a variable without a value, reported
// once at the variable).
func (d *decoder) eval(expr hcl.Expression) (cty.Value, bool) {
	if v, ok := literal(expr); ok {
		return v, true
	}
	if !d.checkRefs(expr) {
		return cty.NilVal, false
	}
	v, diags := d.evaluate(expr)
	d.diags = append(d.diags, diags...)
	if diags.HasErrors() {
		return cty.NilVal, false
	}
	v = d.unmark(v)
	return v, v.IsWhollyKnown()
}

// literal is the value of an expression that is a constant as written:
// a number, a bool, a quoted string without interpolation, a short list
// of those (as a list of header names is written), or a short object of
// those and of such objects (as weights and tagged addresses are
// written), which refers to nothing, carries no mark and is within the
// size limits. Most
// attributes of a spec are one, and evaluating them the general way
// (references, size, marks) would be much of the work of decoding a
// large spec.
func literal(expr hcl.Expression) (cty.Value, bool) {
	switch e := expr.(type) {
	case *hclsyntax.TupleConsExpr:
		if len(e.Exprs) == 0 || len(e.Exprs) > shortList {
			return cty.NilVal, false
		}
		vals := make([]cty.Value, len(e.Exprs))
		size := 0
		for i, x := range e.Exprs {
			v, ok := literal(x)
			if !ok || !v.Type().IsPrimitiveType() {
				return cty.NilVal, false
			}
			if v.Type() == cty.String {
				size += len(v.AsString())
			}
			vals[i] = v
		}
		return cty.TupleVal(vals), size <= MaxStringBytes
	case *hclsyntax.ObjectConsExpr:
		if len(e.Items) == 0 || len(e.Items) > shortList {
			return cty.NilVal, false
		}
		attrs := make(map[string]cty.Value, len(e.Items))
		for _, item := range e.Items {
			k, ok := literalKey(item.KeyExpr)
			if _, dup := attrs[k]; !ok || dup {
				return cty.NilVal, false // a duplicate key is the general path's to report
			}
			v, ok := literal(item.ValueExpr)
			if !ok || !v.Type().IsPrimitiveType() && !v.Type().IsObjectType() {
				return cty.NilVal, false
			}
			attrs[k] = v
		}
		return cty.ObjectVal(attrs), true
	case *hclsyntax.LiteralValueExpr:
		return e.Val, e.Val.IsKnown() && !e.Val.IsMarked()
	case *hclsyntax.TemplateExpr:
		if len(e.Parts) != 1 {
			return cty.NilVal, false
		}
		part, ok := e.Parts[0].(*hclsyntax.LiteralValueExpr)
		if ok && part.Val.Type() == cty.String && part.Val.IsKnown() && !part.Val.IsMarked() && len(part.Val.AsString()) <= MaxStringBytes {
			return part.Val, true
		}
	}
	return cty.NilVal, false
}

// literalKey is an object's key as written: a bare name or a quoted
// string without interpolation.
func literalKey(expr hcl.Expression) (string, bool) {
	k, ok := expr.(*hclsyntax.ObjectConsKeyExpr)
	if !ok {
		return "", false
	}
	if tr, isName := k.Wrapped.(*hclsyntax.ScopeTraversalExpr); isName && !k.ForceNonLiteral && len(tr.Traversal) == 1 {
		return tr.Traversal.RootName(), true
	}
	v, ok := literal(k.Wrapped)
	if !ok || v.Type() != cty.String || v.IsNull() {
		return "", false
	}
	return v.AsString(), true
}

// shortList is the most elements a list taken as written has.
const shortList = 16

// value evaluates attr and converts it to ty. ok is false when the
// attribute is invalid (a diagnostic was recorded) or null.
func (d *decoder) value(attr *hcl.Attribute, ty cty.Type) (cty.Value, bool) {
	val, ok := d.eval(attr.Expr)
	if !ok {
		return cty.NilVal, false
	}
	conv, err := toType(val, ty)
	if err != nil {
		d.diags = append(d.diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Incorrect attribute value type",
			Detail:   fmt.Sprintf("Inappropriate value for attribute %q: %s.", attr.Name, err),
			Subject:  attr.Expr.Range().Ptr(),
			Context:  attr.Range.Ptr(),
		})
		return cty.NilVal, false
	}
	// Null means unset.
	return conv, !conv.IsNull()
}

// toType is convert.Convert, but a tuple whose elements are all of a
// list's element type becomes that list at once: cty unifies a tuple's
// element types pairwise, in time that grows with the square of its
// length.
func toType(v cty.Value, ty cty.Type) (cty.Value, error) {
	if ty.IsListType() && v.Type().IsTupleType() && v.IsWhollyKnown() && !v.IsNull() && !v.IsMarked() && v.LengthInt() > 0 &&
		!slices.ContainsFunc(v.Type().TupleElementTypes(), func(t cty.Type) bool { return !t.Equals(ty.ElementType()) }) {
		return cty.ListVal(v.AsValueSlice()), nil
	}
	return convert.Convert(v, ty)
}

// unmark returns v without the marks of sensitive variables, and records
// the strings that carried them as secrets.
func (d *decoder) unmark(v cty.Value) cty.Value {
	v, marked := v.UnmarkDeepWithPaths()
	for _, pm := range marked {
		if e, err := pm.Path.Apply(v); err == nil {
			d.secrets = append(d.secrets, stringLeaves(e)...)
		}
	}
	return v
}

// stringLeaves are the known, non-empty strings in v. Numbers are left
// out: hidden inside JSON they would break it, and a number is no secret.
func stringLeaves(v cty.Value) []string {
	var out []string
	_ = cty.Walk(v, func(_ cty.Path, e cty.Value) (bool, error) {
		if e.IsKnown() && !e.IsNull() && !e.IsMarked() && e.Type() == cty.String && e.AsString() != "" {
			out = append(out, e.AsString())
		}
		return true, nil
	})
	return out
}

// checkRefs reports every reference in expr that names nothing: only
// var.<declared>, local.<declared> and, inside a block with for_each,
// each.key and each.value exist.
func (d *decoder) checkRefs(expr hcl.Expression) bool {
	ok := true
	for _, tr := range expr.Variables() {
		if diag := d.checkRef(tr); diag != nil {
			ok = false
			d.diags = append(d.diags, diag)
		}
	}
	return ok
}

// lookup is the variable name of ctx or of a context it is within.
func lookup(ctx *hcl.EvalContext, name string) (cty.Value, bool) {
	for ; ctx != nil; ctx = ctx.Parent() {
		if v, ok := ctx.Variables[name]; ok {
			return v, true
		}
	}
	return cty.NilVal, false
}

func (d *decoder) checkRef(tr hcl.Traversal) *hcl.Diagnostic {
	bad := func(summary, format string, args ...any) *hcl.Diagnostic {
		return &hcl.Diagnostic{Severity: hcl.DiagError, Summary: summary, Detail: fmt.Sprintf(format, args...), Subject: tr.SourceRange().Ptr()}
	}
	root := tr.RootName()
	name := ""
	if len(tr) > 1 {
		if a, isAttr := tr[1].(hcl.TraverseAttr); isAttr {
			name = a.Name
		}
	}
	switch root {
	case "var":
		if name == "" {
			return bad("Invalid variable reference", "An input variable is referred to as var.<name>.")
		}
		if _, declared := d.vars[name]; !declared {
			return bad("Reference to undeclared input variable",
				"An input variable with the name %q has not been declared. Declare it with a variable %q {} block.", name, name)
		}
	case "local":
		if name == "" {
			return bad("Invalid local value reference", "A local value is referred to as local.<name>.")
		}
		if _, declared := d.locals[name]; !declared {
			return bad("Reference to undeclared local value",
				"A local value with the name %q has not been declared. Declare it in a locals { %s = ... } block.", name, name)
		}
	case "module":
		calls, known := lookup(d.ctx, "module")
		if !known || name == "" || !calls.Type().HasAttribute(name) {
			return bad("Reference to undeclared module",
				"No module %q {} block is called here: module.<name> names the outputs of a module block of these specs (module.<name>.<output>, or module.<name>[<key>].<output> with for_each or count).", name)
		}
		if output, outputs, ok := missingOutput(tr, calls.GetAttr(name), d.repeated[name]); !ok {
			return bad("Unsupported module output", "The module %q has no output %q. Its outputs are: %s.", name, output, outputs)
		}
	case "count":
		if _, known := lookup(d.ctx, "count"); !known || name != "index" {
			return bad("Invalid count reference", "count.index exists only in a module block that sets count: it is the instance's number, from 0.")
		}
	case "path":
		if name != "module" && name != "root" {
			return bad("Invalid path reference", "path.module is the directory of the module the expression is in, path.root that of the root specs, both named from the root specs' directory; there is no path.%s.", name)
		}
	case "each":
		if d.each == nil {
			return bad("Reference to \"each\" in a block without for_each",
				"each.key and each.value exist only inside a block that sets for_each (service, index, document, import); here there is no instance for them to name.")
		}
		if name != "key" && name != "value" {
			return bad("Invalid each reference", "Inside a block with for_each, each.key is the instance's key and each.value its value; there is no each.%s.", name)
		}
	default:
		if s, ok := d.lang.places[root]; ok && s.Label != "" { // one without a label is no namespace
			if d.placed == nil {
				return bad("Reference to "+root+" not known here", "%s.<name> names a %s block of the root specs, from a block of the root specs (a service's agent = agent.<name>). Here (in a module, or in a local, which is evaluated before them) it is not known: pass the name as a string, or in a variable.", root, root)
			}
			if detail := checkPlaceRef(root, name, d.placed[root]); detail != "" {
				return bad("Reference to undeclared "+root, "%s", detail)
			}
			return nil
		}
		if k, ok := d.lang.namespaces[root]; ok {
			if summary, detail := k.CheckRef(tr, d.namespaces[root]); summary != "" {
				return bad(summary, "%s", detail)
			}
			return nil
		}
		return bad("Unknown reference",
			"There is nothing named %q here; an expression can refer to input variables (var.<name>), local values (local.<name>), path.module and path.root and, inside a block with for_each, each.key and each.value.", root)
	}
	return nil
}

func (d *decoder) str(attr *hcl.Attribute) string {
	if attr == nil {
		return ""
	}
	v, ok := d.value(attr, cty.String)
	if !ok {
		return ""
	}
	return v.AsString()
}

// override sets *to, and *rng when it is not nil, from attr: a string
// that replaces a default (a service's ID, an index's name). It says
// false when attr failed, which is reported already, so that the value is
// not checked again as if it were empty. A nil or null attr keeps the
// default.
func (d *decoder) override(attr *hcl.Attribute, to *string, rng *hcl.Range) bool {
	if attr == nil {
		return true
	}
	n := len(d.diags)
	if v, ok := d.value(attr, cty.String); ok {
		*to = v.AsString()
		if rng != nil {
			*rng = attr.Expr.Range()
		}
	}
	return !d.diags[n:].HasErrors()
}

func (d *decoder) boolean(attr *hcl.Attribute) bool {
	if attr == nil {
		return false
	}
	v, ok := d.value(attr, cty.Bool)
	return ok && v.True()
}

// port decodes a TCP port number, 1 to 65535, or 0 (also when it is not
// given): a registration without a port, as Consul keeps one.
func (d *decoder) port(attr *hcl.Attribute) int {
	if attr == nil {
		return 0
	}
	v, ok := d.value(attr, cty.Number)
	if !ok {
		return 0
	}
	bf := v.AsBigFloat()
	n, acc := bf.Int64()
	if acc != big.Exact || n < 0 || n > 65535 {
		d.errorf(attr.Expr.Range(), attr.Range, "Invalid port", "A port is a whole number from 1 to 65535 (or 0, for a registration without one); got %s.", bf.Text('f', -1))
		return 0
	}
	return int(n)
}

func (d *decoder) strList(attr *hcl.Attribute) []string {
	if attr == nil {
		return nil
	}
	v, ok := d.value(attr, cty.List(cty.String))
	if !ok {
		return nil
	}
	var out []string
	for _, e := range v.AsValueSlice() {
		if e.IsNull() {
			d.errorf(attr.Expr.Range(), attr.Range, "Null list element", "The list %q holds a null element.", attr.Name)
			continue
		}
		out = append(out, e.AsString())
	}
	return out
}

func (d *decoder) strMap(attr *hcl.Attribute) map[string]string {
	if attr == nil {
		return nil
	}
	v, ok := d.value(attr, cty.Map(cty.String))
	if !ok {
		return nil
	}
	out := map[string]string{}
	for k, e := range v.AsValueMap() {
		if e.IsNull() {
			d.errorf(attr.Expr.Range(), attr.Range, "Null map element", "The map %q holds a null value at key %q.", attr.Name, k)
			continue
		}
		out[k] = e.AsString()
	}
	return out
}

// errorf records an error diagnostic whose subject is the narrowest range
// and whose context is the enclosing construct.
func (d *decoder) errorf(subject, context hcl.Range, summary, format string, args ...any) {
	d.diags = append(d.diags, &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  summary,
		Detail:   fmt.Sprintf(format, args...),
		Subject:  subject.Ptr(),
		Context:  context.Ptr(),
	})
}

// content is body.Content that records its diagnostics.
func (d *decoder) content(body hcl.Body, s *hcl.BodySchema) *hcl.BodyContent {
	c, diags := body.Content(s)
	d.diags = append(d.diags, diags...)
	return c
}
