// Package traefik is the backend for a live Traefik proxy that reads the
// Consul catalog provision writes to. What it proves of the services it
// takes through Routes, which the service kind provides (consul.Routes):
// it names no kind. It never writes (it is a
// provision.Backend that sends nothing): its Read reads the proxy's API (its
// routers, middlewares and entrypoints) into a value, from which its Plan
// says how each path of every gated frontend is served now; after an apply it waits until the proxy serves each one through
// the frontend's forward-auth middleware and by no other router, then
// proves it with requests at the entrypoint, without a token and with a
// wrong one, each of which must get the auth endpoint's refusal.
//
// It reads the API of Traefik 2 and 3 (GET /api/http/routers,
// /api/http/middlewares, /api/entrypoints), as 2.11.10 and 3.6.0 answer
// (Traefik's API reference, doc.traefik.io/traefik/operations/api/).
package traefik
