// Command provision reads HCL specs, diffs them against a live Consul agent
// and search cluster, prints the exact requests it would send, and sends
// them. Run "provision -help" for the commands.
package main

import (
	"os"
	"runtime/debug"
)

func main() {
	// The collector runs less often than Go's default (GOGC=100) and
	// works harder near a soft limit instead of letting the heap grow
	// past it. The limit is a trade: a plan of 10,000 services keeps
	// about 70 MB of syntax live while it loads, and allocates 600 MB in
	// all. On 2026-11-26 it took 2.1 s of wall time, 2.7 s of CPU and
	// peaked at 136 MB under a 120 MiB limit, the collector a quarter of
	// the CPU; 1.85 s, 2.2 s and 216 MB under 200 MiB; 1.7 s, 1.9 s and
	// 300 MB under 320 MiB (each the middle of four runs). A plan of
	// 1,000 services peaks at 50 MB whatever the limit. GOGC and
	// GOMEMLIMIT still win.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(memoryLimit)
	}
	os.Exit(newCLI(os.Stdin, os.Stdout, os.Stderr).run(os.Args[1:]))
}

// memoryLimit is the default GOMEMLIMIT.
const memoryLimit = 192 << 20
