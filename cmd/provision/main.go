// Command provision reads HCL specs, diffs them against a live Consul agent
// and search cluster, prints the exact requests it would send, and sends
// them. Run "provision -help" for the commands.
package main

import "os"

func main() {
	os.Exit(newCLI(os.Stdin, os.Stdout, os.Stderr).run(os.Args[1:]))
}
