package adapter

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/provision-dev/provision/provision/parallel"
)

// RawJSON encodes what backends put in a plan: structs, maps and slices of
// JSON values, which always encode. A value that encodes itself
// (json.Marshaler) is taken as it writes itself, compact, without the
// second pass json.Marshal makes over its output.
func RawJSON(v any) json.RawMessage {
	if m, ok := v.(json.Marshaler); ok {
		b, err := m.MarshalJSON()
		if err != nil {
			panic(err)
		}
		return b
	}
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

// DigestList is Digest(items), its elements encoded side by side
// (Spread): the encoding of a list is theirs, joined.
func DigestList[T any](items []T) string {
	if items == nil {
		return Digest(items)
	}
	encoded := make([]json.RawMessage, len(items))
	parallel.Spread(len(items), func(i int) { encoded[i] = RawJSON(items[i]) })
	h := sha256.New()
	h.Write([]byte{'['})
	for i, e := range encoded {
		if i > 0 {
			h.Write([]byte{','})
		}
		h.Write(e)
	}
	h.Write([]byte{']'})
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}
