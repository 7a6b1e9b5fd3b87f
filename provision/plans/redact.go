package plans

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"math/bits"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/provision-dev/provision/provision/parallel"
	"github.com/provision-dev/provision/schema"
)

// sensitiveKey matches the object keys whose values are never shown:
// secrets have no place in Consul meta or a mapping, but if one is put
// there it still stays out of plans printed to a terminal or a log.
var sensitiveKey = schema.SensitiveKey

// Redacted is the printable and savable form of the plan: a copy in which
// the value of every sensitive key in Before, After and request bodies and
// headers, and every secret (the values of sensitive variables, wherever
// they occur), is replaced by "(sensitive)". A saved plan file is this
// form too: applying it plans again and sends the requests of the fresh
// plan once their redacted forms match, so no secret is ever written.
func (p *Plan) Redacted() *Plan {
	q := *p
	q.Secrets = nil
	red := Redactor(p.Secrets)
	plain := longestFirst(p.Secrets)
	str := func(s string) string { return HideSecrets(s, plain) }
	q.Changes = make([]*Change, len(p.Changes))
	parallel.Spread(len(p.Changes), func(i int) {
		c := p.Changes[i]
		d := *c
		after := c.After.JSON()
		d.After = ViewOf(red(after))
		if before := maskBefore(c.Before.JSON(), after, p.Secrets); sameBytes(before, after) {
			d.Before = d.After // a no-op: one value for both sides
		} else {
			d.Before = ViewOf(red(before))
		}
		d.Reason = str(c.Reason)
		d.Notes = make([]string, len(c.Notes))
		for j, n := range c.Notes {
			d.Notes[j] = str(n)
		}
		d.Requests = make([]Request, len(c.Requests))
		for j, r := range c.Requests {
			r.Body = red(r.Body)
			r.Path = str(r.Path)
			if len(r.Header) > 0 {
				h := map[string]string{}
				for k, v := range r.Header {
					if sensitiveKey.MatchString(k) {
						v = "(sensitive)"
					}
					h[k] = str(v)
				}
				r.Header = h
			}
			d.Requests[j] = r
		}
		q.Changes[i] = &d
	})
	q.Diagnostics = make([]Diagnostic, len(p.Diagnostics))
	for i, d := range p.Diagnostics {
		d.Summary, d.Detail = str(d.Summary), str(d.Detail)
		q.Diagnostics[i] = d
	}
	if len(p.Variables) > 0 {
		// A variable whose value holds a secret (or a credential's key)
		// is left out: apply PLANFILE is given it again.
		q.Variables = make(map[string]Variable, len(p.Variables))
		for name, v := range p.Variables {
			if len(v.Value) == 0 || sameJSON(red(v.Value), v.Value) {
				q.Variables[name] = v
			}
		}
	}
	return &q
}

// sameJSON reports whether a and b are the same JSON value.
func sameJSON(a, b json.RawMessage) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}

// sameBytes reports whether a and b are the same bytes in memory.
func sameBytes(a, b []byte) bool {
	return len(a) > 0 && len(a) == len(b) && &a[0] == &b[0]
}

// maskBefore hides in before (the live object) every value that sits where
// after (the declaration) holds a secret: a sensitive value that changes
// is hidden on both sides, as in Terraform.
func maskBefore(before, after json.RawMessage, secrets []string) json.RawMessage {
	if len(secrets) == 0 || len(before) == 0 || len(after) == 0 {
		return before
	}
	var b, a any
	if json.Unmarshal(before, &b) != nil || json.Unmarshal(after, &a) != nil || !maskLike(&b, a, secrets) {
		return before
	}
	out, _ := json.Marshal(b)
	return out
}

// maskLike walks b and a side by side and replaces the leaves of b whose
// counterpart in a holds a secret. It reports whether it replaced any.
func maskLike(b *any, a any, secrets []string) bool {
	switch at := a.(type) {
	case string:
		if HideSecrets(at, secrets) != at {
			*b = "(sensitive)"
			return true
		}
	case map[string]any:
		bm, ok := (*b).(map[string]any)
		changed := false
		for k, av := range at {
			if bv, in := bm[k]; ok && in && maskLike(&bv, av, secrets) {
				bm[k], changed = bv, true
			}
		}
		return changed
	case []any:
		bl, ok := (*b).([]any)
		changed := false
		for i := range at {
			if ok && i < len(bl) && maskLike(&bl[i], at[i], secrets) {
				changed = true
			}
		}
		return changed
	}
	return false
}

// Redactor is a plan's redaction of a JSON value, for a state recorded
// beside a plan (a snapshot): the value of every sensitive key, and every
// one of secrets wherever it occurs, become "(sensitive)". Raw JSON that
// holds neither is returned as it is.
func Redactor(secrets []string) func(json.RawMessage) json.RawMessage {
	var encoded [][]byte
	for _, s := range longestFirst(secrets) {
		if b, _ := json.Marshal(s); len(b) > 2 {
			encoded = append(encoded, b[1:len(b)-1])
		}
	}
	if len(encoded) == 0 {
		return func(raw json.RawMessage) json.RawMessage { return redactJSON(raw) }
	}
	return func(raw json.RawMessage) json.RawMessage {
		return hideBase64(hideSecrets(redactJSON(raw), encoded), secrets)
	}
}

// base64String is a JSON string that may be base64: Consul's KV values in
// a transaction (PUT /v1/txn) are, and a secret must not show there in
// its encoded form either.
var base64String = regexp.MustCompile(`"([A-Za-z0-9+/]{4,}={0,2})"`)

// hideBase64 replaces, in b, every JSON string that is the base64 of a
// text holding one of secrets.
func hideBase64(b []byte, secrets []string) []byte {
	return base64String.ReplaceAllFunc(b, func(m []byte) []byte {
		text, err := base64.StdEncoding.DecodeString(string(m[1 : len(m)-1]))
		if err != nil || HideSecrets(string(text), secrets) == string(text) {
			return m
		}
		return []byte(`"(sensitive)"`)
	})
}

// longestFirst is a copy of secrets, longest first, so that a secret
// inside another never leaves the rest of the longer one in view.
func longestFirst(secrets []string) []string {
	out := slices.Clone(secrets)
	slices.SortFunc(out, func(a, b string) int { return len(b) - len(a) })
	return out
}

// hideSecrets replaces every occurrence of a secret (JSON-encoded, without
// its quotes) in b.
func hideSecrets(b []byte, secrets [][]byte) []byte {
	for _, s := range secrets {
		if bytes.Contains(b, s) {
			b = bytes.ReplaceAll(b, s, []byte("(sensitive)"))
		}
	}
	return b
}

// HideSecrets replaces every secret in s, longest first, for text that is
// not JSON (diagnostics, errors, paths).
func HideSecrets(s string, secrets []string) string {
	for _, secret := range longestFirst(secrets) {
		if secret != "" {
			s = strings.ReplaceAll(s, secret, "(sensitive)")
		}
	}
	return s
}

// redactJSON returns raw itself when it holds nothing sensitive, so that
// printed bodies keep the exact bytes that are sent. Only raw text that
// names a sensitive key somewhere (or escapes a character, which could
// hide one) is decoded and walked: a plan of 10,000 objects has 20,000
// values to show.
func redactJSON(raw json.RawMessage) json.RawMessage {
	if !mayNameSensitiveKey(raw) {
		return raw
	}
	var v any
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil || !redactValue(v) {
		return raw
	}
	b, _ := json.Marshal(v)
	return b
}

// sensitiveWords are lowercase substrings of every key sensitiveKey
// matches.
var sensitiveWords = [][]byte{[]byte("token"), []byte("secret"), []byte("passw"), []byte("apikey"), []byte("api_key"), []byte("api-key"), []byte("credential"), []byte("authorization")}

// startsWord is, for each byte, the sensitiveWords that start with it in
// either case, one bit each.
var startsWord = func() (t [256]uint16) {
	if len(sensitiveWords) > 16 {
		panic("startsWord holds 16 sensitive words")
	}
	for i, w := range sensitiveWords {
		t[w[0]] |= 1 << i
		t[w[0]-'a'+'A'] |= 1 << i
	}
	return t
}()

// mayNameSensitiveKey reports whether raw could hold a key sensitiveKey
// matches: it holds one of sensitiveWords in any case, or an escape,
// which could spell one. It is a plain scan, far cheaper than the
// regular expression or decoding: a byte no word starts with costs one
// look in a table.
func mayNameSensitiveKey(raw []byte) bool {
	if bytes.Contains(raw, []byte(`\u`)) {
		return true
	}
	for i, c := range raw {
		for words := startsWord[c]; words != 0; words &= words - 1 {
			w := sensitiveWords[bits.TrailingZeros16(words)]
			if len(raw)-i >= len(w) && foldEqual(raw[i:i+len(w)], w) {
				return true
			}
		}
	}
	return false
}

// lower is c in lower case, for ASCII letters.
func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// foldEqual reports whether b is w (lowercase) in any case.
func foldEqual(b, w []byte) bool {
	for i := range w {
		if lower(b[i]) != w[i] {
			return false
		}
	}
	return true
}

// redactValue replaces sensitive values in place and reports whether it did.
// Under a sensitive key, an object or a list keeps its shape and its
// strings are hidden (a snapshot's KV entry at apps/edge/token still
// reads back as an entry); a scalar is hidden whole.
func redactValue(v any) bool {
	changed := false
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			switch {
			case !sensitiveKey.MatchString(k):
				changed = redactValue(e) || changed
			case isScalar(e):
				t[k] = "(sensitive)"
				changed = true
			default:
				changed = hideStrings(e) || changed
			}
		}
	case []any:
		for _, e := range t {
			if redactValue(e) {
				changed = true
			}
		}
	}
	return changed
}

func isScalar(v any) bool {
	switch v.(type) {
	case map[string]any, []any:
		return false
	}
	return true
}

// hideStrings replaces every string inside v, an object or a list, in
// place, and reports whether there was one.
func hideStrings(v any) bool {
	changed := false
	hide := func(e any) any {
		if _, ok := e.(string); ok {
			changed = true
			return "(sensitive)"
		}
		changed = hideStrings(e) || changed
		return e
	}
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			t[k] = hide(e)
		}
	case []any:
		for i, e := range t {
			t[i] = hide(e)
		}
	}
	return changed
}
