package plans

import (
	"bytes"
	"encoding/json"
	"sync"
)

// lazy is a value worked out when it is first read: a plan made now
// defers what only some of its readers need (a fingerprint, a no-op's
// sides), and at 100,000 objects that work is a large part of a plan's
// (docs/internals/performance.md). nil reads as T's zero value.
type lazy[T any] func() T

// now is a value already worked out.
func now[T any](v T) lazy[T] { return func() T { return v } }

// whenRead is work's value, worked out once, when first read. work must
// read only what does not change after the plan (a state is never
// changed in place).
func whenRead[T any](work func() T) lazy[T] { return sync.OnceValue(work) }

func (l lazy[T]) get() T {
	if l == nil {
		var zero T
		return zero
	}
	return l()
}

// A View is one side of a change, its Before or its After: the object in
// its backend's terms, as JSON. A plan made now may work it out the first
// time it is read (ViewWhenRead): the text and markdown views never read
// a no-op's sides, and a plan of 100,000 converged services then encodes
// none of them. A plan read from a file holds its views as written. The
// zero View is null.
type View struct {
	json lazy[json.RawMessage]
}

// ViewOf is the view b, as encoded already; nil is the zero View.
func ViewOf(b json.RawMessage) View {
	if b == nil {
		return View{}
	}
	return View{now(b)}
}

// ViewWhenRead is the view work encodes, worked out once, when first read.
func ViewWhenRead(work func() json.RawMessage) View { return View{whenRead(work)} }

// JSON is the view's encoding; nil for the zero View.
func (v View) JSON() json.RawMessage { return v.json.get() }

// Equal reports whether v and w encode the same bytes.
func (v View) Equal(w View) bool { return bytes.Equal(v.JSON(), w.JSON()) }

// MarshalJSON writes the view as it is encoded, null for none.
func (v View) MarshalJSON() ([]byte, error) {
	if b := v.JSON(); b != nil {
		return b, nil
	}
	return []byte("null"), nil
}

// UnmarshalJSON holds a copy of b, as json.RawMessage does.
func (v *View) UnmarshalJSON(b []byte) error {
	*v = ViewOf(bytes.Clone(b))
	return nil
}
