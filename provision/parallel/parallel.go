// Package parallel is the repository's one way of running work side by
// side: Do for a bounded number of calls (I/O), All for reads that end
// at the first failure, Spread for work of no I/O split in runs over the
// cores.
package parallel

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
)

// Do calls f(0) ... f(n-1), at most limit at a time, and returns
// when every call has.
func Do(n, limit int, f func(i int)) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, max(limit, 1))
	for i := range n {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			f(i)
		}()
	}
	wg.Wait()
}

// All runs the reads side by side, and returns the error of the one
// that failed first, once all have ended. That one cancels the others,
// so that a refusal is not held back by a sibling waiting out a slow
// server; what the cancellation makes them return is not reported.
func All(ctx context.Context, reads ...func(context.Context) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make([]error, len(reads))
	var first atomic.Int32
	first.Store(-1)
	Do(len(reads), len(reads), func(i int) {
		if errs[i] = reads[i](ctx); errs[i] != nil && first.CompareAndSwap(-1, int32(i)) {
			cancel()
		}
	})
	if i := first.Load(); i >= 0 {
		return errs[i]
	}
	return nil
}

// Spread calls f(0) ... f(n-1) on every core, in as many runs of
// consecutive calls, for work of no I/O (planning, redacting) where a
// goroutine per call would cost more than the call. Runs of fewer than
// 64 calls are not split.
func Spread(n int, f func(i int)) {
	workers := max(1, min(runtime.GOMAXPROCS(0), n/64))
	Do(workers, workers, func(w int) {
		for i := w * n / workers; i < (w+1)*n/workers; i++ {
			f(i)
		}
	})
}
