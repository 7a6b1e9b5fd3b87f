package provision

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/provision-dev/provision/provision/adapter"
	"github.com/provision-dev/provision/provision/addrs"
	"github.com/provision-dev/provision/provision/plans"
	"github.com/provision-dev/provision/provision/plans/planstest"
)

// recorder is a Sender that records the requests sent to it, fails the
// ones whose path is in fail, and holds each request long enough for
// requests of other changes to overlap. It sends no batch.
type recorder struct {
	NoCapabilities
	mu   sync.Mutex
	sent []string
	fail map[string]bool
	inFlight
}

// inFlight counts the requests in flight, and the most at once.
type inFlight struct{ running, peak atomic.Int32 }

// enter counts one more request in flight; the function it returns, one
// fewer.
func (f *inFlight) enter() func() {
	n := f.running.Add(1)
	for p := f.peak.Load(); n > p && !f.peak.CompareAndSwap(p, n); p = f.peak.Load() {
	}
	return func() { f.running.Add(-1) }
}

func (r *recorder) Send(_ context.Context, req plans.Request) error {
	defer r.enter()()
	time.Sleep(2 * time.Millisecond)
	r.mu.Lock()
	r.sent = append(r.sent, req.Path)
	r.mu.Unlock()
	if r.fail[req.Path] {
		return &adapter.StatusError{Code: 400, Message: "refused"}
	}
	return nil
}

// TestApplyOrder: the requests of one change run in order, deletes start
// after every other change, and at most parallelism changes run at once.
func TestApplyOrder(t *testing.T) {
	var changes []*plans.Change
	for i := range 12 {
		changes = append(changes, planstest.Change(testService, fmt.Sprintf("s%02d", i), plans.Create, fmt.Sprintf("/s%02d/1", i), fmt.Sprintf("/s%02d/2", i)))
	}
	changes = append(changes, planstest.Change(testService, "old", plans.Delete, "/old/1"), planstest.Change(testService, "same", plans.NoOp))
	r := &recorder{}
	res := Apply(context.Background(), &plans.Plan{Changes: changes}, map[string]Sender{"b": r}, 3, nil)
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

// TestApplyParallelismPerServer: -parallelism bounds the requests in
// flight on each backend, not the apply's: two agents with parallelism 2
// each have at most 2 at once, and both work at the same time (4 at once
// in all); each backend starts its changes in plan order.
func TestApplyParallelismPerServer(t *testing.T) {
	var changes []*plans.Change
	for _, b := range []string{"agent.a", "agent.b"} {
		for i := range 8 {
			c := planstest.Change(testService, fmt.Sprintf("%s-%d", b, i), plans.Create, fmt.Sprintf("/%s/%d", b, i))
			c.Backend = b
			changes = append(changes, c)
		}
	}
	a, b := &recorder{}, &recorder{}
	var all inFlight
	res := Apply(context.Background(), &plans.Plan{Changes: changes}, map[string]Sender{"agent.a": counting{a, &all}, "agent.b": counting{b, &all}}, 2, nil)
	if res.Err() != nil || !res.complete() {
		t.Fatalf("apply: %v", res.Err())
	}
	for name, r := range map[string]*recorder{"agent.a": a, "agent.b": b} {
		if p := r.peak.Load(); p != 2 {
			t.Errorf("%s had %d requests at once, want 2 (-parallelism)", name, p)
		}
		if len(r.sent) != 8 || r.sent[0] != "/"+name+"/0" && r.sent[0] != "/"+name+"/1" {
			t.Errorf("%s: sent %v; want its 8 changes, the first two of the plan first", name, r.sent)
		}
	}
	if p := all.peak.Load(); p != 4 {
		t.Errorf("%d requests at once over both agents, want 4 (2 on each)", p)
	}
}

// counting is a recorder whose requests are counted in all too.
type counting struct {
	*recorder
	all *inFlight
}

func (s counting) Send(ctx context.Context, req plans.Request) error {
	defer s.all.enter()()
	return s.recorder.Send(ctx, req)
}

// TestApplyStopsOnFirstFailure: after a failure no new request starts,
// and the outcomes say what was done, what failed and what was not.
func TestApplyStopsOnFirstFailure(t *testing.T) {
	changes := []*plans.Change{planstest.Change(testService, "a", plans.Create, "/a/1"), planstest.Change(testService, "b", plans.Create, "/b/1", "/b/2"), planstest.Change(testService, "c", plans.Create, "/c/1"), planstest.Change(testService, "d", plans.Delete, "/d/1")}
	r := &recorder{fail: map[string]bool{"/b/1": true}}
	res := Apply(context.Background(), &plans.Plan{Changes: changes}, map[string]Sender{"b": r}, 1, nil)
	if diff := cmp.Diff([]string{"done a 1", "failed b 0", "not done c 0", "not done d 0"}, outcomeWords(res)); diff != "" {
		t.Errorf("outcomes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"/a/1", "/b/1"}, r.sent); diff != "" {
		t.Errorf("sent (-want +got):\n%s", diff)
	}
	if err := res.Err(); err == nil || !strings.Contains(err.Error(), "service.b: request 1 of 2 (PUT /b/1)") {
		t.Errorf("Err = %v", err)
	}
	if _, refused := adapter.Refused(res.Outcomes[1].Err); !refused {
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
	res := Apply(ctx, &plans.Plan{Changes: []*plans.Change{planstest.Change(testService, "a", plans.Create, "/a/1")}}, map[string]Sender{"b": r}, 2, nil)
	if len(r.sent) != 0 || res.Stopped == nil || res.Stopped.Error() != "interrupted" {
		t.Errorf("sent %v, stopped %v", r.sent, res.Stopped)
	}
}

// TestApplyNeeds: a change starts after the changes it needs are
// complete, whatever their place in the plan's address order (the plan
// puts them first), and not at all when one of them failed; a change that
// needs nothing of the plan runs at once.
func TestApplyNeeds(t *testing.T) {
	dashboard := planstest.Change(testService, "dashboard", plans.Create, "/dashboard")
	vis := planstest.Change(testService, "vis", plans.Create, "/vis")
	pattern := planstest.Change(testService, "pattern", plans.Create, "/pattern")
	other := planstest.Change(testService, "other", plans.Create, "/other")
	dashboard.Needs = []addrs.Addr{vis.Addr, {Kind: testIndex, Name: "not-in-the-plan"}}
	vis.Needs = []addrs.Addr{pattern.Addr}
	p := &plans.Plan{Changes: []*plans.Change{dashboard, other, pattern, vis}}
	p.Sort()
	var order []string
	for _, c := range p.Changes {
		order = append(order, c.Addr.Name)
	}
	if diff := cmp.Diff([]string{"pattern", "vis", "dashboard", "other"}, order); diff != "" {
		t.Fatalf("plan order (-want +got):\n%s", diff)
	}
	r := &recorder{}
	if res := Apply(context.Background(), p, map[string]Sender{"b": r}, 10, nil); res.Err() != nil {
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
	res := Apply(context.Background(), p, map[string]Sender{"b": r}, 10, nil)
	for _, o := range res.Outcomes {
		if o.Change == dashboard && (o.Sent != 0 || o.Err != nil) {
			t.Errorf("the dashboard, which needs the failed visualization: %+v", o)
		}
	}
	if slices.Contains(r.sent, "/dashboard") {
		t.Errorf("sent %v: the dashboard was sent after the visualization it needs failed", r.sent)
	}
}

// batcher is a recorder that sends batches: it records each batch as the
// paths of its items' first lines, and fails the items in fail.
type batcher struct {
	recorder
	limit   int
	batches [][]string
}

func (b *batcher) BatchLimit() int { return b.limit }

func (b *batcher) SendBatch(_ context.Context, _ plans.State, items []plans.Request) []error {
	var batch []string
	errs := make([]error, len(items))
	for i, it := range items {
		batch = append(batch, string(it.Body))
		if b.fail[string(it.Body)] {
			errs[i] = &adapter.StatusError{Code: 409, Message: "conflict"}
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
	item := func(name string, action plans.Action, needs ...*plans.Change) *plans.Change {
		c := &plans.Change{Addr: addrs.Addr{Kind: testDocument, Name: name}, Backend: "b", Action: action,
			Requests: []plans.Request{{Method: "POST", Path: "/_bulk", Body: []byte(`"` + name + `"`), Batch: true}}}
		for _, n := range needs {
			c.Needs = append(c.Needs, n.Addr)
		}
		return c
	}
	p1, p2, p3 := item("p1", plans.Create), item("p2", plans.Create), item("p3", plans.Create)
	s1 := item("s1", plans.Create, p1)
	v1, v2 := item("v1", plans.Update, s1), item("v2", plans.Create, p2)
	d1, d2 := item("d1", plans.Delete), item("d2", plans.Delete)
	plain := planstest.Change(testService, "svc", plans.Create, "/svc")
	changes := []*plans.Change{p1, p2, p3, s1, v1, v2, plain, d1, d2}

	b := &batcher{limit: 2}
	res := Apply(context.Background(), &plans.Plan{Changes: changes}, map[string]Sender{"b": b}, 4, nil)
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
	res = Apply(context.Background(), &plans.Plan{Changes: changes}, map[string]Sender{"b": b}, 1, nil)
	outcomes := []string{"done p1 1", "failed p2 0", "done p3 1", "not done s1 0", "not done v1 0", "not done v2 0", "not done svc 0", "not done d1 0", "not done d2 0"}
	if diff := cmp.Diff(outcomes, outcomeWords(res)); diff != "" {
		t.Errorf("outcomes with one item refused (-want +got):\n%s", diff)
	}
	if err := res.Err(); err == nil || !strings.Contains(err.Error(), "document.p2: request 1 of 1 (POST /_bulk): conflict") {
		t.Errorf("Err = %v", err)
	}
}

// TestApplyBatchSteps: a change of two batch items (a document and the
// project's record of it) sends its second in the batch after the one of
// its first, beside the others' second items; a change whose first item
// fails sends no second, and the batch stops there.
func TestApplyBatchSteps(t *testing.T) {
	pair := func(name string) *plans.Change {
		return &plans.Change{Addr: addrs.Addr{Kind: testDocument, Name: name}, Backend: "b", Action: plans.Create,
			Requests: []plans.Request{{Method: "POST", Path: "/_bulk", Body: []byte(`"` + name + `"`), Batch: true},
				{Method: "POST", Path: "/_bulk", Body: []byte(`"` + name + ` record"`), Batch: true}}}
	}
	one := &plans.Change{Addr: addrs.Addr{Kind: testDocument, Name: "r"}, Backend: "b", Action: plans.Update,
		Requests: []plans.Request{{Method: "POST", Path: "/_bulk", Body: []byte(`"r record"`), Batch: true}}}
	changes := []*plans.Change{pair("a"), one, pair("b")}

	b := &batcher{limit: 10}
	var steps []string
	res := Apply(context.Background(), &plans.Plan{Changes: changes}, map[string]Sender{"b": b}, 4, func(e Event) {
		if e.Done {
			steps = append(steps, fmt.Sprintf("%s %d", e.Change.Addr.Name, e.Step))
		}
	})
	if res.Err() != nil || !res.complete() {
		t.Fatalf("apply: %v", res.Err())
	}
	want := [][]string{{`"a"`, `"r record"`, `"b"`}, {`"a record"`, `"b record"`}}
	if diff := cmp.Diff(want, b.batches); diff != "" {
		t.Errorf("batches (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"a 1", "r 1", "b 1", "a 2", "b 2"}, steps); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}

	b = &batcher{limit: 10, recorder: recorder{fail: map[string]bool{`"a"`: true}}}
	res = Apply(context.Background(), &plans.Plan{Changes: changes}, map[string]Sender{"b": b}, 4, nil)
	if diff := cmp.Diff([][]string{{`"a"`, `"r record"`, `"b"`}}, b.batches); diff != "" {
		t.Errorf("batches with the first item refused (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"failed a 0", "done r 1", "not done b 1"}, outcomeWords(res)); diff != "" {
		t.Errorf("outcomes with the first item refused (-want +got):\n%s", diff)
	}
}
