package provision

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"
)

// recorder is a Backend that records the requests sent to it, fails the
// ones whose path is in fail, and holds each request long enough for
// requests of other changes to overlap.
type recorder struct {
	mu      sync.Mutex
	sent    []string
	fail    map[string]bool
	running atomic.Int32
	peak    atomic.Int32
}

func (r *recorder) Info() BackendInfo                                   { return BackendInfo{Name: "b"} }
func (r *recorder) Read(context.Context, Mode) (State, hcl.Diagnostics) { return nil, nil }
func (r *recorder) Plan(State, Mode) (Planned, hcl.Diagnostics)         { return Planned{}, nil }
func (r *recorder) DecodeState(json.RawMessage) (State, error)          { return nil, nil }

func (r *recorder) Send(_ context.Context, req Request) error {
	n := r.running.Add(1)
	defer r.running.Add(-1)
	for {
		p := r.peak.Load()
		if n <= p || r.peak.CompareAndSwap(p, n) {
			break
		}
	}
	time.Sleep(2 * time.Millisecond)
	r.mu.Lock()
	r.sent = append(r.sent, req.Path)
	r.mu.Unlock()
	if r.fail[req.Path] {
		return &StatusError{Code: 400, Message: "refused"}
	}
	return nil
}

func change(name string, action Action, paths ...string) *Change {
	c := &Change{Addr: Addr{Kind: "service", Name: name}, Backend: "b", Action: action}
	for _, p := range paths {
		c.Requests = append(c.Requests, Request{Method: "PUT", Path: p})
	}
	return c
}

// TestApplyOrder: the requests of one change run in order, deletes start
// after every other change, and at most parallelism changes run at once.
func TestApplyOrder(t *testing.T) {
	var changes []*Change
	for i := range 12 {
		changes = append(changes, change(fmt.Sprintf("s%02d", i), Create, fmt.Sprintf("/s%02d/1", i), fmt.Sprintf("/s%02d/2", i)))
	}
	changes = append(changes, change("old", Delete, "/old/1"), change("same", NoOp))
	r := &recorder{}
	res := Apply(context.Background(), &Plan{Changes: changes}, map[string]Writer{"b": r}, 3, nil)
	if res.Err() != nil || res.Stopped != nil || !res.complete() {
		t.Fatalf("apply: %v %v", res.Err(), res.Stopped)
	}
	if len(res.Outcomes) != 13 {
		t.Errorf("%d outcomes, want one per change with requests (13)", len(res.Outcomes))
	}
	pos := map[string]int{}
	for i, p := range r.sent {
		pos[p] = i
	}
	for i := range 12 {
		if first, second := pos[fmt.Sprintf("/s%02d/1", i)], pos[fmt.Sprintf("/s%02d/2", i)]; first > second {
			t.Errorf("s%02d: its second request was sent before its first", i)
		}
	}
	if pos["/old/1"] != len(r.sent)-1 {
		t.Errorf("the delete was not last: %v", r.sent)
	}
	if p := r.peak.Load(); p > 3 || p < 2 {
		t.Errorf("at most %d requests ran at once with parallelism 3; want 2 or 3", p)
	}
}

// TestApplyStopsOnFirstFailure: after a failure no new request starts,
// and the outcomes say what was done, what failed and what was not.
func TestApplyStopsOnFirstFailure(t *testing.T) {
	changes := []*Change{change("a", Create, "/a/1"), change("b", Create, "/b/1", "/b/2"), change("c", Create, "/c/1"), change("d", Delete, "/d/1")}
	r := &recorder{fail: map[string]bool{"/b/1": true}}
	res := Apply(context.Background(), &Plan{Changes: changes}, map[string]Writer{"b": r}, 1, nil)
	if diff := cmp.Diff([]string{"done a 1", "failed b 0", "not done c 0", "not done d 0"}, outcomeWords(res)); diff != "" {
		t.Errorf("outcomes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"/a/1", "/b/1"}, r.sent); diff != "" {
		t.Errorf("sent (-want +got):\n%s", diff)
	}
	if err := res.Err(); err == nil || !strings.Contains(err.Error(), "service.b: request 1 of 2 (PUT /b/1)") {
		t.Errorf("Err = %v", err)
	}
	if _, refused := Refused(res.Outcomes[1].Err); !refused {
		t.Errorf("a 400 is not a refusal: %v", res.Outcomes[1].Err)
	}
}

// outcomeWords are the outcomes as "<word> <name> <requests sent>".
func outcomeWords(res Result) []string {
	var out []string
	for _, o := range res.Outcomes {
		word := "not done"
		switch {
		case o.Complete():
			word = "done"
		case o.Err != nil:
			word = "failed"
		}
		out = append(out, fmt.Sprintf("%s %s %d", word, o.Change.Addr.Name, o.Sent))
	}
	return out
}

// TestApplyInterrupted: a canceled context starts no request and says why.
func TestApplyInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(errors.New("interrupted"))
	r := &recorder{}
	res := Apply(ctx, &Plan{Changes: []*Change{change("a", Create, "/a/1")}}, map[string]Writer{"b": r}, 2, nil)
	if len(r.sent) != 0 || res.Stopped == nil || res.Stopped.Error() != "interrupted" {
		t.Errorf("sent %v, stopped %v", r.sent, res.Stopped)
	}
}

// TestDecide: the ownership rule, every case.
func TestDecide(t *testing.T) {
	at := &hcl.Range{Filename: "main.hcl", Start: hcl.Pos{Line: 3}}
	imp := &hcl.Range{Filename: "main.hcl", Start: hcl.Pos{Line: 9}}
	d := Declared{Addr: Addr{Kind: "service", Name: "api"}, Noun: "service", Subject: at}
	withImport := d
	withImport.Import = imp
	tests := map[string]struct {
		declared Declared
		live     LiveObject
		claim    Claim
		summary  string
		note     bool
	}{
		"absent: created": {d, LiveObject{}, ClaimCreate, "", false},
		"absent, with an import: nothing to import": {withImport, LiveObject{}, ClaimRefused, "Nothing to import", false},
		"own: managed":                         {d, LiveObject{Exists: true, Owner: "edge"}, ClaimManage, "", false},
		"own, with an import: managed, a note": {withImport, LiveObject{Exists: true, Owner: "edge"}, ClaimManage, "", true},
		"another project's: refused":           {d, LiveObject{Exists: true, Owner: "other"}, ClaimRefused, "The service belongs to another project", false},
		"another project's, with an import":    {withImport, LiveObject{Exists: true, Owner: "other"}, ClaimRefused, "The service belongs to another project", false},
		"nobody's, with an import: imported":   {withImport, LiveObject{Exists: true}, ClaimImport, "", false},
		"nobody's: refused":                    {d, LiveObject{Exists: true}, ClaimRefused, "The service exists and provision does not own it", false},
	}
	for name, tt := range tests {
		claim, note, refusal := Decide("edge", tt.declared, tt.live)
		summary := ""
		if refusal != nil {
			summary = refusal.Summary
		}
		if claim != tt.claim || summary != tt.summary || (note != "") != tt.note {
			t.Errorf("%s: Decide = %v, %q, %q; want %v, %q, note %v", name, claim, note, summary, tt.claim, tt.summary, tt.note)
		}
	}
}

// TestApplyNeeds: a change starts after the changes it needs are
// complete, whatever their place in the plan's address order (the plan
// puts them first), and not at all when one of them failed; a change that
// needs nothing of the plan runs at once.
func TestApplyNeeds(t *testing.T) {
	dashboard := change("dashboard", Create, "/dashboard")
	vis := change("vis", Create, "/vis")
	pattern := change("pattern", Create, "/pattern")
	other := change("other", Create, "/other")
	dashboard.Needs = []Addr{vis.Addr, {Kind: "index", Name: "not-in-the-plan"}}
	vis.Needs = []Addr{pattern.Addr}
	p := &Plan{Changes: []*Change{dashboard, other, pattern, vis}}
	p.sort()
	var order []string
	for _, c := range p.Changes {
		order = append(order, c.Addr.Name)
	}
	if diff := cmp.Diff([]string{"pattern", "vis", "dashboard", "other"}, order); diff != "" {
		t.Fatalf("plan order (-want +got):\n%s", diff)
	}
	r := &recorder{}
	if res := Apply(context.Background(), p, map[string]Writer{"b": r}, 10, nil); res.Err() != nil {
		t.Fatal(res.Err())
	}
	pos := map[string]int{}
	for i, s := range r.sent {
		pos[s] = i
	}
	if pos["/pattern"] > pos["/vis"] || pos["/vis"] > pos["/dashboard"] {
		t.Errorf("sent %v: a change before what it needs", r.sent)
	}

	r = &recorder{fail: map[string]bool{"/vis": true}}
	res := Apply(context.Background(), p, map[string]Writer{"b": r}, 10, nil)
	for _, o := range res.Outcomes {
		if o.Change == dashboard && (o.Sent != 0 || o.Err != nil) {
			t.Errorf("the dashboard, which needs the failed visualization: %+v", o)
		}
	}
	if slices.Contains(r.sent, "/dashboard") {
		t.Errorf("sent %v: the dashboard was sent after the visualization it needs failed", r.sent)
	}
}

// batcher is a recorder that is a Batcher: it records each batch as the
// paths of its items' first lines, and fails the items in fail.
type batcher struct {
	recorder
	limit   int
	batches [][]string
}

func (b *batcher) BatchLimit() int { return b.limit }

func (b *batcher) SendBatch(_ context.Context, _ State, items []Request) []error {
	var batch []string
	errs := make([]error, len(items))
	for i, it := range items {
		batch = append(batch, string(it.Body))
		if b.fail[string(it.Body)] {
			errs[i] = &StatusError{Code: 409, Message: "conflict"}
		}
	}
	b.mu.Lock()
	b.batches = append(b.batches, batch)
	b.mu.Unlock()
	return errs
}

// TestApplyBatches: batch items that follow one another go as one batch,
// bounded, until one needs another of them; deletes go in batches of
// their own after the rest; an item's failure is its own (the others of
// its batch are done) and stops the batches after it.
func TestApplyBatches(t *testing.T) {
	item := func(name string, action Action, needs ...*Change) *Change {
		c := &Change{Addr: Addr{Kind: "document", Name: name}, Backend: "b", Action: action,
			Requests: []Request{{Method: "POST", Path: "/_bulk", Body: []byte(`"` + name + `"`), Batch: true}}}
		for _, n := range needs {
			c.Needs = append(c.Needs, n.Addr)
		}
		return c
	}
	p1, p2, p3 := item("p1", Create), item("p2", Create), item("p3", Create)
	s1 := item("s1", Create, p1)
	v1, v2 := item("v1", Update, s1), item("v2", Create, p2)
	d1, d2 := item("d1", Delete), item("d2", Delete)
	plain := change("svc", Create, "/svc")
	changes := []*Change{p1, p2, p3, s1, v1, v2, plain, d1, d2}

	b := &batcher{limit: 2}
	res := Apply(context.Background(), &Plan{Changes: changes}, map[string]Writer{"b": b}, 4, nil)
	if res.Err() != nil || !res.complete() {
		t.Fatalf("apply: %v", res.Err())
	}
	slices.SortFunc(b.batches, func(x, y []string) int { return strings.Compare(x[0], y[0]) })
	want := [][]string{{`"d1"`, `"d2"`}, {`"p1"`, `"p2"`}, {`"p3"`, `"s1"`}, {`"v1"`, `"v2"`}}
	if diff := cmp.Diff(want, b.batches); diff != "" {
		t.Errorf("batches (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"/svc"}, b.sent); diff != "" {
		t.Errorf("sent alone (-want +got):\n%s", diff)
	}

	b = &batcher{limit: 10, recorder: recorder{fail: map[string]bool{`"p2"`: true}}}
	res = Apply(context.Background(), &Plan{Changes: changes}, map[string]Writer{"b": b}, 1, nil)
	outcomes := []string{"done p1 1", "failed p2 0", "done p3 1", "not done s1 0", "not done v1 0", "not done v2 0", "not done svc 0", "not done d1 0", "not done d2 0"}
	if diff := cmp.Diff(outcomes, outcomeWords(res)); diff != "" {
		t.Errorf("outcomes with one item refused (-want +got):\n%s", diff)
	}
	if err := res.Err(); err == nil || !strings.Contains(err.Error(), "document.p2: request 1 of 1 (POST /_bulk): conflict") {
		t.Errorf("Err = %v", err)
	}
}

// TestGraphNeeds: graph draws an edge from the last request of a change
// to the first of each change that needs it.
func TestGraphNeeds(t *testing.T) {
	index := change("ix", Create, "/ix/", "/ix/_mapping/search")
	search := change("search", Create, "/ix/search/errors")
	search.Needs = []Addr{index.Addr}
	var out strings.Builder
	if err := RenderDOT(&out, &Plan{Project: "p", Changes: []*Change{index, search}}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `"0.2" -> "1.1";`) {
		t.Errorf("no edge from the index's last request to the search:\n%s", out.String())
	}
}
