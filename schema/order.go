package schema

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/provision-dev/provision/provision/addrs"
	"github.com/zclconf/go-cty/cty"
)

// A module's outputs may be used anywhere in the module that calls it, as
// in Terraform: in its objects, its locals, another call's inputs and
// for_each, its outputs. The locals that do not depend on a module call
// are evaluated first (evalLocals), as the blocks that say where the live
// systems are may use them; then the rest is evaluated in the order its
// references give: the locals that do, each module call, and the
// module's objects (all of them but the indices, which are decoded first,
// one node), each after what it names. A
// module call that names the objects (a document's id passed as an input)
// comes after them, as before outputs could be named; a loop (a call's
// input that depends on its own outputs, directly or through another call
// or a local) is one error naming the chain.

// node is one thing evaluated in reference order: a local (local), a
// module call (call) or the module's objects (neither).
type node struct {
	key   string // local.<name>, module.<name> or "objects"
	local *Local
	call  *hcl.Block
	rng   hcl.Range
}

// kindObjects decodes the blocks of the kinds that are early (or not) in
// contents (the root's, or a module instance's, whose addresses start
// with prefix) into cfg, kind by kind in a plan's order. The early kinds
// (indices) are decoded before the module calls and the other kinds,
// whose blocks name them.
func (d *decoder) kindObjects(cfg *Config, contents []*hcl.BodyContent, prefix string, early bool) {
	module := addrs.Module(strings.TrimSuffix(prefix, "."))
	c := lateObjects
	if early {
		c = earlyObjects
	}
	var pieces []*piece
	for _, pc := range d.later {
		if pc.class == c {
			pieces = append(pieces, pc)
		}
	}
	if len(pieces) == 0 {
		d.objectsOf(cfg, contents, module, early)
		return
	}
	// The blocks parsed with their files and the pieces parsed now are
	// decoded in file order, as a load that parses every piece at once
	// decodes them: each kind's objects in the order of their blocks,
	// and the work limit crossed at the same block.
	types := map[string]bool{}
	for _, k := range d.lang.kinds {
		types[k.Name()] = k.Early == early
	}
	var blocks []*hcl.Block
	for _, ct := range contents {
		for _, b := range ct.Blocks {
			if types[b.Type] {
				blocks = append(blocks, b)
			}
		}
	}
	// A run of blocks or a batch of pieces is decoded when the other
	// comes next in the files, or when the batch is full.
	var run []*hcl.Block
	var batch []*piece
	flush := func() {
		switch {
		case d.unparsed:
		case len(batch) > 0:
			d.decodeLater(cfg, batch, module, early)
		case len(run) > 0:
			d.objectsOf(cfg, []*hcl.BodyContent{{Blocks: run}}, module, early)
		}
		run, batch = nil, nil
	}
	for _, pc := range pieces {
		for len(blocks) > 0 && d.before(blocks[0].DefRange, pc) {
			if len(batch) > 0 {
				flush()
			}
			run, blocks = append(run, blocks[0]), blocks[1:]
		}
		if len(run) > 0 || len(batch) == laterBatch {
			flush()
		}
		batch = append(batch, pc)
	}
	flush()
	run = blocks
	flush()
}

// before says whether rng, in a file of d.order, begins before pc.
func (d *decoder) before(rng hcl.Range, pc *piece) bool {
	if f, g := d.order[rng.Filename], d.order[pc.path]; f != g {
		return f < g
	}
	return rng.Start.Byte < pc.start.Byte
}

// laterBatch is how many pieces are parsed, decoded and let go of at a
// time (512 KiB of source at pieceBytes): enough to keep every core busy,
// few enough that their syntax trees are a small part of the memory.
const laterBatch = 64

// decodeLater parses pieces, bounds their blocks and decodes their
// objects of the early kinds or of the others; when a piece does not
// parse (parseLater), it decodes nothing and says so in d.unparsed.
func (d *decoder) decodeLater(cfg *Config, pieces []*piece, module addrs.Module, early bool) {
	bodies, diags, ok := d.lang.parseLater(pieces, d.bg)
	if !ok {
		d.unparsed = true
		return
	}
	d.diags = append(d.diags, diags...)
	top := d.lang.fileSchema()
	contents := make([]*hcl.BodyContent, len(bodies))
	for i, body := range bodies {
		var cdiags hcl.Diagnostics
		contents[i], cdiags = d.lang.fileContent(body, top)
		d.diags = append(d.diags, cdiags...)
	}
	d.objectsOf(cfg, contents, module, early)
}

// objectsOf decodes the objects of contents of the early kinds, or of
// the others, kind by kind, into cfg.
func (d *decoder) objectsOf(cfg *Config, contents []*hcl.BodyContent, module addrs.Module, early bool) {
	for _, k := range d.lang.kinds {
		if k.Early != early {
			continue
		}
		var blocks []*hcl.Block
		for _, c := range contents {
			blocks = append(blocks, c.Blocks.OfType(k.Name())...)
		}
		ctx := d.ctx
		k.decode(d, cfg, d.expand(blocks), module)
		d.ctx, d.each = ctx, nil
	}
}

// objectBlocks are the block types of objects; the early kinds (indices)
// are decoded before everything else (kindObjects) and are not among
// them.
func (l *Language) objectBlocks() []string {
	var out []string
	for _, k := range l.kinds {
		if !k.Early {
			out = append(out, k.Name())
		}
	}
	return out
}

// moduleCalls are the module blocks of contents, the first of each name;
// a second of a name is an error.
func (d *decoder) moduleCalls(contents []*hcl.BodyContent) []*hcl.Block {
	var out []*hcl.Block
	seen := map[string]*hcl.Block{}
	for _, c := range contents {
		for _, b := range c.Blocks.OfType("module") {
			name := b.Labels[0]
			if prev, dup := seen[name]; dup {
				d.diags = append(d.diags, duplicate("Duplicate module call", fmt.Sprintf("module %q", name), b.LabelRanges[0], prev.LabelRanges[0]))
				continue
			}
			seen[name] = b
			out = append(out, b)
		}
	}
	return out
}

// lateLocals splits locals into those that depend on a module call named
// in calls, directly or through other locals (late), and the others.
func lateLocals(locals map[string]*Local, calls []*hcl.Block) (early, late map[string]*Local) {
	called := func(name string) bool {
		return slices.ContainsFunc(calls, func(b *hcl.Block) bool { return b.Labels[0] == name })
	}
	isLate := map[string]bool{}
	for changed := true; changed; {
		changed = false
		for n, l := range locals {
			if isLate[n] {
				continue
			}
			for _, tr := range l.Expr.Variables() {
				if name := refName(tr); tr.RootName() == "module" && called(name) || tr.RootName() == "local" && isLate[name] {
					isLate[n], changed = true, true
					break
				}
			}
		}
	}
	early, late = map[string]*Local{}, map[string]*Local{}
	for n, l := range locals {
		if isLate[n] {
			late[n] = l
		} else {
			early[n] = l
		}
	}
	return early, late
}

// refName is the name a traversal gives after its root (local.<name>).
func refName(tr hcl.Traversal) string {
	if len(tr) > 1 {
		if a, ok := tr[1].(hcl.TraverseAttr); ok {
			return a.Name
		}
	}
	return ""
}

// bodyTraversals are the references of every expression in body and its
// nested blocks.
func bodyTraversals(body hcl.Body) []hcl.Traversal {
	sb, ok := body.(*hclsyntax.Body)
	if !ok {
		return nil
	}
	var out []hcl.Traversal
	for _, a := range sb.Attributes {
		out = append(out, a.Expr.Variables()...)
	}
	for _, b := range sb.Blocks {
		out = append(out, bodyTraversals(b.Body)...)
	}
	return out
}

// evalInOrder evaluates the late locals (after the early ones, evaluated
// already), the module calls of contents and
// the objects of contents (decoded into cfg, their addresses under
// at.prefix) in the order their references give, and returns module.<name>
// for the outputs.
func (d *decoder) evalInOrder(cfg *Config, contents []*hcl.BodyContent, calls []*hcl.Block, early, late map[string]*Local, at call) cty.Value {
	var nodes []*node
	byKey := map[string]*node{}
	add := func(n *node) {
		nodes = append(nodes, n)
		byKey[n.key] = n
	}
	var lateNames []string
	for n := range late {
		lateNames = append(lateNames, n)
	}
	sort.Slice(lateNames, func(i, j int) bool { return rangeLess(late[lateNames[i]].DeclRange, late[lateNames[j]].DeclRange) })
	for _, n := range lateNames {
		add(&node{key: "local." + n, local: late[n], rng: late[n].DeclRange})
	}
	add(&node{key: "objects"})
	for _, b := range calls {
		add(&node{key: "module." + b.Labels[0], call: b, rng: b.DefRange})
	}

	kinds := d.lang.objectBlocks()
	deps := func(n *node) []string {
		if len(nodes) == 1 {
			return nil // the objects alone: nothing they could wait for
		}
		var trs []hcl.Traversal
		switch {
		case n.local != nil:
			trs = n.local.Expr.Variables()
		case n.call != nil:
			trs = bodyTraversals(n.call.Body)
		default:
			for _, c := range contents {
				for _, b := range c.Blocks {
					if slices.Contains(kinds, b.Type) {
						trs = append(trs, bodyTraversals(b.Body)...)
					}
				}
			}
		}
		var out []string
		for _, tr := range trs {
			key := tr.RootName() + "." + refName(tr)
			if n.call != nil && slices.Contains(kinds, tr.RootName()) {
				key = "objects"
			}
			if _, ok := byKey[key]; ok && !slices.Contains(out, key) {
				out = append(out, key)
			}
		}
		return out
	}

	locals := map[string]cty.Value{}
	for n, l := range early {
		locals[n] = l.Value // evaluated by evalLocals
	}
	modules := map[string]cty.Value{}
	d.repeated = map[string]bool{}
	for _, b := range calls {
		modules[b.Labels[0]] = cty.DynamicVal // until called
		if sb, ok := b.Body.(*hclsyntax.Body); ok {
			_, each := sb.Attributes["for_each"]
			_, count := sb.Attributes["count"]
			d.repeated[b.Labels[0]] = each || count
		}
	}
	d.ctx.Variables["module"] = cty.ObjectVal(modules)
	d.kindObjects(cfg, contents, at.prefix, true)

	const (
		unvisited = iota
		visiting
		done
	)
	state := map[string]int{}
	var stack []*node
	var visit func(n *node)
	visit = func(n *node) {
		state[n.key] = visiting
		stack = append(stack, n)
		looped := false
		for _, k := range deps(n) {
			switch state[k] {
			case unvisited:
				visit(byKey[k])
			case visiting:
				d.loop(stack, k)
				looped = true
			}
		}
		stack = stack[:len(stack)-1]
		state[n.key] = done
		switch {
		case n.local != nil:
			if !looped && n.local.Value == cty.NilVal {
				n.local.Value = d.evalLocal(n.local, locals)
			} else if n.local.Value == cty.NilVal {
				n.local.Value = cty.DynamicVal
			}
			locals[n.local.Name] = n.local.Value
			d.ctx.Variables["local"] = cty.ObjectVal(locals)
		case n.call != nil:
			if !looped {
				modules[n.call.Labels[0]] = d.call(cfg, n.call, at)
				d.ctx.Variables["module"] = cty.ObjectVal(modules)
			}
		default:
			d.kindObjects(cfg, contents, at.prefix, false)
		}
	}
	for _, n := range nodes {
		if state[n.key] == unvisited {
			visit(n)
		}
	}
	d.ctx.Variables["local"] = cty.ObjectVal(locals)
	return cty.ObjectVal(modules)
}

// loop reports the loop that stack closes at key: a module call whose
// inputs depend on its own outputs.
func (d *decoder) loop(stack []*node, key string) {
	start := len(stack) - 1
	for stack[start].key != key {
		start--
	}
	chain := make([]string, 0, len(stack)-start+1)
	for _, n := range stack[start:] {
		chain = append(chain, n.key)
	}
	chain = append(chain, key)
	first := stack[start]
	for _, n := range stack[start:] {
		if n.call != nil {
			first = n
			break
		}
	}
	d.diags = append(d.diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Cycle through modules",
		Detail: fmt.Sprintf("These depend on one another in a loop: %s. A module call's inputs, for_each and count are evaluated before its outputs exist; break the loop by passing one of them another way.",
			strings.Join(chain, " → ")),
		Subject: first.rng.Ptr()})
}

// missingOutput checks the output a reference to a module call names
// (module.<name>.<output>, or module.<name>[<key>].<output> for a call
// with for_each or count), once the call's value is known: ok is false
// when the instance has no such output, which is then named with the
// outputs it has.
func missingOutput(tr hcl.Traversal, v cty.Value, repeated bool) (output, outputs string, ok bool) {
	if !v.IsWhollyKnown() || len(tr) < 3 {
		return "", "", true
	}
	step := tr[2]
	instance := v
	if repeated {
		if _, index := step.(hcl.TraverseIndex); !index || len(tr) < 4 || v.LengthInt() == 0 {
			return "", "", true // the instances as a whole, or an index the evaluation checks
		}
		it := v.ElementIterator()
		it.Next()
		_, instance = it.Element()
		step = tr[3]
	}
	attr, isAttr := step.(hcl.TraverseAttr)
	if !isAttr || !instance.Type().IsObjectType() || instance.Type().HasAttribute(attr.Name) {
		return "", "", true
	}
	var names []string
	for n := range instance.Type().AttributeTypes() {
		names = append(names, n)
	}
	slices.Sort(names)
	if len(names) == 0 {
		return attr.Name, "none", false
	}
	return attr.Name, strings.Join(names, ", "), false
}
