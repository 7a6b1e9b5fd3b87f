package main

import (
	"bufio"
	"io/fs"
	"math"
	"runtime"
	"runtime/debug"
	runtimemetrics "runtime/metrics"
	"strconv"
	"strings"
	"sync/atomic"
)

// memoryLimit is the default soft memory limit (GOMEMLIMIT): three
// quarters of the memory the process may use, the least of the cgroup's
// limit (v2 memory.max, v1 memory.limit_in_bytes) and the machine's
// (MemTotal); no limit when none can be read. It only keeps a large plan
// inside its runner: the collector works harder near a limit, so one
// fixed below what a large estate keeps live makes the collector run
// without pause, and a plan far slower than its size says (followHeap
// keeps the limit above it). docs/internals/performance.md has the
// measurements.
func memoryLimit(root fs.FS) int64 {
	limit := int64(math.MaxInt64)
	for _, f := range []string{"sys/fs/cgroup/memory.max", "sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		if b, err := fs.ReadFile(root, f); err == nil {
			if n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && n > 0 {
				limit = min(limit, n)
			}
		}
	}
	if f, err := root.Open("proc/meminfo"); err == nil {
		defer f.Close()
		s := bufio.NewScanner(f)
		for s.Scan() {
			if v, ok := strings.CutPrefix(s.Text(), "MemTotal:"); ok {
				if kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64); err == nil && kb > 0 {
					limit = min(limit, kb<<10)
				}
			}
		}
	}
	if limit == math.MaxInt64 {
		return limit
	}
	return limit / 4 * 3
}

// heapCeiling is how large the heap may grow before the collector runs
// more often than GOGC says, so that a large estate's plan stays under
// 1 GiB where it can; docs/internals/performance.md has the
// measurements.
const heapCeiling = 896 << 20

// followHeap keeps the soft memory limit at the larger of ceiling and
// twice the live heap, never above most (memoryLimit), set again after
// every collection. Below the ceiling the collector runs as GOGC says,
// free; above it, each collection still frees at least as much as is
// live, as GOGC=100 would, so a larger estate costs in proportion to its
// size and never thrashes against a fixed limit. It returns the
// function that stops following.
func followHeap(ceiling, most int64) (stop func()) {
	live := []runtimemetrics.Sample{{Name: "/gc/heap/live:bytes"}}
	follow := func() {
		runtimemetrics.Read(live)
		debug.SetMemoryLimit(min(most, max(ceiling, 2*int64(live[0].Value.Uint64()))))
	}
	follow()
	return afterEveryGC(follow)
}

// sentinel is an object only a finalizer holds: it becomes garbage at
// every collection (not tiny, so that the allocator does not batch it
// with others, which delays its finalizer).
type sentinel struct {
	_ *byte
	_ [16]byte
}

// afterEveryGC calls f after each collection, from the finalizer
// goroutine, until stop is called.
func afterEveryGC(f func()) (stop func()) {
	var stopped atomic.Bool
	var again func(*sentinel)
	again = func(s *sentinel) {
		if stopped.Load() {
			return
		}
		f()
		runtime.SetFinalizer(s, again)
	}
	runtime.SetFinalizer(&sentinel{}, again)
	return func() { stopped.Store(true) }
}
