package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/provision-dev/provision/provision/plans"
)

// TextOptions tune the human view.
type TextOptions struct {
	Color bool
}

// Text writes the human view of a plan. It reads only the plan's
// JSON model (Before, After and Requests as JSON), so it cannot say
// anything the JSON form does not. Pass a Redacted plan.
func Text(w io.Writer, p *plans.Plan, opts TextOptions) error {
	r := &renderer{opts: opts}
	if s := p.Snapshot; s != nil && s.Greenfield {
		r.printf("Planned against nothing live (a greenfield), with no network. It is never applied.\n\n")
	} else if s != nil {
		r.printf("Planned from the snapshot %s, taken %s, with no network (%s). It is never applied.\n\n", s.File, s.TakenAt, strings.Join(s.Servers, "; "))
	}
	if !p.Summary.HasChanges() {
		r.printf("No changes. The live state matches the specs (%d %s up to date).\n", p.Summary.NoOp, plans.Plural(p.Summary.NoOp, "object"))
		r.notes(p)
		r.backendNotes(p)
		r.gates(p)
		r.policies(p)
		r.printf("%s", Outputs(p))
		_, err := w.Write(r.buf.Bytes())
		return err
	}
	r.printf("provision will perform these actions for project %q. Symbols: ", p.Project)
	if p.Summary.Import > 0 {
		r.printf("%s import, ", r.paint(plans.Import, plans.Import.Symbol()))
	}
	r.printf("%s create, %s update in place, %s delete", r.paint(plans.Create, "+"), r.paint(plans.Update, "~"), r.paint(plans.Delete, "-"))
	if p.Summary.Forget > 0 {
		r.printf(", %s forget (left live, without provision's marks)", r.paint(plans.Forget, plans.Forget.Symbol()))
	}
	r.printf(".\n")
	for _, c := range p.Changes {
		if c.Action != plans.NoOp {
			r.change(c)
		}
	}
	r.notes(p)
	r.backendNotes(p)
	r.gates(p)
	r.printf("\nPlan: %s\n", p.Summary.Line())
	r.policies(p)
	r.printf("%s", Outputs(p))
	_, err := w.Write(r.buf.Bytes())
	return err
}

// Outputs is the text of the plan's outputs, as Terraform prints them
// after a plan and an apply; "" without any. A sensitive one's value is
// "(sensitive)" in the plan already.
func Outputs(p *plans.Plan) string {
	if len(p.Outputs) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\nOutputs:\n\n")
	for _, name := range sortedKeys(p.Outputs) {
		o := p.Outputs[name]
		v := string(o.Value)
		if o.Sensitive {
			v = "(sensitive)"
		}
		fmt.Fprintf(&b, "  %s = %s\n", name, v)
	}
	return b.String()
}

type renderer struct {
	buf  bytes.Buffer
	opts TextOptions
}

func (r *renderer) printf(format string, args ...any) { fmt.Fprintf(&r.buf, format, args...) }

var ansi = map[plans.Action]string{plans.Create: "\x1b[32m", plans.Update: "\x1b[33m", plans.Delete: "\x1b[31m", plans.Import: "\x1b[36m", plans.Forget: "\x1b[35m"}

func (r *renderer) paint(a plans.Action, s string) string {
	if !r.opts.Color || ansi[a] == "" {
		return s
	}
	return ansi[a] + s + "\x1b[0m"
}

var verbs = map[plans.Action]string{plans.Create: "created", plans.Update: "updated in place", plans.Delete: "deleted", plans.Import: "imported", plans.Forget: "forgotten"}

func (r *renderer) change(c *plans.Change) {
	r.printf("\n  # %s will be %s", c.Addr, verbs[c.Action])
	if c.Reason != "" {
		r.printf(" (%s)", c.Reason)
	}
	r.printf("\n")
	if c.DeclaredAt != nil && c.EachKey != nil {
		r.printf("  # declared at %s, each.key = %q\n", c.DeclaredAt, *c.EachKey)
	} else if c.DeclaredAt != nil {
		r.printf("  # declared at %s\n", c.DeclaredAt)
	}
	if c.Protected {
		r.printf("  # protected: prevent_destroy is written on it; no plan deletes it\n")
	}
	if len(c.Ignored) > 0 {
		r.printf("  # ignore_changes: %s (their live values are kept)\n", strings.Join(c.Ignored, ", "))
	}
	r.printf("  %s %s {\n", r.paint(c.Action, c.Action.Symbol()), c.Addr)
	before, after := decodeObject(c.Before.JSON()), decodeObject(c.After.JSON())
	switch c.Action {
	case plans.Create:
		r.object(after, plans.Create, 6)
	case plans.Delete:
		r.object(before, plans.Delete, 6)
	case plans.Forget: // left live as it is: only the marks go, which no view shows
		r.object(before, plans.NoOp, 6)
	default: // an import shows what it changes besides the marks, as an update
		r.objectDiff(before, after, 6)
	}
	r.printf("    }\n")
	for _, n := range c.Notes {
		r.printf("    # note: %s\n", n)
	}
	for i, req := range c.Requests {
		batch := ""
		if req.Batch {
			batch = ", an item of a batch (these lines, among those of the items sent with it)"
		}
		r.printf("\n    request %d of %d: %s %s%s\n", i+1, len(c.Requests), req.Method, req.Path, batch)
		keys := sortedKeys(req.Header)
		for _, k := range keys {
			r.printf("      %s: %s\n", k, req.Header[k])
		}
		var lines []json.RawMessage
		if req.Batch && json.Unmarshal(req.Body, &lines) == nil {
			for _, line := range lines {
				r.printf("      %s\n", line)
			}
			continue
		}
		var text string
		if req.Text && req.Header["Content-Type"] == "application/x-ndjson" && json.Unmarshal(req.Body, &text) == nil {
			// A _bulk body of its own, one JSON object a line, as sent.
			for _, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
				r.printf("      %s\n", line)
			}
			continue
		}
		if len(req.Body) > 0 {
			var pretty bytes.Buffer
			if json.Indent(&pretty, req.Body, "      ", "  ") == nil {
				r.printf("      %s\n", pretty.String())
			}
		}
	}
}

// notes lists the notes of changes that are not shown in full.
func (r *renderer) notes(p *plans.Plan) {
	var removable []*plans.Change
	for _, c := range p.Changes {
		if c.RemovableImport != nil {
			removable = append(removable, c)
		}
		if c.Action != plans.NoOp {
			continue
		}
		for _, n := range c.Notes {
			r.printf("\n  # %s is up to date; note: %s\n", c.Addr, n)
		}
	}
	r.printf("%s", removableImports(p.Project, removable))
}

// removableImports is the one line that says which import blocks name
// objects the project owns already ("" for none): the block itself when
// there is one, else their count (plan -json lists each, as
// removable_import).
func removableImports(project string, removable []*plans.Change) string {
	switch len(removable) {
	case 0:
		return ""
	case 1:
		return fmt.Sprintf("\n  # note: the import block at %s names %s, which project %s owns already; it can be removed\n", removable[0].RemovableImport, removable[0].Addr, project)
	}
	return fmt.Sprintf("\n  # note: %d import blocks name objects project %s owns already; they can be removed (plan -json lists them: removable_import)\n", len(removable), project)
}

// backendNotes prints each backend's notes, a line each.
func (r *renderer) backendNotes(p *plans.Plan) {
	for _, b := range p.Backends {
		for _, n := range b.Notes {
			r.printf("\n  # %s: %s\n", b.Name, n)
		}
	}
}

func decodeObject(raw json.RawMessage) map[string]any {
	var m map[string]any
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, &m) // Before and After are always objects or null
	}
	return m
}

func (r *renderer) object(m map[string]any, a plans.Action, indent int) {
	for _, k := range sortedKeys(m) {
		r.attr(a, k, m[k], indent)
	}
}

// attr shows one attribute being created or deleted; objects and lists
// one element a line.
func (r *renderer) attr(a plans.Action, k string, v any, indent int) {
	pad, mark := strings.Repeat(" ", indent), r.paint(a, a.Symbol())
	switch t := v.(type) {
	case map[string]any:
		if flat(t) {
			break // short and flat: one line
		}
		if len(t) > 0 {
			r.printf("%s%s %s = {\n", pad, mark, k)
			r.object(t, a, indent+4)
			r.printf("%s  }\n", pad)
			return
		}
	case []any:
		if len(t) > 0 {
			r.printf("%s%s %s = [\n", pad, mark, k)
			for _, e := range t {
				r.printf("%s    %s %s,\n", pad, mark, plans.Compact(e))
			}
			r.printf("%s  ]\n", pad)
			return
		}
	}
	r.printf("%s%s %s = %s\n", pad, mark, k, plans.Compact(v))
}

// flat reports whether an object is small enough, and holds no object or
// list, to be shown on one line.
func flat(m map[string]any) bool {
	for _, v := range m {
		switch v.(type) {
		case map[string]any, []any:
			return false
		}
	}
	return len(plans.Compact(m)) <= 60
}

// listDiff shows a list one element a line, marking what is removed and
// added along a longest common subsequence.
func (r *renderer) listDiff(k string, before, after []any, indent int) {
	pad := strings.Repeat(" ", indent)
	r.printf("%s%s %s = [\n", pad, r.paint(plans.Update, "~"), k)
	b, a := make([]string, len(before)), make([]string, len(after))
	for i, e := range before {
		b[i] = plans.Compact(e)
	}
	for i, e := range after {
		a[i] = plans.Compact(e)
	}
	same := 0
	for _, e := range plans.Edits(b, a) {
		switch e.Op {
		case ' ':
			same++
		case '-':
			r.printf("%s    %s %s,\n", pad, r.paint(plans.Delete, "-"), e.Text)
		default:
			r.printf("%s    %s %s,\n", pad, r.paint(plans.Create, "+"), e.Text)
		}
	}
	if same > 0 {
		r.printf("%s      # (%d unchanged %s hidden)\n", pad, same, plans.Plural(same, "element"))
	}
	r.printf("%s  ]\n", pad)
}

// objectDiff shows the attributes that differ; maps are compared key by
// key, anything else as a whole.
func (r *renderer) objectDiff(before, after map[string]any, indent int) {
	pad := strings.Repeat(" ", indent)
	keys := map[string]bool{}
	for k := range before {
		keys[k] = true
	}
	for k := range after {
		keys[k] = true
	}
	unchanged := 0
	for _, k := range sortedKeys(keys) {
		b, inB := before[k]
		a, inA := after[k]
		bm, bIsMap := b.(map[string]any)
		am, aIsMap := a.(map[string]any)
		bl, bIsList := b.([]any)
		al, aIsList := a.([]any)
		switch {
		case inB && inA && plans.Compact(a) == plans.Compact(b):
			unchanged++
		case !inB:
			r.attr(plans.Create, k, a, indent)
		case !inA:
			r.attr(plans.Delete, k, b, indent)
		case bIsList && aIsList:
			r.listDiff(k, bl, al, indent)
		case bIsMap && aIsMap:
			r.printf("%s%s %s = {\n", pad, r.paint(plans.Update, "~"), k)
			r.objectDiff(bm, am, indent+4)
			r.printf("%s  }\n", pad)
		case multiline(b, a):
			r.textDiff(k, b.(string), a.(string), indent)
		default:
			r.printf("%s%s %s = %s -> %s\n", pad, r.paint(plans.Update, "~"), k, plans.Compact(b), plans.Compact(a))
		}
	}
	if unchanged > 0 {
		r.printf("%s  # (%d unchanged %s hidden)\n", pad, unchanged, plans.Plural(unchanged, "attribute"))
	}
}

// multiline reports whether two values are strings of which one spans
// lines: they are diffed line by line.
func multiline(b, a any) bool {
	bs, bok := b.(string)
	as, aok := a.(string)
	return bok && aok && (strings.Contains(bs, "\n") || strings.Contains(as, "\n"))
}

// textDiff shows a multi-line string changed, as Terraform does: a
// heredoc of its lines, removed and added ones marked, runs of more than
// three unchanged lines folded but for the one beside a change.
func (r *renderer) textDiff(k, before, after string, indent int) {
	pad := strings.Repeat(" ", indent)
	r.printf("%s%s %s = <<-EOT\n", pad, r.paint(plans.Update, "~"), k)
	edits := plans.Edits(strings.Split(before, "\n"), strings.Split(after, "\n"))
	near := func(i int) bool {
		for j := max(0, i-1); j <= min(len(edits)-1, i+1); j++ {
			if edits[j].Op != ' ' {
				return true
			}
		}
		return false
	}
	hidden := 0
	flush := func() {
		if hidden > 0 {
			r.printf("%s        # (%d unchanged %s hidden)\n", pad, hidden, plans.Plural(hidden, "line"))
			hidden = 0
		}
	}
	for i, e := range edits {
		switch {
		case e.Op == '-':
			flush()
			r.printf("%s      %s %s\n", pad, r.paint(plans.Delete, "-"), e.Text)
		case e.Op == '+':
			flush()
			r.printf("%s      %s %s\n", pad, r.paint(plans.Create, "+"), e.Text)
		case near(i):
			flush()
			r.printf("%s        %s\n", pad, e.Text)
		default:
			hidden++
		}
	}
	flush()
	r.printf("%s    EOT\n", pad)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// gateWords say what each status of a gate means to a person.
var gateWords = map[plans.GateStatus]string{
	plans.Gated:     "gated by %s (router %s)",
	plans.NotServed: "not served yet",
	plans.Ungated:   "SERVED WITHOUT THE GATE by %s",
	plans.Unread:    "unknown: the proxy's API could not be read",
}

// gates prints how each declared proxy serves the gated frontends now.
func (r *renderer) gates(p *plans.Plan) {
	if len(p.Gates) == 0 {
		return
	}
	r.printf("\nGates, as each proxy serves them now:\n")
	for _, g := range p.Gates {
		var state string
		switch g.Status {
		case plans.Gated:
			state = fmt.Sprintf(gateWords[g.Status], g.Middleware, g.Router)
		case plans.Ungated:
			state = fmt.Sprintf(gateWords[g.Status], g.Router)
		default:
			state = gateWords[g.Status]
		}
		r.printf("  %s: %s of %s: %s\n", g.Proxy, g.Where(), g.Address, state)
	}
}

// policies says what the policies (-policies) found of the plan: how many
// results passed and failed; each failure is a diagnostic after the plan.
func (r *renderer) policies(p *plans.Plan) {
	if len(p.Policies) > 0 {
		r.printf("\nPolicies: %s\n", policyLine(p.Policies))
	}
}

// policyLine counts the results: "4 results on 3 objects: 1 passed, 2
// failed (mandatory), 1 failed (advisory)."
func policyLine(results []plans.PolicyResult) string {
	objects := map[string]bool{}
	var passed, mandatory, advisory, overridden int
	for _, x := range results {
		objects[x.Address.String()] = true
		switch {
		case x.Result == plans.PolicyPassed:
			passed++
		case x.Overridden:
			overridden++
		case x.Level == "advisory":
			advisory++
		default:
			mandatory++
		}
	}
	line := fmt.Sprintf("%d %s on %d %s: %d passed, %d failed (mandatory), %d failed (advisory)", len(results), plans.Plural(len(results), "result"),
		len(objects), plans.Plural(len(objects), "object"), passed, mandatory, advisory)
	if overridden > 0 {
		line += fmt.Sprintf(", %d overridden", overridden)
	}
	return line + "."
}
