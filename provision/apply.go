package provision

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Event reports one step of an apply: a request about to be sent
// (Done false) or sent (Done true, Err set on failure).
type Event struct {
	Change  *Change
	Step    int // 1-based index of the request within the change
	Request Request
	Done    bool
	Err     error
	Elapsed time.Duration
}

// Outcome says how far the apply of one change got.
type Outcome struct {
	Change *Change
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
// most parallelism at a time, and the requests of one change in order;
// a change starts once the changes it needs are complete (the plan puts
// them before it), and not at all when one of them is not; deletes start
// once every other change is done.
// After the first failure, or once ctx is canceled, no new request is
// started; requests already under way finish within their own deadline
// (they are sent with ctx's values but not its cancellation). progress,
// if not nil, is called from one goroutine at a time.
func Apply(ctx context.Context, p *Plan, backends map[string]Backend, parallelism int, progress func(Event)) Result {
	if parallelism < 1 {
		parallelism = 1
	}
	var (
		mu     sync.Mutex
		failed bool
		wg     sync.WaitGroup
		sem    = make(chan struct{}, parallelism)
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
	for _, c := range p.Changes {
		if len(c.Requests) > 0 {
			res.Outcomes = append(res.Outcomes, Outcome{Change: c})
		}
	}
	// done[i] is closed when the i-th outcome is final.
	done := make([]chan struct{}, len(res.Outcomes))
	at := make(map[Addr]int, len(res.Outcomes))
	for i, o := range res.Outcomes {
		done[i] = make(chan struct{})
		at[o.Change.Addr] = i
	}
	deleting := false
	for i := range res.Outcomes {
		o := &res.Outcomes[i]
		if o.Change.Action == Delete && !deleting {
			// Deletes wait for everything before them: a service moved
			// to another agent is registered there first.
			wg.Wait()
			deleting = true
		}
		sem <- struct{}{}
		if stopped() {
			<-sem
			break
		}
		wg.Add(1)
		go func() {
			defer func() { <-sem; close(done[i]); wg.Done() }()
			for _, n := range o.Change.Needs {
				if j, ok := at[n]; ok && j < i {
					<-done[j]
					if !res.Outcomes[j].Complete() {
						return
					}
				}
			}
			b := backends[o.Change.Backend]
			for step, r := range o.Change.Requests {
				if stopped() {
					return
				}
				report(Event{Change: o.Change, Step: step + 1, Request: r})
				start := time.Now()
				err := b.Send(Sending(ctx), r)
				if err != nil {
					mu.Lock()
					failed = true
					mu.Unlock()
					o.Err = err
				} else {
					o.Sent++
				}
				report(Event{Change: o.Change, Step: step + 1, Request: r, Done: true, Err: err, Elapsed: time.Since(start)})
				if err != nil {
					return
				}
			}
		}()
	}
	wg.Wait()
	if ctx.Err() != nil && res.Err() == nil && !res.complete() {
		res.Stopped = context.Cause(ctx)
	}
	return res
}

func (r Result) complete() bool {
	for _, o := range r.Outcomes {
		if !o.Complete() {
			return false
		}
	}
	return true
}
