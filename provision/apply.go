package provision

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/provision-dev/provision/provision/adapter"
	"github.com/provision-dev/provision/provision/addrs"
	"github.com/provision-dev/provision/provision/plans"
)

// Event reports one step of an apply: a request about to be sent
// (Done false) or sent (Done true, Err set on failure).
type Event struct {
	Change  *plans.Change
	Step    int // 1-based index of the request within the change
	Request plans.Request
	Done    bool
	Err     error
	Elapsed time.Duration
	// Wait, in an event that is not Done, is the pause the server asked
	// for (it limits its request rate) before the request is sent again;
	// Err is its answer then.
	Wait time.Duration
}

// sending is the context the request r, step of change c, is sent with:
// ctx's values without its cancellation (adapter.Sending), and each
// pause its server asks for reported.
func sending(ctx context.Context, c *plans.Change, step int, r plans.Request, report func(Event)) context.Context {
	return adapter.Waiting(adapter.Sending(ctx), func(pause time.Duration, why error) {
		report(Event{Change: c, Step: step, Request: r, Wait: pause, Err: why})
	})
}

// Outcome says how far the apply of one change got.
type Outcome struct {
	Change *plans.Change
	Sent   int   // requests sent successfully
	Err    error // the failure of request Sent+1, if any
}

// Complete reports whether every request of the change was sent.
func (o Outcome) Complete() bool { return o.Err == nil && o.Sent == len(o.Change.Requests) }

// Result is the outcome of every change of a plan that has requests, in
// plan order.
type Result struct {
	Outcomes []Outcome
	// Stopped is why the apply stopped before the end without a failed
	// request: the cause of ctx's cancellation (an interrupt, the
	// command's -timeout, ErrLockLost); nil when it ran to the end.
	Stopped error
}

// Err is the first failure, or nil.
func (r Result) Err() error {
	for _, o := range r.Outcomes {
		if o.Err != nil {
			return fmt.Errorf("%s: request %d of %d (%s %s): %w", o.Change.Addr, o.Sent+1, len(o.Change.Requests),
				o.Change.Requests[o.Sent].Method, o.Change.Requests[o.Sent].Path, o.Err)
		}
	}
	return nil
}

// Apply sends the requests of every change: changes run in parallel, at
// most parallelism at a time on each backend (a server: an agent, a
// cluster), in plan order, and the requests of one change in order;
// a change starts once the changes it needs are complete (the plan puts
// them before it), and not at all when one of them is not; deletes start
// once every other change is done. Batch items (Request.Batch) of
// changes that follow one another in the plan, none needing another,
// go as one batch of their backend (Sender.SendBatch); a change made of several items sends
// its second in the batch after the one of its first.
// After the first failure, or once ctx is canceled, no new request is
// started; requests already under way finish within their own deadline
// (they are sent with ctx's values but not its cancellation). progress,
// if not nil, is called from one goroutine at a time.
func Apply(ctx context.Context, p *plans.Plan, backends map[string]Sender, parallelism int, progress func(Event)) Result {
	if parallelism < 1 {
		parallelism = 1
	}
	var (
		mu     sync.Mutex
		failed bool
		res    Result
	)
	report := func(e Event) {
		if progress != nil {
			mu.Lock()
			progress(e)
			mu.Unlock()
		}
	}
	stopped := func() bool {
		mu.Lock()
		defer mu.Unlock()
		return failed || ctx.Err() != nil
	}
	fail := func(o *Outcome, err error) {
		mu.Lock()
		failed = true
		mu.Unlock()
		o.Err = err
	}
	for _, c := range p.Changes {
		if len(c.Requests) > 0 {
			res.Outcomes = append(res.Outcomes, Outcome{Change: c})
		}
	}
	// done[i] is closed when the i-th outcome is final.
	done := make([]chan struct{}, len(res.Outcomes))
	at := make(map[addrs.Addr]int, len(res.Outcomes))
	for i, o := range res.Outcomes {
		done[i] = make(chan struct{})
		at[o.Change.Addr] = i
	}
	// ready waits for what the i-th change needs from before lo, and
	// reports whether all of it is complete.
	ready := func(i, lo int) bool {
		for _, n := range res.Outcomes[i].Change.Needs {
			if j, ok := at[n]; ok && j < lo {
				<-done[j]
				if !res.Outcomes[j].Complete() {
					return false
				}
			}
		}
		return true
	}
	// send sends the changes of outcomes lo to hi: a batch, or one
	// change's requests in order.
	send := func(lo, hi int) {
		if first, _ := batchItem(res.Outcomes[lo], backends); first != nil {
			sendBatch(ctx, p.Live, res.Outcomes[lo:hi], backends, func(i int) bool { return ready(lo+i, lo) }, stopped, report, fail)
			return
		}
		o := &res.Outcomes[lo]
		if !ready(lo, lo) {
			return
		}
		b := backends[o.Change.Backend]
		for step, r := range o.Change.Requests {
			if stopped() {
				return
			}
			report(Event{Change: o.Change, Step: step + 1, Request: r})
			start := time.Now()
			err := b.Send(sending(ctx, o.Change, step+1, r, report), r)
			if err != nil {
				fail(o, err)
			} else {
				o.Sent++
			}
			report(Event{Change: o.Change, Step: step + 1, Request: r, Done: true, Err: err, Elapsed: time.Since(start)})
			if err != nil {
				return
			}
		}
	}
	var jobs []job
	for lo := 0; lo < len(res.Outcomes); {
		hi := batchEnd(res.Outcomes, lo, backends, at)
		jobs = append(jobs, job{lo, hi, res.Outcomes[lo].Change.Backend})
		lo = hi
	}
	// Deletes wait for everything before them: a service moved to another
	// agent is registered there first.
	first := slices.IndexFunc(jobs, func(j job) bool { return res.Outcomes[j.lo].Change.Action == plans.Delete })
	if first < 0 {
		first = len(jobs)
	}
	for _, phase := range [][]job{jobs[:first], jobs[first:]} {
		perServer(phase, parallelism, func(j job) {
			defer func() {
				for i := j.lo; i < j.hi; i++ {
					close(done[i])
				}
			}()
			if !stopped() {
				send(j.lo, j.hi)
			}
		})
	}
	if ctx.Err() != nil && res.Err() == nil && !res.complete() {
		res.Stopped = context.Cause(ctx)
	}
	return res
}

// job is the changes of outcomes lo to hi (a batch, or one change), sent
// to one backend.
type job struct {
	lo, hi  int
	backend string
}

// perServer runs do for each job, in their order for each backend and
// at most parallelism at a time on each, and returns when every call has:
// a server's requests are bounded, not the apply's, so that an estate of
// many agents is written on all of them at once. A job waits for the
// jobs it needs, which come before it in the plan: each backend taking
// its jobs in plan order, the first job not done of the whole plan is
// always taken, and its needs are done, so the waits end.
func perServer(jobs []job, parallelism int, do func(job)) {
	queues := map[string][]job{}
	var order []string
	for _, j := range jobs {
		if _, ok := queues[j.backend]; !ok {
			order = append(order, j.backend)
		}
		queues[j.backend] = append(queues[j.backend], j)
	}
	var wg sync.WaitGroup
	for _, b := range order {
		q := queues[b]
		var next atomic.Int64
		for range min(parallelism, len(q)) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for k := next.Add(1) - 1; k < int64(len(q)); k = next.Add(1) - 1 {
					do(q[k])
				}
			}()
		}
	}
	wg.Wait()
}

// batchItem is the first request of a change whose requests are all
// batch items, and the backend that sends them; nil when the change is
// not one.
func batchItem(o Outcome, backends map[string]Sender) (*plans.Request, Sender) {
	b := backends[o.Change.Backend]
	if b == nil || b.BatchLimit() == 0 || len(o.Change.Requests) == 0 || slices.ContainsFunc(o.Change.Requests, func(r plans.Request) bool { return !r.Batch }) {
		return nil, nil
	}
	return &o.Change.Requests[0], b
}

// batchEnd is the end of the batch that starts at lo: the batch items
// that follow it, of its backend, method and path, and of deletes or not
// as it is, until one needs another of them or the batch is full. It is
// lo+1 when the change at lo is no batch item.
func batchEnd(outcomes []Outcome, lo int, backends map[string]Sender, at map[addrs.Addr]int) int {
	first, b := batchItem(outcomes[lo], backends)
	if first == nil {
		return lo + 1
	}
	hi := lo + 1
	for ; hi < len(outcomes) && hi-lo < b.BatchLimit(); hi++ {
		o := outcomes[hi]
		r, _ := batchItem(o, backends)
		if r == nil || o.Change.Backend != outcomes[lo].Change.Backend || r.Method != first.Method || r.Path != first.Path ||
			(o.Change.Action == plans.Delete) != (outcomes[lo].Change.Action == plans.Delete) ||
			slices.ContainsFunc(o.Change.Needs, func(n addrs.Addr) bool { j, ok := at[n]; return ok && j >= lo }) {
			break
		}
	}
	return hi
}

// sendBatch sends the items of outcomes whose needs are complete as
// batches, one per step: the first request of each, then the second of
// those whose first was done, and so on, as the requests of one change
// are sent in order. An item whose need is not complete is not sent.
func sendBatch(ctx context.Context, live *plans.Live, outcomes []Outcome, backends map[string]Sender, ready func(int) bool, stopped func() bool, report func(Event), fail func(*Outcome, error)) {
	var send []int
	for i := range outcomes {
		if ready(i) {
			send = append(send, i)
		}
	}
	b := backends[outcomes[0].Change.Backend]
	for step := 0; len(send) > 0 && !stopped(); step++ {
		items := make([]plans.Request, len(send))
		for k, i := range send {
			items[k] = outcomes[i].Change.Requests[step]
			report(Event{Change: outcomes[i].Change, Step: step + 1, Request: items[k]})
		}
		start := time.Now()
		first := outcomes[send[0]]
		errs := b.SendBatch(sending(ctx, first.Change, step+1, items[0], report), live.State(first.Change.Backend), items)
		var next []int
		for k, i := range send {
			o := &outcomes[i]
			if errs[k] != nil {
				fail(o, errs[k])
			} else if o.Sent++; o.Sent < len(o.Change.Requests) {
				next = append(next, i)
			}
			report(Event{Change: o.Change, Step: step + 1, Request: items[k], Done: true, Err: errs[k], Elapsed: time.Since(start)})
		}
		send = next
	}
}

func (r Result) complete() bool {
	for _, o := range r.Outcomes {
		if !o.Complete() {
			return false
		}
	}
	return true
}
