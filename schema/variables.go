package schema

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/typeexpr"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
	"github.com/zclconf/go-cty/cty/function"
	ctyjson "github.com/zclconf/go-cty/cty/json"
)

// EnvPrefix prefixes the environment variables that set input variables:
// PROVISION_VAR_api_host sets var.api_host.
const EnvPrefix = "PROVISION_VAR_"

// Variable is an input variable declared by a variable block.
type Variable struct {
	Name        string
	Type        cty.Type // cty.DynamicPseudoType when no type is given
	Default     cty.Value
	Description string
	// Sensitive values are shown as "(sensitive)" in every view, never
	// saved, and refused in tags, which Consul's catalog shows to all.
	Sensitive bool
	DeclRange hcl.Range
	// Validations are the variable's validation blocks, in order.
	Validations []*Validation

	// Value is the final value: the default, overridden by the
	// environment, then the variable files, then -var, in that order.
	Value cty.Value
}

// Inputs are the values given to variables from outside the specs.
type Inputs struct {
	Vars     []string // "name=value", from -var, in order
	VarFiles []string // paths, from -var-file, in order
	Env      []string // "KEY=value" pairs, as os.Environ returns them
	// Saved are the values a saved plan was made with (JSON, by name):
	// apply PLANFILE takes them over the environment and the variable
	// files, under -var.
	Saved map[string][]byte
	// GenerateConfig allows import blocks that name undeclared objects:
	// plan -generate-config-out writes their declarations.
	GenerateConfig bool
}

var variableSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "type"}, {Name: "default"}, {Name: "description"}, {Name: "sensitive"}},
	Blocks:     []hcl.BlockHeaderSchema{{Type: "validation"}},
}

// Validation is a rule a variable's value must keep, as Terraform's:
// validation { condition = <bool>  error_message = "..." }. The condition
// may refer to the variable itself (var.<name>) and call the functions.
type Validation struct {
	Condition    hcl.Expression
	ErrorMessage string
	DeclRange    hcl.Range
}

var validationSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "condition", Required: true}, {Name: "error_message", Required: true}},
}

// decodeValidation decodes one validation block; its error_message is a
// string written as is (no reference: it is printed, and a value may be
// sensitive).
func decodeValidation(block *hcl.Block) (*Validation, hcl.Diagnostics) {
	content, diags := block.Body.Content(validationSchema)
	val := &Validation{DeclRange: block.DefRange}
	if attr, ok := content.Attributes["condition"]; ok {
		val.Condition = attr.Expr
	}
	if attr, ok := content.Attributes["error_message"]; ok {
		msg, mdiags := attr.Expr.Value(nil)
		switch {
		case mdiags.HasErrors() || msg.Type() != cty.String || msg.IsNull() || strings.TrimSpace(msg.AsString()) == "":
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid error_message",
				Detail:  "error_message is a sentence written as a string, without references, that says what a valid value is.",
				Subject: attr.Expr.Range().Ptr()})
		default:
			val.ErrorMessage = msg.AsString()
		}
	}
	return val, diags
}

// validate holds each variable's value to its validation blocks: a false
// condition is an error at the variable, with its error_message. A
// condition that cannot be evaluated (it refers to anything but the
// variable) is an error at the condition.
func validate(vars map[string]*Variable, functions map[string]function.Function) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, v := range sortedVariables(vars) {
		if len(v.Validations) == 0 || v.Value == cty.NilVal || !v.Value.IsWhollyKnown() {
			continue
		}
		ctx := &hcl.EvalContext{Functions: functions, Variables: map[string]cty.Value{"var": cty.ObjectVal(map[string]cty.Value{v.Name: v.Value})}}
		for _, val := range v.Validations {
			if val.Condition == nil {
				continue
			}
			ok, cdiags := val.Condition.Value(ctx)
			ok, _ = ok.Unmark()
			switch {
			case cdiags.HasErrors():
				if refersElsewhere(val.Condition, v.Name) {
					for _, d := range cdiags {
						d.Detail += fmt.Sprintf(" A validation condition may refer only to the variable it validates (var.%s).", v.Name)
					}
				}
				diags = append(diags, cdiags...)
			case ok.Type() != cty.Bool || ok.IsNull():
				diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid validation condition",
					Detail: "The condition is true or false.", Subject: val.Condition.Range().Ptr(), Context: val.DeclRange.Ptr()})
			case !ok.IsKnown() || ok.True():
			default:
				diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid value for variable",
					Detail:  fmt.Sprintf("%s\n\nThis was checked by the validation rule at %s.", val.ErrorMessage, val.Condition.Range()),
					Subject: v.DeclRange.Ptr()})
			}
		}
	}
	return diags
}

// refersElsewhere says whether the condition refers to anything but the
// variable var.name.
func refersElsewhere(cond hcl.Expression, name string) bool {
	for _, tr := range cond.Variables() {
		if tr.RootName() != "var" || len(tr) < 2 {
			return true
		}
		if attr, ok := tr[1].(hcl.TraverseAttr); !ok || attr.Name != name {
			return true
		}
	}
	return false
}

// sensitiveMark marks the values of sensitive variables, and whatever is
// computed from them, while the specs are decoded.
const sensitiveMark = "sensitive"

func decodeVariableBlock(block *hcl.Block) (*Variable, hcl.Diagnostics) {
	v := &Variable{Name: block.Labels[0], Type: cty.DynamicPseudoType, DeclRange: block.DefRange}
	content, diags := block.Body.Content(variableSchema)
	if !hclsyntax.ValidIdentifier(v.Name) {
		diags = append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Invalid variable name",
			Detail:   "A variable name must start with a letter or underscore and may contain only letters, digits, underscores and dashes.",
			Subject:  block.LabelRanges[0].Ptr(),
		})
	}
	for _, b := range content.Blocks.OfType("validation") {
		val, vdiags := decodeValidation(b)
		diags = append(diags, vdiags...)
		v.Validations = append(v.Validations, val)
	}
	if attr, ok := content.Attributes["type"]; ok {
		ty, tdiags := typeexpr.TypeConstraint(attr.Expr)
		diags = append(diags, tdiags...)
		if !tdiags.HasErrors() {
			v.Type = ty
		}
	}
	if attr, ok := content.Attributes["description"]; ok {
		d, ddiags := attr.Expr.Value(nil)
		diags = append(diags, ddiags...)
		if !ddiags.HasErrors() && d.Type() == cty.String && !d.IsNull() {
			v.Description = d.AsString()
		}
	}
	if attr, ok := content.Attributes["sensitive"]; ok {
		sv, sdiags := attr.Expr.Value(nil)
		diags = append(diags, sdiags...)
		if !sdiags.HasErrors() && (sv.Type() != cty.Bool || sv.IsNull()) {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid sensitive flag",
				Detail:   "sensitive is true or false.",
				Subject:  attr.Expr.Range().Ptr(),
			})
		} else if !sdiags.HasErrors() {
			v.Sensitive = sv.True()
		}
	}
	if attr, ok := content.Attributes["default"]; ok {
		d, ddiags := attr.Expr.Value(nil)
		diags = append(diags, ddiags...)
		if !ddiags.HasErrors() {
			if d.IsNull() {
				d = cty.NullVal(v.Type)
			}
			conv, err := convert.Convert(d, v.Type)
			if err != nil {
				diags = append(diags, &hcl.Diagnostic{
					Severity: hcl.DiagError,
					Summary:  "Invalid default value for variable",
					Detail:   fmt.Sprintf("This default value is not compatible with the variable's type constraint: %s.", err),
					Subject:  attr.Expr.Range().Ptr(),
				})
				// Unknown, not missing: reported once, here.
				v.Default = cty.UnknownVal(v.Type)
			} else {
				v.Default = conv
			}
		}
	}
	return v, diags
}

// assignValues gives every variable its final value. Values that name an
// undeclared variable and variables left without a value are errors.
func assignValues(vars map[string]*Variable, in Inputs, readFile func(string) (*hcl.File, hcl.Diagnostics)) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, v := range vars {
		v.Value = v.Default // cty.NilVal when there is no default; null is a default
	}
	set := func(name string, raw hcl.Expression, rawString string, rng hcl.Range) {
		v, ok := vars[name]
		if !ok {
			// As Terraform's: a variable file (raw, an expression of it)
			// may hold values for other specs, and is warned of; a -var
			// is an error.
			severity := hcl.DiagError
			if raw != nil {
				severity = hcl.DiagWarning
			}
			diags = append(diags, &hcl.Diagnostic{
				Severity: severity,
				Summary:  "Value for undeclared variable",
				Detail:   fmt.Sprintf("A value was given for %q, but no variable of that name is declared. Declare it with a variable %q {} block, or remove the value.", name, name),
				Subject:  rng.Ptr(),
			})
			return
		}
		var val cty.Value
		// A value from the command line or the environment is a string
		// unless the variable's type says otherwise (as in Terraform:
		// -var tag=1.10 stays "1.10", 007 stays "007").
		if raw == nil && (v.Type == cty.String || v.Type == cty.DynamicPseudoType) {
			val = cty.StringVal(rawString)
		} else {
			if raw == nil {
				var pdiags hcl.Diagnostics
				raw, pdiags = hclsyntax.ParseExpression([]byte(rawString), rng.Filename, hcl.InitialPos)
				if pdiags.HasErrors() || len(raw.Variables()) > 0 {
					// A value that is not a constant expression is taken as
					// a string, and fails the type check below if it must.
					raw = nil
					val = cty.StringVal(rawString)
				}
			}
			if raw != nil {
				var vdiags hcl.Diagnostics
				val, vdiags = raw.Value(nil)
				if vdiags.HasErrors() {
					diags = append(diags, vdiags...)
					return
				}
			}
		}
		conv, err := convert.Convert(val, v.Type)
		if err != nil {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid value for variable",
				Detail:   fmt.Sprintf("The value given for var.%s is not compatible with its type constraint: %s.", name, err),
				Subject:  rng.Ptr(),
				Context:  v.DeclRange.Ptr(),
			})
			return
		}
		v.Value = conv
	}

	envNames := make([]string, 0)
	envVals := map[string]string{}
	for _, kv := range in.Env {
		k, val, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(k, EnvPrefix) {
			continue
		}
		name := strings.TrimPrefix(k, EnvPrefix)
		if _, declared := vars[name]; !declared {
			continue // the environment is shared; only declared names count
		}
		envNames = append(envNames, name)
		envVals[name] = val
	}
	sort.Strings(envNames)
	for _, name := range envNames {
		set(name, nil, envVals[name], inputRange("environment variable "+EnvPrefix+name))
	}

	for _, path := range in.VarFiles {
		f, fdiags := readFile(path)
		diags = append(diags, fdiags...)
		if f == nil {
			continue
		}
		attrs, adiags := f.Body.JustAttributes()
		diags = append(diags, adiags...)
		names := make([]string, 0, len(attrs))
		for n := range attrs {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			set(n, attrs[n].Expr, "", attrs[n].NameRange)
		}
	}

	for _, name := range slices.Sorted(maps.Keys(in.Saved)) {
		v, ok := vars[name]
		if !ok || v.Sensitive {
			continue // the saved plan's sources say the specs moved
		}
		val, err := savedValue(in.Saved[name], v.Type)
		if err != nil {
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid value in the saved plan",
				Detail: fmt.Sprintf("The saved plan's value of var.%s does not fit its type now: %s.", name, err), Subject: v.DeclRange.Ptr()})
			continue
		}
		v.Value = val
	}

	for _, kv := range in.Vars {
		name, val, ok := strings.Cut(kv, "=")
		if !ok {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid -var option",
				Detail:   fmt.Sprintf("The option -var %q is not of the form name=value.", kv),
				Subject:  inputRange("-var " + kv).Ptr(),
			})
			continue
		}
		rng := inputRange("-var " + name)
		rng.End = hcl.Pos{Line: 1, Column: len(val) + 1, Byte: len(val)}
		set(strings.TrimSpace(name), nil, val, rng)
	}

	for _, v := range sortedVariables(vars) {
		if v.Value == cty.NilVal {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "No value for required variable",
				Detail:   fmt.Sprintf("The variable %q has no default, and no value was given. Give one with -var %s=..., a -var-file, or %s%s.", v.Name, v.Name, EnvPrefix, v.Name),
				Subject:  v.DeclRange.Ptr(),
			})
		}
	}
	return diags
}

// inputRange names a value that comes from outside any file, so that its
// diagnostics still say where it came from.
func inputRange(source string) hcl.Range {
	return hcl.Range{Filename: "<" + source + ">", Start: hcl.InitialPos, End: hcl.InitialPos}
}

func sortedVariables(vars map[string]*Variable) []*Variable {
	out := make([]*Variable, 0, len(vars))
	for _, v := range vars {
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// evalContext exposes the variables as var.<name> and the functions;
// evalLocals adds local.<name>.
func evalContext(vars map[string]*Variable, functions map[string]function.Function) *hcl.EvalContext {
	vals := map[string]cty.Value{}
	for name, v := range vars {
		if v.Value != cty.NilVal && v.Sensitive {
			vals[name] = v.Value.Mark(sensitiveMark)
		} else if v.Value != cty.NilVal {
			vals[name] = v.Value
		} else {
			vals[name] = cty.DynamicVal
		}
	}
	// path.root and path.module: the specs' files are named from the root
	// directory of the specs (file, fileset, templatefile).
	paths := cty.ObjectVal(map[string]cty.Value{"root": cty.StringVal("."), "module": cty.StringVal(".")})
	return &hcl.EvalContext{Variables: map[string]cty.Value{"var": cty.ObjectVal(vals), "path": paths}, Functions: functions}
}

// savedValue decodes a value a saved plan holds, of the variable's type.
func savedValue(b []byte, ty cty.Type) (cty.Value, error) {
	implied, err := ctyjson.ImpliedType(b)
	if err != nil {
		return cty.NilVal, err
	}
	v, err := ctyjson.Unmarshal(b, implied)
	if err != nil {
		return cty.NilVal, err
	}
	return convert.Convert(v, ty)
}

// SavedValues are the values of the variables as a saved plan keeps them
// (JSON, by name), but the sensitive ones and those with no value.
func SavedValues(vars map[string]*Variable) map[string][]byte {
	out := map[string][]byte{}
	for name, v := range vars {
		if v.Sensitive || v.Value == cty.NilVal || !v.Value.IsWhollyKnown() {
			continue
		}
		if b, err := ctyjson.Marshal(v.Value, v.Value.Type()); err == nil {
			out[name] = b
		}
	}
	return out
}

// SensitiveValue is a sensitive variable's value as JSON, for the keyed
// digest a saved plan keeps of it; false for a variable that is not
// sensitive or has no known value.
func SensitiveValue(v *Variable) ([]byte, bool) {
	if v == nil || !v.Sensitive || v.Value == cty.NilVal || !v.Value.IsWhollyKnown() {
		return nil, false
	}
	plain, _ := v.Value.UnmarkDeep()
	b, err := ctyjson.Marshal(plain, plain.Type())
	return b, err == nil
}
