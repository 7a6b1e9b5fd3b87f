package plans

import "encoding/json"

// A Fingerprint digests the live state a plan was made from, so that a
// saved plan is refused once the state no longer matches. A plan made
// now works it out the first time it is read: a plan that is only shown
// never reads it, and at 100,000 services its encoding is a twentieth of
// a plan's work (docs/internals/performance.md). A plan read from a file
// holds it as written. The zero Fingerprint is "".
type Fingerprint struct {
	digest lazy[string]
}

// Digested is the fingerprint digest, as worked out already.
func Digested(digest string) Fingerprint {
	return Fingerprint{now(digest)}
}

// DigestWhenRead is the fingerprint that work returns, worked out once,
// when it is first read. work must read only what does not change after
// the plan (a state is never changed in place).
func DigestWhenRead(work func() string) Fingerprint {
	return Fingerprint{whenRead(work)}
}

// String is the digest: "sha256:" and its hex, or "" for none.
func (f Fingerprint) String() string { return f.digest.get() }

// Equal reports whether f and g are the same digest.
func (f Fingerprint) Equal(g Fingerprint) bool { return f.String() == g.String() }

// MarshalJSON writes the digest as a JSON string.
func (f Fingerprint) MarshalJSON() ([]byte, error) { return json.Marshal(f.String()) }

// UnmarshalJSON reads a digest written by MarshalJSON.
func (f *Fingerprint) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	*f = Digested(s)
	return nil
}
