// Package provision is the engine: it turns the desired state of package
// schema and the live state that backends read into a plans.Plan of
// ordered changes, each listing the exact HTTP requests it sends, and
// applies a plan with bounded parallelism.
//
// The engine holds no API client. Each live system (a Consul agent, the
// Consul KV store, a search cluster, a Traefik proxy) is a Backend in a
// sub-package: its Read makes a fixed number of requests and returns
// what they answered as a plain value (a plans.State; all of a run's are
// one plans.Live), and its Plan turns that value and the declarations
// into changes with no I/O, each action chosen by the one ownership rule
// (adapter.Decide, adapter.Propose). Backend, in backend.go, is the
// whole contract: every backend has every method, and one it lacks
// answers "none" (NoCapabilities); a read-only proxy sends nothing and
// proves (Verify). The live state is what a Snapshot records and plan
// -snapshot plans from, and what provision test changes in memory
// (Converge) to check that a plan converges. The model of a plan is package plans; its views
// are the command layer's (provision/cli/render), which no package of the
// engine imports (provision test is given the text rendering).
package provision
