// Package provision is the engine: it turns the desired state of package
// schema and the live state that backends read into a Plan of ordered
// changes, each listing the exact HTTP requests it sends, and applies a
// Plan with bounded parallelism.
//
// The engine holds no API client. Each live system (a Consul agent, the
// Consul KV store, a search cluster, a Traefik proxy) is a Backend in a
// sub-package: its Read makes a fixed number of requests and returns
// what they answered as a plain value (a State; all of a run's are one
// Live), and its Plan turns that value and the declarations into changes
// with no I/O. The engine chooses each change's action (Propose, with the
// one ownership rule, Decide); a Writer sends a change's requests; a
// read-only proxy is a Backend that proves (Verifier) and never sends.
// The live state is what a Snapshot records and plan -snapshot plans
// from, and what provision test changes in memory (Converger) to check
// that a plan converges. The plan's JSON form is the one model of a plan:
// the text view is rendered from it, and a saved plan file is that JSON.
package provision
