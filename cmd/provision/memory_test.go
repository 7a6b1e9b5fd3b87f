package main

import (
	"math"
	"runtime"
	"runtime/debug"
	runtimemetrics "runtime/metrics"
	"testing"
	"testing/fstest"
	"time"
)

// TestMemoryLimit: the default soft limit is three quarters of the least
// of the cgroup's limit and the machine's memory; "max" (no cgroup limit)
// and v1's "no limit" (a page short of 2^63) leave the machine's; nothing
// readable, no limit.
func TestMemoryLimit(t *testing.T) {
	meminfo := "MemTotal:        2048000 kB\nMemFree:          100000 kB\n"
	for _, tt := range []struct {
		name  string
		files fstest.MapFS
		want  int64
	}{
		{"machine only", fstest.MapFS{"proc/meminfo": {Data: []byte(meminfo)}}, 2048000 << 10 / 4 * 3},
		{"cgroup v2 below the machine", fstest.MapFS{"proc/meminfo": {Data: []byte(meminfo)}, "sys/fs/cgroup/memory.max": {Data: []byte("1073741824\n")}}, 1 << 30 / 4 * 3},
		{"cgroup v2 without a limit", fstest.MapFS{"proc/meminfo": {Data: []byte(meminfo)}, "sys/fs/cgroup/memory.max": {Data: []byte("max\n")}}, 2048000 << 10 / 4 * 3},
		{"cgroup v1 without a limit", fstest.MapFS{"proc/meminfo": {Data: []byte(meminfo)}, "sys/fs/cgroup/memory/memory.limit_in_bytes": {Data: []byte("9223372036854771712\n")}}, 2048000 << 10 / 4 * 3},
		{"cgroup v1 limit", fstest.MapFS{"sys/fs/cgroup/memory/memory.limit_in_bytes": {Data: []byte("2147483648\n")}}, 2 << 30 / 4 * 3},
		{"nothing readable", fstest.MapFS{}, math.MaxInt64},
	} {
		if got := memoryLimit(tt.files); got != tt.want {
			t.Errorf("%s: %d, want %d", tt.name, got, tt.want)
		}
	}
}

// TestFollowHeap: with the limit following the heap, the collector is
// free below the ceiling (a small live heap is collected as GOGC=400
// says, far less often than at GOGC=100) and does not thrash above it (a
// live heap of twice the ceiling is collected about once per live
// heap's worth of allocation, where a fixed limit at the ceiling would
// collect without pause). Collections are counted, not timed.
func TestFollowHeap(t *testing.T) {
	const ceiling = 64 << 20
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	for _, c := range []struct {
		name string
		live int
		// per is how much is allocated between collections, per byte
		// live: GOGC=400 below the ceiling, twice the live heap (as
		// GOGC=100) above it.
		per float64
	}{
		{"below the ceiling", 8 << 20, 4},
		{"above it", 128 << 20, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			stop := followHeap(ceiling, math.MaxInt64)
			defer stop()
			live := make([][]byte, c.live>>16)
			for i := range live {
				live[i] = make([]byte, 64<<10)
			}
			runtime.GC()
			// The limit is set after the collection, by a finalizer: above
			// the ceiling, wait until it has followed the live heap.
			for deadline := time.Now().Add(10 * time.Second); c.live > ceiling && debug.SetMemoryLimit(-1) <= ceiling && time.Now().Before(deadline); {
				time.Sleep(time.Millisecond)
			}
			// What else the test binary keeps live (earlier tests' fixtures)
			// counts too: the expected number is the measured heap's.
			heap := []runtimemetrics.Sample{{Name: "/gc/heap/live:bytes"}}
			runtimemetrics.Read(heap)
			want := float64(1<<30) / (c.per * float64(heap[0].Value.Uint64()))
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			for range (1 << 30) >> 16 {
				garbage = make([]byte, 64<<10)
			}
			runtime.ReadMemStats(&after)
			runtime.KeepAlive(live)
			if n := float64(after.NumGC - before.NumGC); n > 2*want+1 || n < want/2 {
				t.Errorf("%.0f collections while 1 GiB was allocated over %d MiB live, want about %.0f", n, heap[0].Value.Uint64()>>20, want)
			}
		})
	}
}

// garbage is where TestFollowHeap drops what it allocates, so that the
// compiler keeps each allocation.
var garbage []byte
