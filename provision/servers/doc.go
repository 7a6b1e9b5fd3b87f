// Package servers starts and stops real servers on free loopback ports for
// the tests and the demo: Consul dev agents, Elasticsearch 2.4.1 member
// clusters and a tribe node joined to them, and Traefik 2. The servers are
// installed into a cache outside the repository by .ci/install-servers.
package servers
