// Package policies is policy as code on every plan, in Terraform Policy's
// form: resource_policy blocks in *.policy.hcl files, each evaluated over
// the attributes of every object a plan changes (attrs), as Terraform
// 1.17's -policies evaluates them over resources
// (developer.hashicorp.com/terraform/policy/reference/policy/resource-policy).
// A kind says what a policy sees of its objects (Kind); Load reads and
// checks a folder's policies against the kinds; Check evaluates them on
// a plan. Where Terraform Policy has a construct, it keeps its name and
// meaning; docs/reference/policies.md names what is left out, and why.
package policies

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// Level is a policy's enforcement_level.
type Level string

// The enforcement levels, Terraform Policy's: an advisory failure is a
// warning; a mandatory one an error, and the run sends nothing; a
// mandatory_overridable one too, but an owner's override
// (-policy-override) lets it through.
const (
	Advisory             Level = "advisory"
	Mandatory            Level = "mandatory"
	MandatoryOverridable Level = "mandatory_overridable"
)

// The operations a policy can be evaluated on, as Terraform Policy names
// them; a policy without operations is evaluated on these three, as
// Terraform Policy's are.
var (
	operationNames    = []string{"create", "update", "delete", "no-op"}
	defaultOperations = []string{"create", "update", "no-op"}
)

// Set is the policies of the folders -policies names: every *.policy.hcl
// file of each, each file evaluated on its own (its locals are its own).
type Set struct {
	files []*file
	kinds []Kind
}

// file is one policy file: its top-level locals and its policies.
type file struct {
	name     string
	locals   hcl.Attributes
	policies []*policy
}

// policy is one resource_policy block.
type policy struct {
	file       *file
	kind       string // the first label: a kind's name, or a pattern with *
	label      string
	declRange  hcl.Range
	level      Level
	filter     hcl.Expression // nil: every object of the kinds
	operations []string
	locals     hcl.Attributes
	enforce    []*enforce
	kinds      []Kind // the kinds the first label matches
	// filterReadsLocals: the filter reads the policy's own locals, which
	// are then evaluated before it.
	filterReadsLocals bool
}

// enforce is one enforce block of a policy.
type enforce struct {
	condition, errorMessage, infoMessage hcl.Expression
	declRange                            hcl.Range
}

// Parser parses a policy file and keeps its source for the diagnostics'
// snippets (schema.Parser.ParseHCLFile).
type Parser interface {
	ParseHCLFile(path string) (*hcl.File, hcl.Diagnostics)
}

var fileSchema = &hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{
	{Type: "resource_policy", LabelNames: []string{"kind", "name"}},
	{Type: "locals"},
	// Terraform Policy's other blocks, refused with the reason.
	{Type: "provider_policy", LabelNames: []string{"provider", "name"}},
	{Type: "module_policy", LabelNames: []string{"source", "name"}},
	{Type: "policy"},
	{Type: "input", LabelNames: []string{"name"}},
}}

// leftOut says why provision leaves out each block of Terraform Policy it
// does not take.
var leftOut = map[string]string{
	"provider_policy": "provision has no providers: a place (an agent, a search cluster) is a block of the specs, and its objects are judged by resource_policy",
	"module_policy":   "a module's objects are judged as any object, by resource_policy; meta.module_path says which module instance declares one",
	"policy":          "provision has no plugins and no required providers; the policies are run by the provision that plans",
	"input":           "a policy here takes no variables: write the value in the policy's locals, or in a file of locals per environment",
}

var policySchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "enforcement_level"}, {Name: "filter"}, {Name: "operations"}},
	Blocks:     []hcl.BlockHeaderSchema{{Type: "locals"}, {Type: "enforce"}},
}

var enforceSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "condition", Required: true}, {Name: "error_message"}, {Name: "info_message"}},
}

// Load reads the policies of each folder of dirs (or one file) with p,
// for the kinds a plan may hold, and checks them before any is
// evaluated: a policy that does not parse, names a kind or an attribute
// that does not exist, refers to what is not defined, or whose condition
// or filter is not a boolean fails here, at its file and line.
func Load(dirs []string, p Parser, kinds []Kind) (*Set, hcl.Diagnostics) {
	s := &Set{kinds: kinds}
	var diags hcl.Diagnostics
	loaded := map[string]bool{}
	for _, dir := range dirs {
		paths, err := policyFiles(dir)
		if err != nil {
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "No policy files",
				Detail: fmt.Sprintf("-policies %s: %s.", dir, err)})
			continue
		}
		for _, path := range paths {
			if abs, err := filepath.Abs(path); err == nil && loaded[abs] { // a folder given twice
				continue
			} else {
				loaded[abs] = true
			}
			f, fdiags := s.loadFile(path, p)
			diags = append(diags, fdiags...)
			if f != nil {
				s.files = append(s.files, f)
			}
		}
	}
	if diags.HasErrors() {
		return nil, diags
	}
	return s, diags
}

// name is the policy as results and -policy-override name it:
// <kind>.<name>.
func (pol *policy) name() string { return pol.kind + "." + pol.label }

// Overridable checks that each of names is a mandatory_overridable
// policy of the set, which an owner's override may let through.
func (s *Set) Overridable(names []string) error {
	for _, n := range names {
		var found *policy
		for _, f := range s.files {
			for _, pol := range f.policies {
				if pol.name() == n {
					found = pol
				}
			}
		}
		switch {
		case found == nil:
			return fmt.Errorf("-policy-override %s names no policy of the policies given (<kind>.<name>, as a result names it)", n)
		case found.level != MandatoryOverridable:
			return fmt.Errorf("-policy-override %s names a policy whose enforcement_level is %q: only a mandatory_overridable policy can be overridden, as in Terraform Policy", n, found.level)
		}
	}
	return nil
}

// policyFiles are the *.policy.hcl files of dir, sorted; a file is its
// own list.
func policyFiles(dir string) ([]string, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return []string{dir}, nil
	}
	paths, _ := filepath.Glob(filepath.Join(dir, "*.policy.hcl"))
	if len(paths) == 0 {
		return nil, fmt.Errorf("the folder holds no *.policy.hcl file")
	}
	sort.Strings(paths)
	return paths, nil
}

func (s *Set) loadFile(path string, p Parser) (*file, hcl.Diagnostics) {
	hf, diags := p.ParseHCLFile(path)
	if diags.HasErrors() {
		return nil, diags
	}
	c, cdiags := hf.Body.Content(fileSchema)
	diags = append(diags, cdiags...)
	f := &file{name: path, locals: hcl.Attributes{}}
	for _, b := range c.Blocks.OfType("locals") {
		diags = append(diags, addLocals(f.locals, b)...)
	}
	if !diags.HasErrors() {
		if diags = append(diags, f.check()...); diags.HasErrors() {
			return nil, diags
		}
	}
	seen := map[string]hcl.Range{}
	for _, b := range c.Blocks {
		if why, ok := leftOut[b.Type]; ok {
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: fmt.Sprintf("%s is not supported", b.Type),
				Detail: fmt.Sprintf("Terraform Policy's %s block is left out of provision's policies: %s.", b.Type, why), Subject: b.DefRange.Ptr()})
			continue
		}
		if b.Type != "resource_policy" {
			continue
		}
		key := b.Labels[0] + "." + b.Labels[1]
		if prev, dup := seen[key]; dup {
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Duplicate policy",
				Detail:  fmt.Sprintf("resource_policy %q %q was already declared at %s: a policy's name is unique within its file.", b.Labels[0], b.Labels[1], prev),
				Subject: b.LabelRanges[1].Ptr()})
			continue
		}
		seen[key] = b.DefRange
		pol, pdiags := s.decodePolicy(f, b)
		diags = append(diags, pdiags...)
		if pol != nil {
			f.policies = append(f.policies, pol)
		}
	}
	if diags.HasErrors() {
		return nil, diags
	}
	return f, diags
}

// addLocals adds the attributes of a locals block to locals, refusing a
// name defined twice.
func addLocals(locals hcl.Attributes, b *hcl.Block) hcl.Diagnostics {
	attrs, diags := b.Body.JustAttributes()
	for name, a := range attrs {
		if prev, dup := locals[name]; dup {
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Duplicate local value",
				Detail: fmt.Sprintf("local.%s was already defined at %s.", name, prev.NameRange), Subject: a.NameRange.Ptr()})
			continue
		}
		locals[name] = a
	}
	return diags
}

func (s *Set) decodePolicy(f *file, b *hcl.Block) (*policy, hcl.Diagnostics) {
	c, diags := b.Body.Content(policySchema)
	pol := &policy{file: f, kind: b.Labels[0], label: b.Labels[1], declRange: b.DefRange, level: Mandatory, operations: defaultOperations, locals: hcl.Attributes{}}
	for _, k := range s.kinds {
		if ok, _ := path.Match(pol.kind, k.Name); ok {
			pol.kinds = append(pol.kinds, k)
		}
	}
	if len(pol.kinds) == 0 {
		diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "No such kind",
			Detail:  fmt.Sprintf("resource_policy %q names no kind of object provision plans (%s); * matches them all, or part of a name.", pol.kind, strings.Join(kindNames(s.kinds), ", ")),
			Subject: b.LabelRanges[0].Ptr()})
	}
	if a, ok := c.Attributes["enforcement_level"]; ok {
		v, vdiags := a.Expr.Value(nil)
		diags = append(diags, vdiags...)
		switch l := Level(str(v)); l {
		case Advisory, Mandatory, MandatoryOverridable:
			pol.level = l
		default:
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid enforcement_level",
				Detail: `enforcement_level is "advisory", "mandatory" (the default) or "mandatory_overridable", as a string.`, Subject: a.Expr.Range().Ptr()})
		}
	}
	if a, ok := c.Attributes["operations"]; ok {
		pol.operations = []string{} // [] is every operation, as in Terraform Policy
		v, vdiags := a.Expr.Value(nil)
		diags = append(diags, vdiags...)
		if !vdiags.HasErrors() && (!v.IsKnown() || v.IsNull() || !(v.Type().IsTupleType() || v.Type().IsListType())) {
			v = cty.ListVal([]cty.Value{cty.NumberIntVal(0)}) // refused below
		}
		for it := v.ElementIterator(); !vdiags.HasErrors() && it.Next(); {
			_, e := it.Element()
			if op := str(e); slices.Contains(operationNames, op) {
				pol.operations = append(pol.operations, op)
				continue
			}
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid operations",
				Detail: `operations is a list of "create", "update", "delete" and "no-op".`, Subject: a.Expr.Range().Ptr()})
			break
		}
	}
	if len(pol.operations) == 0 {
		pol.operations = operationNames
	}
	for _, lb := range c.Blocks.OfType("locals") {
		diags = append(diags, addLocals(pol.locals, lb)...)
	}
	if a, ok := c.Attributes["filter"]; ok {
		pol.filter = a.Expr
		pol.filterReadsLocals = slices.ContainsFunc(a.Expr.Variables(), func(t hcl.Traversal) bool {
			n, _, _ := step(t)
			return t.RootName() == "local" && pol.locals[n] != nil
		})
	}
	for _, eb := range c.Blocks.OfType("enforce") {
		ec, ediags := eb.Body.Content(enforceSchema)
		diags = append(diags, ediags...)
		if ediags.HasErrors() {
			continue
		}
		e := &enforce{condition: ec.Attributes["condition"].Expr, declRange: eb.DefRange}
		if a, ok := ec.Attributes["error_message"]; ok {
			e.errorMessage = a.Expr
		}
		if a, ok := ec.Attributes["info_message"]; ok {
			e.infoMessage = a.Expr
		}
		pol.enforce = append(pol.enforce, e)
	}
	if len(pol.enforce) == 0 && !diags.HasErrors() {
		diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Missing enforce block",
			Detail: "A resource_policy holds one or more enforce blocks, each with a condition: a policy without one judges nothing.", Subject: b.DefRange.Ptr()})
	}
	if diags.HasErrors() {
		return nil, diags
	}
	if slices.ContainsFunc(pol.exprs(), func(e hcl.Expression) bool { return readsPrior(e) }) &&
		(slices.Contains(pol.operations, "create") || slices.Contains(pol.operations, "no-op")) {
		return nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "prior_attrs without its operations",
			Detail:  `This policy reads prior_attrs, which a create and a no-op have none of (null): it judges updates, deletes or both, which operations must say (operations = ["update"]), as Terraform Policy requires.`,
			Subject: b.DefRange.Ptr()}}
	}
	return pol, append(diags, pol.check()...)
}

// readsPrior reports whether expr refers to prior_attrs.
func readsPrior(expr hcl.Expression) bool {
	return slices.ContainsFunc(expr.Variables(), func(t hcl.Traversal) bool { return t.RootName() == "prior_attrs" })
}

// str is v as a string; "" when it is not a known string.
func str(v cty.Value) string {
	if !v.IsKnown() || v.IsNull() || v.Type() != cty.String {
		return ""
	}
	return v.AsString()
}

func kindNames(kinds []Kind) []string {
	names := make([]string, len(kinds))
	for i, k := range kinds {
		names[i] = k.Name
	}
	return names
}
