// Command provision reads HCL specs, diffs them against a live Consul agent
// and search cluster, prints the exact requests it would send, and sends
// them. Run "provision -help" for the commands.
package main

import (
	"os"
	"runtime/debug"
)

func main() {
	if os.Getenv("GOMEMLIMIT") == "" {
		// A soft limit: the collector works harder near it rather than
		// let the heap double past it. A plan of 10,000 services peaks at
		// about 130 MB with it and 175 MB without, in the same time.
		debug.SetMemoryLimit(memoryLimit)
	}
	os.Exit(newCLI(os.Stdin, os.Stdout, os.Stderr).run(os.Args[1:]))
}

// memoryLimit is the default GOMEMLIMIT.
const memoryLimit = 120 << 20
