// Package adapter is what the backends (provision/consul, provision/search,
// provision/traefik) share: how they call their servers (Call, Send, the
// deadlines and the errors of an answer), the one rule of ownership
// (Decide) and the proposal of a change from an object's declared and
// live forms (Propose), and the digests of JSON. The engine uses the
// sender too; nothing here knows a backend.
package adapter
