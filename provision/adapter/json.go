package adapter

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"maps"
	"runtime"
	"slices"

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
// (Spread) digestRun at a time: the encoding of a list is theirs,
// joined, and only a run's is held at once (all of 100,000 services'
// were 85 MB).
func DigestList[T any](items []T) string {
	if items == nil {
		return Digest(items)
	}
	encoded := make([]json.RawMessage, min(len(items), digestRun))
	h := sha256.New()
	h.Write([]byte{'['})
	for start := 0; start < len(items); start += digestRun {
		run := items[start:min(start+digestRun, len(items))]
		parallel.Spread(len(run), func(i int) { encoded[i] = RawJSON(run[i]) })
		for i, e := range encoded[:len(run)] {
			if start+i > 0 {
				h.Write([]byte{','})
			}
			h.Write(e)
		}
	}
	h.Write([]byte{']'})
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// digestRun is how many elements DigestList encodes at a time.
const digestRun = 4096

// DecodeObject decodes body, one JSON object, into a map as json.Unmarshal
// does (a key given twice: the last value). A large object is cut between
// its members and the runs decoded side by side: an agent's 10,000
// services are 5 to 14 MB of JSON, written only once whole (a Consul
// agent marshals its answer before it sends a byte), and their decode on
// one core was half of a converged plan's read. Anything the cut does not
// vouch for, and any error, is decoded whole, so that the error is
// json.Unmarshal's own.
func DecodeObject[V any](body []byte) (map[string]V, error) {
	return decodeObject[V](body, min(runtime.GOMAXPROCS(0), len(body)/objectRunBytes))
}

// decodeObject is DecodeObject in n runs.
func decodeObject[V any](body []byte, n int) (map[string]V, error) {
	runs := objectRuns(body, n)
	if runs == nil {
		var m map[string]V
		return m, json.Unmarshal(body, &m)
	}
	parts := make([]map[string]V, len(runs))
	failed := make([]bool, len(runs))
	parallel.Do(len(runs), len(runs), func(i int) { failed[i] = json.Unmarshal(runs[i], &parts[i]) != nil })
	if slices.Contains(failed, true) {
		var m map[string]V
		return m, json.Unmarshal(body, &m)
	}
	m := make(map[string]V, len(runs)*len(parts[0]))
	for _, p := range parts {
		maps.Copy(m, p)
	}
	return m, nil
}

// objectRunBytes is the least a run of DecodeObject decodes.
const objectRunBytes = 1 << 20

// objectRuns cuts body, one JSON object, into n objects of about the same
// size holding its members in order; nil when n < 2, or when body is not
// an object (DecodeObject then decodes it whole). It reads only up to its
// last cut: whatever it cuts, runs that each decode as an object of one
// member or more are, joined, the whole, and any other cut makes a run
// that does not decode (a comma inside a string or a nested value leaves
// the run's string or brackets open).
func objectRuns(body []byte, n int) [][]byte {
	trimmed := bytes.TrimSpace(body)
	if n < 2 || len(trimmed) < 2 || trimmed[0] != '{' || trimmed[len(trimmed)-1] != '}' {
		return nil
	}
	open := len(body) - len(bytes.TrimLeft(body, " \t\r\n"))
	end := open + len(trimmed) - 1
	var runs [][]byte
	from := open + 1
	// run ends a run at to; false when it would hold no member (a
	// comma too many, which the whole refuses and a run would not).
	run := func(to int) bool {
		if len(bytes.TrimSpace(body[from:to])) == 0 {
			return false
		}
		r := make([]byte, 0, to-from+2)
		runs = append(runs, append(append(append(r, '{'), body[from:to]...), '}'))
		from = to + 1
		return true
	}
	depth := 0
	for i := open; i < end && len(runs) < n-1; i++ {
		switch body[i] {
		case '"':
			i = stringEnd(body, i+1)
		case '{', '[':
			depth++
		case '}', ']':
			depth--
		case ',':
			if depth == 1 && i >= (len(runs)+1)*len(body)/n && !run(i) {
				return nil
			}
		}
	}
	if len(runs) < n-1 || !run(end) {
		return nil
	}
	return runs
}

// stringEnd is the index of the quote that ends the JSON string whose
// text starts at i (len(b) when it does not end).
func stringEnd(b []byte, i int) int {
	for {
		q := bytes.IndexByte(b[i:], '"')
		if q < 0 {
			return len(b)
		}
		i += q
		escapes := 0
		for j := i - 1; j >= 0 && b[j] == '\\'; j-- {
			escapes++
		}
		if escapes%2 == 0 {
			return i
		}
		i++
	}
}
