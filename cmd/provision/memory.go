package main

import (
	"bufio"
	"io/fs"
	"math"
	"strconv"
	"strings"
)

// memoryLimit is the default soft memory limit (GOMEMLIMIT): three
// quarters of the memory the process may use, the least of the cgroup's
// limit (v2 memory.max, v1 memory.limit_in_bytes) and the machine's
// (MemTotal); no limit when none can be read. The limit only keeps a
// large plan inside its runner: the collector works harder near it, so a
// fixed limit below what a large estate keeps live (at 100,000 services
// the heap holds about a gigabyte) makes the collector run without pause,
// and a plan far slower than its size says. docs/internals/performance.md
// has the measurements.
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
