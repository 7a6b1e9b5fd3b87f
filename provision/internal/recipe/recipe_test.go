package recipe_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision"
	"github.com/provision-dev/provision/provision/adapter"
	"github.com/provision-dev/provision/provision/addrs"
	"github.com/provision-dev/provision/provision/cli"
	"github.com/provision-dev/provision/provision/connect"
	"github.com/provision-dev/provision/provision/plans"
	"github.com/provision-dev/provision/schema"
	"github.com/zclconf/go-cty/cty"
)

// Note is the throwaway kind: a note of a notes service, note "<name>" {
// text = "..." }. NewKind is the one line that makes it a kind, and
// noteLanguage the language the test loads its specs in.
var Note, noteBlock = schema.NewKind(addrs.KindSpec{Name: "note", Form: "note.<name>", Order: 100}, &schema.KindSchema{
	Noun:   "note block named",
	Labels: []string{"name"},
	Decode: decodeNote,
	Check: func(d schema.Decoder, notes []schema.Decl) {
		seen := map[string]*schema.Declaration{}
		for _, o := range notes {
			n := o.Decl()
			if prev, dup := seen[n.Name]; dup {
				d.Duplicate("Duplicate note block", fmt.Sprintf("note %q", n.Name), n, prev)
			}
			seen[n.Name] = n
		}
	},
})

// noteLanguage is the language of the test's specs: the note alone.
var noteLanguage = schema.NewLanguage([]*schema.KindSchema{noteBlock}, nil)

// decl is a note as its block declares it.
type decl struct {
	schema.Declaration
	Text string
}

var noteSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "text", Required: true}},
	Blocks:     []hcl.BlockHeaderSchema{{Type: "lifecycle"}},
}

func decodeNote(d schema.Decoder, b schema.Block) schema.Decl {
	n := &decl{Declaration: schema.Declaration{Name: b.Labels[0], NameRange: b.LabelRanges[0], DeclRange: b.DefRange}}
	if b.Each != nil {
		n.Name += "-" + b.Each.Key
	}
	c := d.Content(b.Body, noteSchema)
	n.Lifecycle = d.Lifecycle(schema.Ignorable{Noun: "note", Roots: map[string]int{"text": 0}}, c.Blocks.OfType("lifecycle"))
	if attr, ok := c.Attributes["text"]; ok {
		if v, ok := d.Value(attr, cty.String); ok {
			n.Text = v.AsString()
		}
	}
	return n
}

// live is a note as the notes service holds it, with its marks.
type live struct {
	Text  string            `json:"text"`
	Marks map[string]string `json:"marks"`
}

// state is what a read of the notes service answered.
type state struct {
	Notes map[string]live `json:"notes"`
}

func (state) Server() string { return "notes 1.0" }
func (state) Known() error   { return nil }

// service is the notes service, in memory.
type service struct {
	mu sync.Mutex
	db map[string]live
}

// note is the note of that name the service holds.
func (s *service) note(name string) live {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.db[name]
}

// notes is the backend that plans and sends to the notes service: Read,
// Plan and Send are all a kind's backend must do.
type notes struct {
	provision.NoCapabilities
	cfg *schema.Config
	*service
}

func (b *notes) Info() plans.BackendInfo { return plans.BackendInfo{Name: "notes", Kind: "notes"} }

func (b *notes) Read(context.Context, plans.Mode) (plans.State, hcl.Diagnostics) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return state{Notes: maps.Clone(b.db)}, nil
}

func (b *notes) DecodeState(dec *json.Decoder) (plans.State, error) {
	var st state
	return st, dec.Decode(&st)
}

func (b *notes) Plan(s plans.State, _ plans.Mode) (provision.Planning, hcl.Diagnostics) {
	st := s.(state)
	declared := schema.Decls[*decl](b.cfg, Note)
	var owned []string
	for _, name := range slices.Sorted(maps.Keys(st.Notes)) {
		if adapter.OwnerOf(st.Notes[name].Marks) == b.cfg.Project {
			owned = append(owned, name)
		}
	}
	return provision.Planning{
		Kinds: provision.Kinds(provision.Objects{
			Kind:     Note,
			Declared: schema.Declarations(declared),
			Owned:    owned,
			Plan:     func(i int) (*plans.Change, hcl.Diagnostics) { return b.plan(st, declared[i]) },
			Gone: func(name string, _ int) provision.Gone {
				l := st.Notes[name]
				before, _ := json.Marshal(l)
				return provision.Gone{
					Addr: addrs.Addr{Kind: Note, Name: name}, Before: before,
					Delete: []plans.Request{{Method: "DELETE", Path: "/notes/" + name}},
					Forget: func() []plans.Request {
						body, _ := json.Marshal(live{Text: l.Text})
						return []plans.Request{{Method: "PUT", Path: "/notes/" + name, Body: body}}
					},
					Protected: adapter.ProtectedBy(l.Marks),
				}
			},
		}),
		Project: b.cfg.Project,
		Removed: b.cfg.Removed,
		Planned: plans.Planned{Fingerprint: plans.Digested(adapter.Digest(st))},
	}, nil
}

// plan is the change of one declared note.
func (b *notes) plan(st state, n *decl) (*plans.Change, hcl.Diagnostics) {
	l, exists := st.Notes[n.Name]
	after, _ := json.Marshal(live{Text: n.Text, Marks: adapter.Marks(b.cfg.Project, n.Lifecycle.Protects(false))})
	put := func() []plans.Request {
		return []plans.Request{{Method: "PUT", Path: "/notes/" + n.Name, Body: after}}
	}
	return adapter.Propose(b.cfg.Project, adapter.Object{
		Declared: adapter.Declared{Addr: addrs.Addr{Module: n.Module, Kind: Note, Name: n.Name}, Subject: n.NameRange.Ptr(), Context: n.DeclRange.Ptr(), Import: n.Import.At(), Lifecycle: n.Lifecycle},
		EachKey:  n.Instance.KeyPtr(),
		After:    func() json.RawMessage { return after },
		Live:     adapter.LiveObject{Exists: exists, Owner: adapter.OwnerOf(l.Marks), Protected: adapter.ProtectedBy(l.Marks), What: fmt.Sprintf("a note named %q", n.Name)},
		Create:   put,
		Before:   func() json.RawMessage { b, _ := json.Marshal(l); return b },
		Diff: func(importing bool) adapter.Diff {
			if l.Text == n.Text && !importing {
				return adapter.Diff{}
			}
			return adapter.Diff{Reasons: []adapter.Reason{{Code: plans.ReasonChanged, Words: "its text differs"}}, Requests: put()}
		},
		Mark: put,
	})
}

func (b *notes) Send(_ context.Context, r plans.Request) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	name := strings.TrimPrefix(r.Path, "/notes/")
	switch r.Method {
	case "PUT":
		var l live
		if err := json.Unmarshal(r.Body, &l); err != nil {
			return err
		}
		b.db[name] = l
	case "DELETE":
		delete(b.db, name)
	}
	return nil
}

// TestNewKind: the throwaway kind loads (for_each, a module, import and
// removed blocks, -target addresses), plans, applies and converges, and
// its page documents its address, with no package but this one knowing
// it.
func TestNewKind(t *testing.T) {
	page, err := os.ReadFile("testdata/note.md")
	if err != nil || !strings.Contains(string(page), "`"+Note.Form()+"`") {
		t.Fatalf("the kind's page does not give its address %s: %v", Note.Form(), err)
	}
	dir := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("main.hcl", `project = "notes-test"

note "welcome" {
  text = "hello"
}

note "team" {
  for_each = toset(["a", "b"])
  text     = "team ${each.key}"
}

module "shared" {
  source = "./shared"
  who    = "edge"
}
`)
	write("shared/main.hcl", `variable "who" {}

note "shared" {
  text = "for ${var.who}"
  lifecycle {
    prevent_destroy = true
  }
}
`)
	svc := &notes{service: &service{db: map[string]live{"by-hand": {Text: "made by hand"}}}}
	plan := func() *plans.Plan {
		t.Helper()
		cfg, diags := schema.NewParser(noteLanguage).LoadDir(dir, schema.Inputs{})
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		svc.cfg = cfg
		backends := []provision.Backend{svc}
		liveState, diags := provision.Read(context.Background(), plans.Converge, backends)
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		p, diags := provision.PlanFrom(cfg.Project, plans.Converge, backends, liveState)
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		p.InModules(cfg.Modules())
		return p
	}
	summary := func(p *plans.Plan) []string {
		var out []string
		for _, c := range p.Changes {
			if c.Action != plans.NoOp {
				out = append(out, c.Action.String()+" "+c.Addr.String())
			}
		}
		return out
	}
	apply := func(p *plans.Plan) {
		t.Helper()
		if res := provision.Apply(context.Background(), p, map[string]provision.Sender{"notes": svc}, 2, nil); res.Err() != nil {
			t.Fatal(res.Err())
		}
	}

	p := plan()
	want := []string{"create note.team-a", "create note.team-b", "create module.shared.note.shared", "create note.welcome"}
	slices.Sort(want)
	got := summary(p)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("first plan: %q, want %q", got, want)
	}
	target, err := noteLanguage.Kinds().ParseTarget("note.welcome")
	if err != nil || !slices.ContainsFunc(p.Changes, func(c *plans.Change) bool { return c.Addr.Matches(target) }) {
		t.Fatalf("-target note.welcome: %v", err)
	}
	apply(p)
	if got := summary(plan()); len(got) != 0 {
		t.Fatalf("after apply: %q, want nothing to do", got)
	}
	if svc.db["module.shared"].Text != "" || svc.db["shared"].Text != "for edge" || svc.db["by-hand"].Text != "made by hand" {
		t.Errorf("live notes: %v", svc.db)
	}

	// The import takes the note made by hand over; the removed block
	// lets go of team-b; a text changes.
	write("main.hcl", `project = "notes-test"

note "welcome" {
  text = "hello again"
}

note "by-hand" {
  text = "made by hand"
}

import {
  to = note.by-hand
}

note "team" {
  for_each = toset(["a"])
  text     = "team ${each.key}"
}

removed {
  from = note.team-b
  lifecycle {
    destroy = false
  }
}

module "shared" {
  source = "./shared"
  who    = "edge"
}
`)
	p = plan()
	got = summary(p)
	slices.Sort(got)
	if want := []string{"forget note.team-b", "import note.by-hand", "update note.welcome"}; !slices.Equal(got, want) {
		t.Fatalf("second plan: %q, want %q", got, want)
	}
	apply(plan())
	if got := summary(plan()); len(got) != 0 {
		t.Fatalf("after the second apply: %q, want nothing to do", got)
	}

	// A duplicate is the kind's own check, at its line.
	write("dup.hcl", "note \"welcome\" {\n  text = \"twice\"\n}\n")
	if _, diags := schema.NewParser(noteLanguage).LoadDir(dir, schema.Inputs{}); !diags.HasErrors() || !strings.Contains(diags.Error(), "main.hcl:3,6-15: Duplicate note block") {
		t.Errorf("a note declared twice: %v", diags)
	}
}

// TestNewKindThroughTheCLI: the throwaway kind's backend, opened beside
// the backends provision/connect knows (a connect.Opener, handed to the
// CLI as a binary's main would hand it), is planned and applied by the
// provision command, and its drift repaired by provision watch -heal,
// with no package but this one knowing it.
func TestNewKindThroughTheCLI(t *testing.T) {
	// The command reads the environment, as the binary does: none of the
	// servers it names is the test's.
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "CONSUL_") || strings.HasPrefix(k, "ELASTICSEARCH_") || strings.HasPrefix(k, "TRAEFIK_") || strings.HasPrefix(k, "PROVISION_") {
			t.Setenv(k, "")
			os.Unsetenv(k)
		}
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.hcl"), []byte("project = \"notes-run\"\n\nnote \"welcome\" {\n  text = \"hello\"\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	svc := &service{db: map[string]live{}}
	open := func(cfg *schema.Config, _ connect.Options) ([]provision.Backend, hcl.Diagnostics) {
		return []provision.Backend{&notes{cfg: cfg, service: svc}}, nil
	}
	o := cli.Options{Language: noteLanguage, Backends: []connect.Opener{open}}
	provision := func(args ...string) (int, string) {
		var out bytes.Buffer
		return cli.Run(o, args, strings.NewReader(""), &out, &out), out.String()
	}
	if code, out := provision("apply", "-auto-approve", "-no-color", dir); code != 0 || !strings.Contains(out, "+ note.welcome") {
		t.Fatalf("apply: exit %d\n%s", code, out)
	}
	if got := svc.note("welcome"); got.Text != "hello" || adapter.OwnerOf(got.Marks) != "notes-run" {
		t.Fatalf("after apply: %+v", got)
	}
	if code, out := provision("plan", "-detailed-exitcode", "-no-color", dir); code != 0 {
		t.Fatalf("after apply, plan -detailed-exitcode: exit %d, want 0 (no changes)\n%s", code, out)
	}

	// A note edited by hand is put back by a watcher that heals (there is
	// no Consul to elect a healer through: it heals alone), which stops
	// as the command does, on an interrupt. The test holds the interrupt
	// too, so that it never ends the test binary, whenever it arrives.
	drifted := svc.note("welcome")
	drifted.Text = "edited by hand"
	svc.mu.Lock()
	svc.db["welcome"] = drifted
	svc.mu.Unlock()
	held := make(chan os.Signal, 1)
	signal.Notify(held, os.Interrupt)
	defer signal.Stop(held)
	type result struct {
		code int
		out  string
	}
	stopped := make(chan result, 1)
	go func() {
		code, out := provision("watch", "-heal", "-interval", "100ms", "-buffer", "1ms,10ms", dir)
		stopped <- result{code, out}
	}()
	deadline := time.After(30 * time.Second)
	for svc.note("welcome").Text != "hello" {
		select {
		case r := <-stopped:
			t.Fatalf("provision watch ended before it repaired the note: exit %d\n%s", r.code, r.out)
		case <-deadline:
			t.Fatalf("the watcher left the note at %q, want it repaired to %q", svc.note("welcome").Text, "hello")
		case <-time.After(50 * time.Millisecond):
		}
	}
	self, err := os.FindProcess(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if err := self.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if r := <-stopped; r.code != 0 {
		t.Errorf("provision watch: exit %d\n%s", r.code, r.out)
	}
}
