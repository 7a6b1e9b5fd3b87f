// Package pull brings what people changed on the live objects a project
// owns back into the specs that declare them: for each owned object a plan
// would update, it rewrites the values the declaration writes in place (in
// the HCL, with everything around them kept; in a JSON file read through
// file(), in the file's own layout) so that the next plan leaves the
// object alone. A value the declaration computes (from a variable, a
// local, each, a function call) is left as it is and reported.
//
// Pull makes no request: it works from a plan, whose changes hold each
// object's live and declared values, and the specs' sources.
package pull

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/provision-dev/provision/provision/addrs"
	"github.com/provision-dev/provision/provision/plans"
	"github.com/provision-dev/provision/schema"
	"github.com/zclconf/go-cty/cty"
	ctyjson "github.com/zclconf/go-cty/cty/json"
)

// Object is one object pulled: its address, the attribute paths whose
// live values were written into its declaration, and those left as they
// are (Diags says why).
type Object struct {
	Addr  addrs.Addr
	Paths []string
	Left  []string
}

// Result is what a pull rewrites.
type Result struct {
	// Files are the new texts of the files rewritten, by path (a spec as
	// the parser named it, a JSON file under the specs' directory), and
	// Before their texts as pull read them.
	Files, Before map[string][]byte
	// Order are the paths of Files, sorted.
	Order   []string
	Objects []Object
	// Diags are warnings, each at the expression it is about: the values
	// pull leaves as they are, and why.
	Diags hcl.Diagnostics
}

// Specs are the loaded specs a pull rewrites: their root directory (or
// file) and the configuration.
type Specs struct {
	Dir    string
	Config *schema.Config
	// Selected says which objects to pull (-target, -exclude); nil: all.
	Selected func(addrs.Addr) bool
}

// Pull works out the rewrites that make the plan's updates of owned
// objects no-ops. It reads the spec files that declare them (and the JSON
// files they read through file()) as they are on disk, and writes
// nothing.
func Pull(s Specs, p *plans.Plan) *Result {
	res := &Result{Files: map[string][]byte{}, Before: map[string][]byte{}}
	if !slices.ContainsFunc(p.Changes, func(c *plans.Change) bool {
		return c.Action == plans.Update && (s.Selected == nil || s.Selected(c.Addr))
	}) {
		return res
	}
	root := Root(s.Dir)
	// Every instance of a block that some update names: an expression in
	// the block (or a file it reads) is rewritten only when all of them
	// want the same.
	var all []*instance
	byBlock := map[string][]*instance{}
	texts := &texts{read: map[string][]byte{}, blocks: map[string]map[int]*hclsyntax.Block{}}
	for _, c := range p.Changes {
		if c.DeclaredAt == nil || (c.Action != plans.Update && c.Action != plans.NoOp) {
			continue
		}
		in := newInstance(s, root, texts, c)
		if in == nil {
			continue
		}
		all = append(all, in)
		byBlock[in.blockKey()] = append(byBlock[in.blockKey()], in)
	}
	for _, in := range all {
		if in.change.Action == plans.Update && (s.Selected == nil || s.Selected(in.change.Addr)) {
			in.pull()
			in.keepInside(root)
		}
	}
	edits := agreed(byBlock)
	for _, in := range all {
		if in.dropped {
			in.left, in.paths = append(in.left, in.paths...), nil
		}
		if len(in.paths)+len(in.left) > 0 {
			res.Objects = append(res.Objects, Object{Addr: in.change.Addr, Paths: in.paths, Left: in.left})
		}
		res.Diags = append(res.Diags, in.diags...)
	}
	for file, es := range edits {
		text, err := apply(file, texts.read[file], es)
		if err != nil {
			res.Diags = append(res.Diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Cannot rewrite a file",
				Detail: fmt.Sprintf("%s: %v. Nothing was written.", file, err)})
			continue
		}
		res.Files[file], res.Before[file] = text, texts.read[file]
	}
	res.Order = slices.Sorted(maps.Keys(res.Files))
	return res
}

// Root is the directory of the specs of dir (a directory, or one .hcl
// file): where file() paths start.
func Root(dir string) string {
	if st, err := os.Stat(dir); err == nil && !st.IsDir() {
		return filepath.Dir(dir)
	}
	return dir
}

// instance is one object's declaration as a pull reads it.
type instance struct {
	specs  Specs
	texts  *texts
	root   string // the specs' directory, which file() paths start from
	change *plans.Change
	file   string
	src    []byte
	block  *hclsyntax.Block
	module string // path.module
	// edits are what the instance wants rewritten; reads, the JSON files
	// its block reads through file().
	edits   []edit
	reads   []string
	paths   []string
	left    []string
	diags   hcl.Diagnostics
	dropped bool
	// dotted is the attribute being pulled's PullAttr.Dotted.
	dotted bool
}

// edit replaces the bytes [start, end) of a file with text; a JSON file
// is replaced whole.
type edit struct {
	file       string
	start, end int
	text       string
}

// texts are the files a pull reads, each read once: the spec files
// (with their top-level blocks, by the byte their definition starts at)
// and the JSON files they read through file().
type texts struct {
	read   map[string][]byte
	blocks map[string]map[int]*hclsyntax.Block
}

// text is a file's text, read once.
func (t *texts) text(path string) ([]byte, error) {
	if b, ok := t.read[path]; ok {
		return b, nil
	}
	b, err := os.ReadFile(path)
	if err == nil {
		t.read[path] = b
	}
	return b, err
}

// block is the top-level block of a spec file that starts at the byte
// at; nil when the file cannot be read or parsed.
func (t *texts) block(path string, at int) *hclsyntax.Block {
	blocks, ok := t.blocks[path]
	if !ok {
		blocks = map[int]*hclsyntax.Block{}
		if src, err := t.text(path); err == nil {
			parsed, _ := hclsyntax.ParseConfig(src, path, hcl.InitialPos)
			if body, ok := parsed.Body.(*hclsyntax.Body); ok {
				for _, b := range body.Blocks {
					blocks[b.DefRange().Start.Byte] = b
				}
			}
		}
		t.blocks[path] = blocks
	}
	return blocks[at]
}

// newInstance reads the declaration of c from its file; nil when it
// cannot be read.
func newInstance(s Specs, root string, t *texts, c *plans.Change) *instance {
	block := t.block(c.DeclaredAt.Filename, c.DeclaredAt.Start.Byte)
	if block == nil {
		return nil
	}
	in := &instance{specs: s, texts: t, root: root, change: c, file: c.DeclaredAt.Filename, src: t.read[c.DeclaredAt.Filename], block: block}
	if rel, err := filepath.Rel(root, filepath.Dir(in.file)); err == nil {
		in.module = filepath.ToSlash(rel)
	}
	in.reads = in.fileReads()
	return in
}

func (in *instance) blockKey() string {
	return in.file + ":" + strconv.Itoa(in.change.DeclaredAt.Start.Byte)
}

// attributes are the attributes of an updated object that pull may
// write, as its kind lists them (schema.Config.Pulled), from the
// change's before and after.
func attributes(cfg *schema.Config, c *plans.Change) []schema.PullAttr {
	before, _ := decode(c.Before.JSON()).(map[string]any)
	after, _ := decode(c.After.JSON()).(map[string]any)
	if before == nil || after == nil {
		return nil
	}
	return cfg.Pulled(c.Addr, before, after)
}

// pull works out the edits of an updated object.
func (in *instance) pull() {
	for _, a := range attributes(in.specs.Config, in.change) {
		if a.Frontend {
			in.leave(in.block.DefRange(), a.Name, nil, nil, "Its tags differ from those its frontend block writes; pull does not rewrite a frontend block: change the block, or declare the tags as they are in tags.")
			continue
		}
		if equal(a.Live, a.Decl) {
			continue
		}
		at, ok := in.block.Body.Attributes[a.Name]
		if i := slices.IndexFunc(in.block.Body.Blocks, func(b *hclsyntax.Block) bool { return b.Type == a.Name }); !ok && i >= 0 {
			in.leave(in.block.Body.Blocks[i].DefRange(), a.Name, a.Live, a.Decl, "It is written as a block, which pull does not rewrite: change the block, or write it as an argument (name = { ... }).")
			continue
		}
		if !ok {
			in.insert(a.Name, a.Live)
			continue
		}
		in.dotted = a.Dotted
		in.value(at.Expr, []string{a.Name}, a.Live, a.Decl)
	}
}

// ignored reports whether the change keeps the live value of path (its
// lifecycle's ignore_changes, written meta["owner"] or source.title):
// such a value is never pulled.
func (in *instance) ignored(path string) bool {
	for _, p := range in.change.Ignored {
		p = indexSteps.Replace(p)
		if p == "all" || p == path || strings.HasPrefix(path, p+".") {
			return true
		}
	}
	return false
}

// indexSteps writes the index steps of an attribute path as dotted ones.
var indexSteps = strings.NewReplacer(`["`, ".", `"]`, "")

// value rewrites expr, at path, from decl to live.
func (in *instance) value(expr hclsyntax.Expression, path []string, live, decl any) {
	if equal(live, decl) || in.ignored(dotted(path)) {
		return
	}
	if in.secret(live) {
		in.leave(expr.Range(), dotted(path), nil, nil, "The live value holds a sensitive value, which pull never writes into a file.")
		return
	}
	switch e := expr.(type) {
	case *hclsyntax.ObjectConsExpr:
		lm, lok := live.(map[string]any)
		dm, dok := decl.(map[string]any)
		if lok && dok {
			in.object(e, path, lm, dm)
			return
		}
	case *hclsyntax.TupleConsExpr:
		ll, lok := live.([]any)
		dl, dok := decl.([]any)
		if lok && dok && len(ll) == len(dl) && len(e.Exprs) == len(dl) {
			for i := range ll {
				in.value(e.Exprs[i], under(path, strconv.Itoa(i)), ll[i], dl[i])
			}
			return
		}
	case *hclsyntax.FunctionCallExpr:
		if in.fileCall(e, path, live) {
			return
		}
	}
	if literal(expr) {
		in.replace(expr.Range(), literalText(expr, live), path)
		return
	}
	in.leave(expr.Range(), dotted(path), live, decl, fmt.Sprintf("The declaration's value is %s, which pull does not rewrite (it writes values written in place, and JSON files read with file()): change what it reads.", describe(expr, in.src)))
}

// object rewrites an object constructor item by item: changed values in
// place, items the live object lacks removed, new keys added at its end.
// At an attribute whose keys are paths (PullAttr.Dotted: a document's
// source), a dotted key ("a.b") is a path.
func (in *instance) object(e *hclsyntax.ObjectConsExpr, path []string, live, decl map[string]any) {
	covered := map[string]bool{}
	for _, item := range e.Items {
		kv, diags := item.KeyExpr.Value(nil)
		if diags.HasErrors() || kv.Type() != cty.String || kv.IsNull() {
			in.leave(e.Range(), dotted(path), live, decl, "The object's keys are computed; pull does not rewrite it.")
			return
		}
		parts := []string{kv.AsString()}
		if in.dotted && len(path) == 1 {
			parts = strings.Split(parts[0], ".")
		}
		covered[parts[0]] = true
		lv, lok := lookup(live, parts)
		dv, _ := lookup(decl, parts)
		at := under(path, parts...)
		if !lok {
			if !in.ignored(dotted(at)) {
				in.remove(e, item, at)
			}
			continue
		}
		in.value(item.ValueExpr, at, lv, dv)
	}
	var added []string
	for _, k := range slices.Sorted(maps.Keys(live)) {
		if !covered[k] && !in.ignored(dotted(under(path, k))) {
			added = append(added, k)
		}
	}
	if len(added) == 0 {
		return
	}
	var b strings.Builder
	multiline := bytes.Contains(in.src[e.OpenRange.End.Byte:e.SrcRange.End.Byte], []byte("\n"))
	for i, k := range added {
		if in.secret(live[k]) {
			in.leave(e.Range(), dotted(under(path, k)), nil, nil, "The live value holds a sensitive value, which pull never writes into a file.")
			continue
		}
		switch {
		case multiline:
			b.WriteString(keyText(k) + " = " + valueText(live[k]) + "\n")
		case len(e.Items) > 0 || i > 0:
			b.WriteString(", " + keyText(k) + " = " + valueText(live[k]))
		default:
			b.WriteString(keyText(k) + " = " + valueText(live[k]))
		}
		in.paths = append(in.paths, dotted(under(path, k)))
	}
	end := e.SrcRange.End.Byte - 1 // the closing brace
	if multiline {
		end = lineStart(in.src, end)
	} else if len(e.Items) > 0 {
		end = e.Items[len(e.Items)-1].ValueExpr.Range().End.Byte
	}
	in.edits = append(in.edits, edit{in.file, end, end, b.String()})
}

// remove takes an item out of an object constructor, with its line (and
// the comment on it) when it has one to itself, or with its comma.
func (in *instance) remove(e *hclsyntax.ObjectConsExpr, item hclsyntax.ObjectConsItem, path []string) {
	start, end := item.KeyExpr.Range().Start.Byte, item.ValueExpr.Range().End.Byte
	if ls := lineStart(in.src, start); len(bytes.TrimSpace(in.src[ls:start])) == 0 {
		le := lineEnd(in.src, end)
		rest := bytes.TrimSpace(bytes.TrimPrefix(bytes.TrimSpace(in.src[end:le]), []byte(",")))
		if len(rest) == 0 || rest[0] == '#' || bytes.HasPrefix(rest, []byte("//")) { // the item's own comment goes with it
			start, end = ls, min(le+1, len(in.src))
		}
	}
	if start == item.KeyExpr.Range().Start.Byte {
		rest := in.src[end:e.SrcRange.End.Byte]
		if t := bytes.TrimLeft(rest, " \t"); len(t) > 0 && t[0] == ',' {
			end += len(rest) - len(t) + 1
		} else if before := bytes.TrimRight(in.src[e.OpenRange.End.Byte:start], " \t"); bytes.HasSuffix(before, []byte(",")) {
			start = e.OpenRange.End.Byte + len(before) - 1
		}
	}
	in.edits = append(in.edits, edit{in.file, start, end, ""})
	in.paths = append(in.paths, dotted(path))
}

// insert adds an attribute the block does not write, after its last
// attribute (or at the top of its body).
func (in *instance) insert(name string, live any) {
	at := in.block.OpenBraceRange.End.Byte
	for _, a := range in.block.Body.Attributes {
		at = max(at, a.SrcRange.End.Byte)
	}
	at = lineEnd(in.src, at)
	in.edits = append(in.edits, edit{in.file, at, at, "\n" + name + " = " + valueText(live)})
	in.paths = append(in.paths, name)
}

// replace rewrites a literal.
func (in *instance) replace(r hcl.Range, text string, path []string) {
	in.edits = append(in.edits, edit{in.file, r.Start.Byte, r.End.Byte, text})
	in.paths = append(in.paths, dotted(path))
}

// fileCall rewrites the file that jsondecode(file(P)) or file(P) reads,
// when P names one from path.module, path.root, each.key and literals.
func (in *instance) fileCall(e *hclsyntax.FunctionCallExpr, path []string, live any) bool {
	name, isJSON := readsFile(e)
	if name == nil {
		return false
	}
	file, ok := in.evalPath(name)
	if !ok {
		return false
	}
	src, err := in.texts.text(file)
	if err != nil {
		return false
	}
	var text []byte
	if isJSON {
		if text, err = rewriteJSON(src, live); err != nil {
			return false
		}
	} else if s, ok := live.(string); ok {
		text = []byte(s)
	} else {
		return false
	}
	in.edits = append(in.edits, edit{file, 0, len(src), string(text)})
	in.paths = append(in.paths, dotted(path)+" (in "+file+")")
	return true
}

// readsFile is the path argument of jsondecode(file(P)) (isJSON) or of
// file(P); nil for any other call.
func readsFile(e *hclsyntax.FunctionCallExpr) (path hclsyntax.Expression, isJSON bool) {
	if e.Name == "jsondecode" && len(e.Args) == 1 {
		if inner, ok := e.Args[0].(*hclsyntax.FunctionCallExpr); ok && inner.Name == "file" && len(inner.Args) == 1 {
			return inner.Args[0], true
		}
	}
	if e.Name == "file" && len(e.Args) == 1 {
		return e.Args[0], false
	}
	return nil, false
}

// evalPath is the file a path expression names, from the specs' root.
func (in *instance) evalPath(expr hclsyntax.Expression) (string, bool) {
	vars := map[string]cty.Value{"path": cty.ObjectVal(map[string]cty.Value{
		"module": cty.StringVal(in.module), "root": cty.StringVal(".")})}
	if k := in.change.EachKey; k != nil {
		vars["each"] = cty.ObjectVal(map[string]cty.Value{"key": cty.StringVal(*k)})
	}
	v, diags := expr.Value(&hcl.EvalContext{Variables: vars})
	if diags.HasErrors() || v.Type() != cty.String || v.IsNull() {
		return "", false
	}
	return filepath.Join(in.root, filepath.FromSlash(v.AsString())), true
}

// fileReads are the files the block's attributes read through file(), as
// this instance evaluates their paths.
func (in *instance) fileReads() []string {
	var files []string
	for _, a := range in.block.Body.Attributes {
		hclsyntax.VisitAll(a.Expr, func(n hclsyntax.Node) hcl.Diagnostics {
			if call, ok := n.(*hclsyntax.FunctionCallExpr); ok {
				if p, _ := readsFile(call); p != nil {
					if f, ok := in.evalPath(p); ok && !slices.Contains(files, f) {
						files = append(files, f)
					}
				}
			}
			return nil
		})
	}
	return files
}

// keepInside gives up the instance's edits when one of them is of a file
// outside the specs' folder, root (a module kept at the repository's top,
// or the files it reads): other projects may read it, and a pull of this
// one must not change theirs.
func (in *instance) keepInside(root string) {
	i := slices.IndexFunc(in.edits, func(e edit) bool { return outside(root, e.file) })
	if i < 0 {
		return
	}
	in.diags = append(in.diags, &hcl.Diagnostic{Severity: hcl.DiagWarning,
		Summary: fmt.Sprintf("Not pulled: %s", in.change.Addr),
		Detail: fmt.Sprintf("Its value is written in %s, outside the specs' folder %s: other projects may read that file too, and a pull writes only inside the project's folder. Edit the file by hand (each project that reads it then plans the change), or declare the value in the project.",
			in.edits[i].file, root),
		Subject: in.block.DefRange().Ptr()})
	in.edits = nil
	in.left, in.paths = append(in.left, in.paths...), nil
}

// outside reports whether file is outside the folder root.
func outside(root, file string) bool {
	r, err1 := filepath.Abs(root)
	f, err2 := filepath.Abs(file)
	if err1 != nil || err2 != nil {
		return true
	}
	rel, err := filepath.Rel(r, f)
	return err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// leave reports a value pull does not rewrite, with the live value
// (none given: not shown, nor when it or the declared one is sensitive).
func (in *instance) leave(r hcl.Range, path string, live, decl any, why string) {
	detail := why
	if live != nil && !in.secret(live) && !in.secret(decl) {
		detail = fmt.Sprintf("Live, %s. %s", strings.Join(differences(path, live, decl, 3), "; "), why)
	}
	in.left = append(in.left, path)
	in.diags = append(in.diags, &hcl.Diagnostic{Severity: hcl.DiagWarning,
		Summary: fmt.Sprintf("Not pulled: %s %s", in.change.Addr, path), Detail: detail, Subject: r.Ptr()})
}

// differences are the first n places (in key order) where live and decl
// differ, each with both values: `source.title is "B" (declared "A")`;
// the value itself when they are not both objects.
func differences(path string, live, decl any, n int) []string {
	var out []string
	var walk func(path string, live, decl any)
	walk = func(path string, live, decl any) {
		lm, lok := live.(map[string]any)
		dm, dok := decl.(map[string]any)
		if !lok || !dok {
			out = append(out, fmt.Sprintf("%s is %s (declared %s)", path, short(live), short(decl)))
			return
		}
		keys := slices.Sorted(maps.Keys(lm))
		for k := range dm {
			if _, ok := lm[k]; !ok {
				keys = append(keys, k)
			}
		}
		for _, k := range keys {
			if len(out) < n && !equal(lm[k], dm[k]) {
				walk(path+"."+k, lm[k], dm[k])
			}
		}
	}
	walk(path, live, decl)
	return out
}

// short is a value as JSON, cut at 80 characters; "absent" for none.
func short(v any) string {
	if v == nil {
		return "absent"
	}
	s := string(marshal(v))
	if len(s) > 80 {
		s = s[:80] + "..."
	}
	return s
}

// secret reports whether v holds a value of a sensitive variable.
func (in *instance) secret(v any) bool {
	if len(in.specs.Config.Secrets) == 0 {
		return false
	}
	text := string(marshal(v))
	return slices.ContainsFunc(in.specs.Config.Secrets, func(s string) bool { return s != "" && strings.Contains(text, s) })
}

// agreed are the edits of every instance, by file, less those of blocks
// whose instances want different things: an expression of a block (or a
// file it reads) that several objects evaluate is rewritten only when
// each of them wants the same text.
func agreed(byBlock map[string][]*instance) map[string][]edit {
	readers := map[string][]*instance{}
	for _, ins := range byBlock {
		for _, in := range ins {
			for _, f := range in.reads {
				readers[f] = append(readers[f], in)
			}
		}
	}
	for _, key := range slices.Sorted(maps.Keys(byBlock)) {
		ins := byBlock[key]
		for _, in := range ins {
			for _, e := range in.edits {
				sharers := ins
				if e.file != in.file {
					sharers = readers[e.file]
				}
				for _, other := range sharers {
					if other != in && !slices.Contains(other.edits, e) {
						drop(append(slices.Clone(ins), sharers...), e, in, other)
					}
				}
			}
		}
	}
	out := map[string][]edit{}
	for _, key := range slices.Sorted(maps.Keys(byBlock)) {
		for _, in := range byBlock[key] {
			if in.dropped {
				continue
			}
			for _, e := range in.edits {
				if !slices.Contains(out[e.file], e) {
					out[e.file] = append(out[e.file], e)
				}
			}
		}
	}
	return out
}

// drop gives up the edits of the instances that share what e rewrites,
// saying why once.
func drop(sharers []*instance, e edit, in, other *instance) {
	if in.dropped {
		return
	}
	var names []string
	for _, s := range sharers {
		if !slices.Contains(names, s.change.Addr.String()) {
			names = append(names, s.change.Addr.String())
		}
		s.dropped = true
	}
	what := fmt.Sprintf("Its block declares %d objects", len(names))
	if e.file != in.file {
		what = fmt.Sprintf("The file %s is read by %d objects", e.file, len(names))
	}
	in.diags = append(in.diags, &hcl.Diagnostic{Severity: hcl.DiagWarning,
		Summary: fmt.Sprintf("Not pulled: %s", in.change.Addr),
		Detail: fmt.Sprintf("%s (%s), and %s is not live as %s is: a rewrite would change the others. Pull left them all; give the object a declaration of its own, or change them alike.",
			what, strings.Join(names, ", "), other.change.Addr, in.change.Addr),
		Subject: in.block.DefRange().Ptr()})
}

// apply applies the edits of one file, whose text is src, and, to a
// spec, its canonical layout.
func apply(file string, src []byte, es []edit) ([]byte, error) {
	slices.SortFunc(es, func(a, b edit) int { return b.start - a.start })
	out := src
	for i, e := range es {
		if i > 0 && e.end > es[i-1].start {
			return nil, fmt.Errorf("two rewrites overlap at byte %d", e.start)
		}
		out = slices.Concat(out[:e.start], []byte(e.text), out[e.end:])
	}
	if filepath.Ext(file) != ".hcl" {
		return out, nil
	}
	formatted, diags := schema.Format(out, file)
	if diags.HasErrors() {
		return nil, diags
	}
	return formatted, nil
}

// literal reports whether expr is written in place: literals, strings
// without interpolation, and objects and lists of them.
func literal(expr hclsyntax.Expression) bool {
	switch e := expr.(type) {
	case *hclsyntax.LiteralValueExpr:
		return true
	case *hclsyntax.TemplateExpr:
		return e.IsStringLiteral()
	case *hclsyntax.UnaryOpExpr:
		return literal(e.Val)
	case *hclsyntax.TupleConsExpr:
		return !slices.ContainsFunc(e.Exprs, func(x hclsyntax.Expression) bool { return !literal(x) })
	case *hclsyntax.ObjectConsExpr:
		return !slices.ContainsFunc(e.Items, func(i hclsyntax.ObjectConsItem) bool { return !literal(i.ValueExpr) })
	}
	return false
}

// literalText is the HCL of live in place of the literal expr: a string
// that holds JSON text stays a string, merged into the JSON it held.
func literalText(expr hclsyntax.Expression, live any) string {
	if t, ok := expr.(*hclsyntax.TemplateExpr); ok {
		switch live.(type) {
		case map[string]any, []any:
			if v, diags := t.Value(nil); !diags.HasErrors() {
				if n, err := parse([]byte(v.AsString())); err == nil {
					return valueText(string(merge(n, live).encode("")))
				}
			}
		}
	}
	return valueText(live)
}

// valueText is v as HCL.
func valueText(v any) string {
	b := marshal(v)
	ty, err := ctyjson.ImpliedType(b)
	if err != nil {
		return string(b)
	}
	cv, err := ctyjson.Unmarshal(b, ty)
	if err != nil {
		return string(b)
	}
	return string(hclwrite.TokensForValue(cv).Bytes())
}

// keyText is an object key as HCL writes it: bare when it is an
// identifier.
func keyText(k string) string {
	if hclsyntax.ValidIdentifier(k) {
		return k
	}
	return strconv.Quote(k)
}

// describe names an expression as written, with its place.
func describe(expr hclsyntax.Expression, src []byte) string {
	r := expr.Range()
	text := string(r.SliceBytes(src))
	if len(text) > 80 || strings.Contains(text, "\n") {
		text = strings.SplitN(text, "\n", 2)[0]
		if len(text) > 80 {
			text = text[:80]
		}
		text += " ..."
	}
	return fmt.Sprintf("%s (%s:%d)", text, filepath.Base(r.Filename), r.Start.Line)
}

// lookup is the value at parts under v.
func lookup(v any, parts []string) (any, bool) {
	for _, p := range parts {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = m[p]; !ok {
			return nil, false
		}
	}
	return v, true
}

// under is the path of steps under path, in a slice of its own.
func under(path []string, steps ...string) []string { return slices.Concat(path, steps) }

// dotted is a path as a person writes it: source.visState.params.
func dotted(path []string) string { return strings.Join(path, ".") }

func lineStart(src []byte, at int) int { return bytes.LastIndexByte(src[:at], '\n') + 1 }

func lineEnd(src []byte, at int) int {
	if i := bytes.IndexByte(src[at:], '\n'); i >= 0 {
		return at + i
	}
	return len(src)
}
