// Command provision reads HCL specs, diffs them against a live Consul agent
// and search cluster, prints the exact requests it would send, and sends
// them. Run "provision -help" for the commands.
package main

import (
	"os"
	"runtime/debug"

	"github.com/provision-dev/provision/provision/cli"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	// The collector runs less often than Go's default (GOGC=100): a large
	// plan allocates far more than it keeps live, and a CLI ends soon.
	// The soft limit lets the heap grow so up to heapCeiling, then
	// follows it (followHeap), never above the memory the process may
	// use (memoryLimit). GOGC and GOMEMLIMIT still win;
	// docs/internals/performance.md has the measurements.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		followHeap(heapCeiling, memoryLimit(os.DirFS("/")))
	}
	os.Exit(cli.Run(options(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
