package plans

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
)

// Plural is word, with an s unless n is 1: "1 change", "2 changes".
func Plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// Compact is v as one line of JSON, its &, < and > as written.
func Compact(v any) string {
	b, _ := MarshalJSON(v, "")
	return string(b)
}

// MarshalJSON is v as JSON (indented by indent when it is not empty),
// with &, < and > as written, never as \u0026, \u003c and \u003e:
// JSON needs no escape for them, and a Traefik rule reads
// Host(`a`) && Path(`/api`) in a plan as it is sent. The JSON that
// backends put in a plan (json.RawMessage) was written by json.Marshal,
// which escapes them; they are unescaped here too (Unescape).
func MarshalJSON(v any, indent string) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", indent)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return Unescape(bytes.TrimSuffix(buf.Bytes(), []byte("\n"))), nil
}

// Unescape is the JSON b with the escapes json.Marshal writes for &, <
// and > (\u0026, \u003c, \u003e) replaced by the characters, outside an
// escaped backslash; b itself when it holds none.
func Unescape(b []byte) []byte {
	if !bytes.Contains(b, []byte(`\u00`)) {
		return b
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' || i+1 >= len(b) {
			out = append(out, b[i])
			continue
		}
		if b[i+1] == 'u' && i+6 <= len(b) {
			switch string(b[i+2 : i+6]) {
			case "0026", "003c", "003e", "003C", "003E":
				v, _ := strconv.ParseUint(string(b[i+2:i+6]), 16, 8)
				out = append(out, byte(v))
				i += 5
				continue
			}
		}
		out = append(out, b[i], b[i+1]) // an escape of its own: kept whole
		i++
	}
	return out
}

// OrNone is ss joined with commas, or none when there are none.
func OrNone(ss []string, none string) string {
	if len(ss) == 0 {
		return none
	}
	return strings.Join(ss, ", ")
}
