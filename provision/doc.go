// Package provision is the engine: it turns the desired state of package
// schema and the live state that backends read into a Plan of ordered
// changes, each listing the exact HTTP requests it sends, and applies a
// Plan with bounded parallelism.
//
// The engine holds no API client. Each live system (a Consul agent, a
// search cluster) is a Backend in a sub-package, which reads its live state
// in a fixed number of requests, diffs it, and sends the requests of a
// change. The plan's JSON form is the one model of a plan: the text view is
// rendered from it, and a saved plan file is that JSON.
package provision
