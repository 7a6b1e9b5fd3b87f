package schema

import (
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// Local is one named expression of a locals block, referred to as
// local.<name>.
type Local struct {
	Name      string
	Expr      hcl.Expression
	DeclRange hcl.Range
	// Value is the evaluated value, still marked where it comes from a
	// sensitive variable; unknown when the expression failed (reported
	// once, at the local).
	Value cty.Value
}

// decodeLocals collects the attributes of every locals block; a name
// declared twice is an error at the second.
func decodeLocals(blocks []*hcl.Block) (map[string]*Local, hcl.Diagnostics) {
	locals := map[string]*Local{}
	var diags hcl.Diagnostics
	for _, b := range blocks {
		attrs, adiags := b.Body.JustAttributes()
		diags = append(diags, adiags...)
		names := make([]string, 0, len(attrs))
		for n := range attrs {
			names = append(names, n)
		}
		sort.Slice(names, func(i, j int) bool { return attrs[names[i]].Range.Start.Byte < attrs[names[j]].Range.Start.Byte })
		for _, n := range names {
			a := attrs[n]
			if prev, dup := locals[n]; dup {
				diags = append(diags, duplicate("Duplicate local value", fmt.Sprintf("local value %q", n), a.NameRange, prev.DeclRange))
				continue
			}
			locals[n] = &Local{Name: n, Expr: a.Expr, DeclRange: a.NameRange}
		}
	}
	return locals, diags
}

// localRefs are the names of the locals expr refers to, in order of
// appearance, each once.
func localRefs(expr hcl.Expression) []string {
	var out []string
	seen := map[string]bool{}
	for _, tr := range expr.Variables() {
		if tr.RootName() != "local" || len(tr) < 2 {
			continue
		}
		if a, ok := tr[1].(hcl.TraverseAttr); ok && !seen[a.Name] {
			seen[a.Name] = true
			out = append(out, a.Name)
		}
	}
	return out
}

// evalLocals evaluates the locals in the order their references give
// (each after the locals it names), adding them to d.ctx as local.<name>
// one by one. A cycle is reported at each local in it, with the chain; a
// local in a cycle, or whose expression fails, is unknown, so that what
// uses it is not reported again.
func (d *decoder) evalLocals(locals map[string]*Local) {
	names := make([]string, 0, len(locals))
	for n := range locals {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return rangeLess(locals[names[i]].DeclRange, locals[names[j]].DeclRange) })

	vals := map[string]cty.Value{}
	const (
		unvisited = iota
		visiting
		done
	)
	state := map[string]int{}
	var stack []string
	var visit func(n string)
	visit = func(n string) {
		l := locals[n]
		state[n] = visiting
		stack = append(stack, n)
		for _, ref := range localRefs(l.Expr) {
			if locals[ref] == nil {
				continue // reported by checkRefs when l is evaluated
			}
			switch state[ref] {
			case unvisited:
				visit(ref)
			case visiting:
				d.cycle(locals, stack, ref)
			}
		}
		stack = stack[:len(stack)-1]
		state[n] = done
		if l.Value == cty.NilVal {
			l.Value = d.evalLocal(l, vals)
		}
		vals[n] = l.Value
	}
	for _, n := range names {
		if state[n] == unvisited {
			visit(n)
		}
	}
	d.ctx.Variables["local"] = cty.ObjectVal(vals)
}

// evalLocal evaluates one local against the locals evaluated so far.
func (d *decoder) evalLocal(l *Local, vals map[string]cty.Value) cty.Value {
	if !d.checkRefs(l.Expr) {
		return cty.DynamicVal
	}
	d.ctx.Variables["local"] = cty.ObjectVal(vals)
	v, diags := d.evaluate(l.Expr)
	d.diags = append(d.diags, diags...)
	if diags.HasErrors() {
		return cty.DynamicVal
	}
	return v
}

// cycle reports the cycle that stack closes at ref, once at each local in
// it, and makes those locals unknown.
func (d *decoder) cycle(locals map[string]*Local, stack []string, ref string) {
	start := len(stack) - 1
	for stack[start] != ref {
		start--
	}
	loop := stack[start:]
	for i := range loop {
		chain := append(append([]string{}, loop[i:]...), loop[:i]...)
		chain = append(chain, loop[i])
		for j := range chain {
			chain[j] = "local." + chain[j]
		}
		l := locals[loop[i]]
		d.errorf(l.DeclRange, l.Expr.Range(), "Cycle in local values",
			"The local value %q depends on itself: %s. A local may use other locals, but not in a loop; break the chain by writing one of them out.",
			l.Name, strings.Join(chain, " → "))
		l.Value = cty.DynamicVal
	}
}

// rangeLess orders ranges by file and position.
func rangeLess(a, b hcl.Range) bool {
	if a.Filename != b.Filename {
		return a.Filename < b.Filename
	}
	return a.Start.Byte < b.Start.Byte
}
