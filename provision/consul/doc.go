// Package consul is the backend for a Consul agent: it turns declared
// services into agent service registrations whose tags configure a Traefik
// reverse proxy, diffs them against the agent's live services, and sends
// the register and deregister requests of a plan.
//
// It reads the agent with one request (GET /v1/agent/services) whatever the
// number of services, compares only what a declaration says (Consul fills
// in TaggedAddresses, Weights and more), and only ever changes or removes
// registrations whose meta marks them as the project's own.
package consul
