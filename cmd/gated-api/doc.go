// Command gated-api is the seed's token-gated application: it serves the
// protected endpoint /api, the authentication endpoint /auth that a
// reverse proxy (Traefik forwardAuth) asks before it performs a request,
// and /healthz for the Consul check.
//
//   - /auth answers 200 with X-Auth-User: <identity> when the request's
//     X-Auth-Token is accepted, and 401 when it is missing, empty or wrong.
//   - /api checks the token again itself, so calling it around the proxy
//     also gets 401, then answers 200 with a plain-text greeting that names
//     the identity. A client-sent X-Auth-User is never trusted.
//   - /healthz answers 200 "ok".
//
// Tokens are never stored in clear: the token file (-tokens) and the
// GATED_API_TOKENS environment variable hold lines "<identity>
// sha256:<hex of SHA-256 of the token>", and "gated-api hash-token" makes
// such a line from a token read on standard input. Tokens are compared in
// constant time, and neither the access log nor any answer ever holds one.
package main
