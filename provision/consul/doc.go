// Package consul is the service kind and the backend for a Consul agent's
// services: it makes the kind (Service, ServiceBlock) and decodes its
// block (Decl, a service as Consul's own definition files write it too),
// turns declared services into agent service registrations whose tags
// configure a Traefik reverse proxy, reads what is live as a value
// (agentState), plans from it, and sends the register and deregister
// requests of a plan. It follows the agent with blocking queries, and says which ACL
// permissions a project needs (Permissions).
//
// The other roles of Consul are packages of their own, each on the same
// client of an agent (client): the KV store's keys (kv), the cluster's
// coordination (cluster: the lock, the record, the watchers' election),
// and the ACL checks and policy (acl).
//
// It reads an agent with two requests side by side (GET
// /v1/agent/services and /v1/agent/checks) whatever the number of
// services; it compares only what a declaration says (Consul fills in
// TaggedAddresses, Weights and more), and only ever changes or removes
// registrations whose meta marks them as the project's own.
package consul
