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
	// past it: a large plan allocates far more than it keeps live.
	// docs/internals/performance.md has the measurements behind both
	// numbers. GOGC and GOMEMLIMIT still win.
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
