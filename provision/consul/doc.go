// Package consul is the backend for a Consul agent and for the Consul KV
// store: it turns declared services into agent service registrations
// whose tags configure a Traefik reverse proxy, and declared keys into KV
// entries, reads what is live as a value (agentState, kvState), plans from
// it, and sends the register, deregister and check-and-set requests of a
// plan. It also holds the project's lock and record, takes part in a
// watcher's election, and follows the agent and the keys' folders with
// blocking queries.
//
// It reads an agent with two requests side by side (GET
// /v1/agent/services and /v1/agent/checks) whatever the number of
// services, and the keys with one recursive GET per folder; it compares
// only what a declaration says (Consul fills in TaggedAddresses, Weights
// and more), and only ever changes or removes registrations whose meta,
// and keys whose flags, mark them as the project's own.
package consul
