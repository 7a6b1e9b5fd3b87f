// Package adapter is what the backends (provision/consul, provision/search,
// provision/traefik) share: how they call their servers (Call, Send, the
// deadlines and the errors of an answer), the one rule of ownership
// (Decide) and the proposal of a change from an object's declared and
// live forms (Propose), and the digests and strict decoding of JSON. The
// engine uses the sender and the decoder too; nothing here knows a
// backend.
package adapter
