package provision

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
)

// RawJSON encodes what backends put in a plan: structs, maps and slices of
// JSON values, which always encode.
func RawJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // a backend put something that is not JSON in a plan
	}
	return b
}

// Digest is a fingerprint of what a backend read: "sha256:" and the hex
// SHA-256 of its JSON encoding (map keys sorted, so it is stable).
func Digest(v any) string {
	sum := sha256.Sum256(RawJSON(v))
	return "sha256:" + hex.EncodeToString(sum[:])
}
