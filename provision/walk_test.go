package provision

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision/adapter"
	"github.com/provision-dev/provision/provision/addrs"
	"github.com/provision-dev/provision/provision/plans"
	"github.com/provision-dev/provision/schema"
)

// testNote is the kind of the engine's own walk tests: a note, whose
// text a shelf holds.
var testNote = addrs.NewKind(addrs.KindSpec{Name: "note", Form: "note.<name>", Order: 40})

// shelf is a backend of notes built in the test, with the engine's
// contract and nothing else: its Plan gives each declared note's change
// against the live one (adapter.Propose) and what deleting or forgetting
// an owned one sends; the engine does the rest.
type shelf struct {
	NoCapabilities
	// name is the backend's, "shelf" when empty.
	name     string
	project  string
	declared []*schema.Declaration
	texts    map[string]string
	removed  []*schema.Removed
	replace  map[string]bool
	// keeps: the kind keeps an owned note no longer declared, as the
	// search backend keeps an index; holds: the notes whose delete
	// would delete protected notes with them, and moved those declared
	// on another shelf.
	keeps bool
	holds map[string]string
	moved map[string]string
}

// note is a live note: its text and its marks.
type note struct {
	Text, Owner string
	Protected   bool
}

type shelfState map[string]note

func (shelfState) Server() string { return "shelf" }
func (shelfState) Known() error   { return nil }

func (s *shelf) Info() plans.BackendInfo {
	return plans.BackendInfo{Name: cmp.Or(s.name, "shelf"), Kind: "shelf"}
}
func (s *shelf) Read(context.Context, plans.Mode) (plans.State, hcl.Diagnostics) {
	return shelfState{}, nil
}
func (s *shelf) DecodeState(dec *json.Decoder) (plans.State, error) {
	var st shelfState
	return st, dec.Decode(&st)
}

func (s *shelf) Plan(state plans.State, _ plans.Mode) (Planning, hcl.Diagnostics) {
	st := state.(shelfState)
	var owned []string
	for _, name := range slices.Sorted(maps.Keys(st)) {
		if st[name].Owner == s.project {
			owned = append(owned, name)
		}
	}
	return Planning{
		Kinds: Kinds(Objects{
			Kind:     testNote,
			Declared: s.declared,
			Owned:    owned,
			Plan:     func(i int) (*plans.Change, hcl.Diagnostics) { return s.plan(st, s.declared[i]) },
			Gone: func(name string, _ int) Gone {
				g := Gone{Addr: noteAddr(name), Before: text(st[name].Text), Protected: st[name].Protected,
					Delete: []plans.Request{{Method: "DELETE", Path: "/" + name}},
					Forget: func() []plans.Request { return []plans.Request{{Method: "PUT", Path: "/" + name + "?unmarked"}} },
					Moved:  s.moved[name], Holding: s.holds[name]}
				if s.keeps {
					g.Kept = &hcl.Diagnostic{Severity: hcl.DiagWarning, Summary: "Note kept: " + name}
				}
				return g
			},
		}),
		Project: s.project,
		Removed: s.removed,
	}, nil
}

func (s *shelf) plan(st shelfState, d *schema.Declaration) (*plans.Change, hcl.Diagnostics) {
	l, exists := st[d.Name]
	want := s.texts[d.Name]
	put := func() []plans.Request { return []plans.Request{{Method: "PUT", Path: "/" + d.Name}} }
	return adapter.Propose(s.project, adapter.Object{
		Declared: adapter.Declared{Addr: noteAddr(d.Name), Subject: d.NameRange.Ptr(), Context: d.DeclRange.Ptr(), Import: d.Import.At(), Lifecycle: d.Lifecycle},
		After:    func() json.RawMessage { return text(want) },
		Live:     adapter.LiveObject{Exists: exists, Owner: l.Owner, Protected: l.Protected, What: "a note"},
		Create:   put,
		Before:   func() json.RawMessage { return text(l.Text) },
		Diff: func(importing bool) adapter.Diff {
			switch {
			case l.Text != want || importing:
				return adapter.Diff{Reasons: []adapter.Reason{{Code: plans.ReasonChanged, Words: "text changed"}}, Requests: put()}
			case s.replace[d.Name]:
				return adapter.Diff{Reasons: []adapter.Reason{{Code: plans.ReasonReplace, Words: "replaced"}}, Requests: put()}
			}
			return adapter.Diff{}
		},
		Mark:     put,
		Imported: "taken over",
	})
}

func noteAddr(name string) addrs.Addr { return addrs.Addr{Kind: testNote, Name: name} }

func text(s string) json.RawMessage { b, _ := json.Marshal(s); return b }

// at is a source range of line n of notes.hcl.
func at(n int) hcl.Range {
	return hcl.Range{Filename: "notes.hcl", Start: hcl.Pos{Line: n, Column: 1, Byte: n}, End: hcl.Pos{Line: n, Column: 5, Byte: n + 4}}
}

// TestWalk drives the engine's object loop with the shelf's kind: what
// it plans of declared objects, live ones, both, and each of them
// removed, forgotten, protected, moved, kept, replaced, targeted or
// excluded, in both modes.
func TestWalk(t *testing.T) {
	protect := true
	declare := func(name string, line int) *schema.Declaration {
		return &schema.Declaration{Name: name, NameRange: at(line), DeclRange: at(line)}
	}
	tests := []struct {
		name     string
		mode     plans.Mode
		declared []*schema.Declaration
		live     shelfState
		shelf    shelf
		options  PlanOptions
		// want is each change as "address action: reason", in the
		// plan's order; diags, the diagnostics' summaries.
		want, diags []string
	}{
		{name: "declared only", declared: []*schema.Declaration{declare("a", 1)},
			want: []string{"note.a create: "}},
		{name: "both, the same", declared: []*schema.Declaration{declare("a", 1)}, live: shelfState{"a": {Text: "A", Owner: "p"}},
			want: []string{"note.a no-op: "}},
		{name: "both, differing", declared: []*schema.Declaration{declare("a", 1)}, live: shelfState{"a": {Text: "old", Owner: "p"}},
			want: []string{"note.a update: text changed"}},
		{name: "declared, live unowned", declared: []*schema.Declaration{declare("a", 1)}, live: shelfState{"a": {Text: "A"}},
			diags: []string{"The note exists and provision does not own it"}},
		{name: "declared, live another project's", declared: []*schema.Declaration{declare("a", 1)}, live: shelfState{"a": {Text: "A", Owner: "q"}},
			diags: []string{"The note belongs to another project"}},
		{name: "imported", declared: []*schema.Declaration{{Name: "a", DeclRange: at(1), Import: &schema.Import{ToRange: at(9)}}}, live: shelfState{"a": {Text: "A"}},
			want: []string{"note.a import: taken over; text changed"}},
		{name: "live only, owned", live: shelfState{"b": {Text: "B", Owner: "p"}},
			want: []string{"note.b delete: owned by project p and no longer declared"}},
		{name: "live only, unowned or another project's", live: shelfState{"b": {Text: "B"}, "c": {Text: "C", Owner: "q"}}},
		{name: "live only, removed", live: shelfState{"b": {Text: "B", Owner: "p"}},
			shelf: shelf{removed: []*schema.Removed{{Addr: noteAddr("b"), Destroy: true, DeclRange: at(5)}}},
			want:  []string{"note.b delete: the removed block at notes.hcl:5,1-5 deletes it"}},
		{name: "live only, forgotten", live: shelfState{"b": {Text: "B", Owner: "p", Protected: true}},
			shelf: shelf{removed: []*schema.Removed{{Addr: noteAddr("b"), DeclRange: at(5)}}},
			want:  []string{"note.b forget: the removed block at notes.hcl:5,1-5 lets go of it: its marks are taken off, and it is left live as it is"}},
		{name: "live only, protected", live: shelfState{"b": {Text: "B", Owner: "p", Protected: true}},
			diags: []string{"Protected object would be deleted"}},
		{name: "live only, moved", live: shelfState{"b": {Text: "B", Owner: "p", Protected: true}},
			shelf: shelf{moved: map[string]string{"b": "moved to shelf.other"}},
			want:  []string{"note.b delete: moved to shelf.other"}},
		{name: "live only, kept", live: shelfState{"b": {Text: "B", Owner: "p"}}, shelf: shelf{keeps: true},
			diags: []string{"Note kept: b"}},
		{name: "live only, kept but removed", live: shelfState{"b": {Text: "B", Owner: "p"}},
			shelf: shelf{keeps: true, removed: []*schema.Removed{{Addr: noteAddr("b"), Destroy: true, DeclRange: at(5)}}},
			want:  []string{"note.b delete: the removed block at notes.hcl:5,1-5 deletes it"}},
		{name: "live only, holding protected objects", live: shelfState{"b": {Text: "B", Owner: "p"}}, shelf: shelf{holds: map[string]string{"b": "it holds c"}},
			diags: []string{"Protected object would be deleted"}},
		{name: "replaced by its kind", declared: []*schema.Declaration{declare("a", 1)}, live: shelfState{"a": {Text: "A", Owner: "p"}},
			shelf: shelf{replace: map[string]bool{"a": true}},
			want:  []string{"note.a update: replaced"}},
		{name: "-replace of a kind that takes none", declared: []*schema.Declaration{declare("a", 1)}, live: shelfState{"a": {Text: "A", Owner: "p"}},
			options: PlanOptions{Replace: []addrs.Addr{noteAddr("a")}},
			want:    []string{"note.a no-op: "}, diags: []string{"Invalid -replace address"}},
		{name: "targeted", declared: []*schema.Declaration{declare("a", 1), declare("c", 2)}, live: shelfState{"b": {Text: "B", Owner: "p"}},
			options: PlanOptions{Targets: []addrs.Addr{noteAddr("b")}},
			want:    []string{"note.b delete: owned by project p and no longer declared"}},
		{name: "excluded", declared: []*schema.Declaration{declare("a", 1), declare("c", 2)}, live: shelfState{"b": {Text: "B", Owner: "p"}},
			options: PlanOptions{Excludes: []addrs.Addr{noteAddr("b"), noteAddr("c")}},
			want:    []string{"note.a create: "}},
		{name: "destroy", mode: plans.Destroy, declared: []*schema.Declaration{declare("a", 1), declare("c", 2)},
			live: shelfState{"a": {Text: "A", Owner: "p"}, "b": {Text: "B", Owner: "p"}, "d": {Text: "D"}},
			want: []string{"note.a delete: owned by project p", "note.b delete: owned by project p"}},
		{name: "destroy, kept and moved alike", mode: plans.Destroy, live: shelfState{"b": {Text: "B", Owner: "p"}},
			shelf: shelf{keeps: true, moved: map[string]string{"b": "moved to shelf.other"}},
			want:  []string{"note.b delete: owned by project p"}},
		{name: "destroy, protected by its block", mode: plans.Destroy,
			declared: []*schema.Declaration{{Name: "a", DeclRange: at(1), Lifecycle: schema.Lifecycle{PreventDestroy: &protect}}},
			live:     shelfState{"a": {Text: "A", Owner: "p"}},
			diags:    []string{"Protected object would be deleted"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := tt.shelf
			s.project, s.declared = "p", tt.declared
			s.texts = map[string]string{}
			for _, d := range tt.declared {
				s.texts[d.Name] = strings.ToUpper(d.Name)
			}
			live := &plans.Live{States: map[string]plans.State{"shelf": tt.live}}
			o := tt.options
			o.Mode = tt.mode
			p, diags := Plan(&schema.Config{Project: "p", Removed: s.removed}, []Backend{&s}, live, o)
			var got, summaries []string
			if p != nil {
				for _, c := range p.Changes {
					got = append(got, fmt.Sprintf("%s %s: %s", c.Addr, c.Action, c.Reason))
				}
			}
			for _, d := range diags {
				summaries = append(summaries, d.Summary)
			}
			if diff := gocmp.Diff(tt.want, got); diff != "" {
				t.Errorf("changes (-want +got):\n%s", diff)
			}
			if diff := gocmp.Diff(tt.diags, summaries); diff != "" {
				t.Errorf("diagnostics (-want +got):\n%s", diff)
			}
		})
	}
}

// TestWalkDestroyDeclared: in destroy mode, a declared object's delete
// says where it is declared (and its for_each key), whatever its kind.
func TestWalkDestroyDeclared(t *testing.T) {
	s := &shelf{project: "p", declared: []*schema.Declaration{{Name: "a", DeclRange: at(3), Instance: &schema.Instance{Key: "k"}}}}
	live := &plans.Live{States: map[string]plans.State{"shelf": shelfState{"a": {Text: "A", Owner: "p"}}}}
	p, diags := PlanFrom("p", plans.Destroy, []Backend{s}, live)
	if diags.HasErrors() || len(p.Changes) != 1 {
		t.Fatalf("plan: %v %v", p.Changes, diags)
	}
	c := p.Changes[0]
	if c.DeclaredAt == nil || c.DeclaredAt.Start.Line != 3 || c.EachKey == nil || *c.EachKey != "k" || c.Backend != "shelf" {
		t.Errorf("declared at %v, each.key %v, backend %q: want notes.hcl line 3, k, shelf", c.DeclaredAt, c.EachKey, c.Backend)
	}
}

// TestWalkTwice: an object that moves between two backends that address
// it alike (a create on one, a delete on the other) is refused, whatever
// the backends.
func TestWalkTwice(t *testing.T) {
	here := &shelf{name: "here", project: "p", declared: []*schema.Declaration{{Name: "a", DeclRange: at(1)}}, texts: map[string]string{"a": "A"}}
	there := &shelf{name: "there", project: "p"}
	live := &plans.Live{States: map[string]plans.State{"here": shelfState{}, "there": shelfState{"a": {Text: "A", Owner: "p"}}}}
	_, diags := PlanFrom("p", plans.Converge, []Backend{here, there}, live)
	if len(diags) != 1 || diags[0].Summary != "One object planned twice" || !strings.Contains(diags[0].Detail, "note.a is planned on here (create) and on there (delete)") {
		t.Errorf("diagnostics %v, want the move refused", diags)
	}
}
