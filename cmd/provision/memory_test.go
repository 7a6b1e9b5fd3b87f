package main

import (
	"math"
	"testing"
	"testing/fstest"
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
