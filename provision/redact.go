package provision

import (
	"encoding/json"
	"regexp"
)

// sensitiveKey matches the object keys whose values are never shown:
// secrets have no place in Consul meta or a mapping, but if one is put
// there it still stays out of plans printed to a terminal or a log.
var sensitiveKey = regexp.MustCompile(`(?i)(token|secret|passw(or)?d|api[-_]?key|credential|authorization)`)

// Redacted is the printable form of the plan: a copy in which the value of
// every sensitive key in Before, After and request bodies and headers is
// replaced by "(sensitive)". A saved plan file keeps the real values, as
// it must to be applied; it is as sensitive as the specs themselves.
func (p *Plan) Redacted() *Plan {
	q := *p
	q.Changes = make([]*Change, len(p.Changes))
	for i, c := range p.Changes {
		d := *c
		d.Before, d.After = redactJSON(c.Before), redactJSON(c.After)
		d.Requests = make([]Request, len(c.Requests))
		for j, r := range c.Requests {
			r.Body = redactJSON(r.Body)
			if len(r.Header) > 0 {
				h := map[string]string{}
				for k, v := range r.Header {
					if sensitiveKey.MatchString(k) {
						v = "(sensitive)"
					}
					h[k] = v
				}
				r.Header = h
			}
			d.Requests[j] = r
		}
		q.Changes[i] = &d
	}
	return &q
}

// redactJSON returns raw itself when it holds nothing sensitive, so that
// printed bodies keep the exact bytes that are sent.
func redactJSON(raw json.RawMessage) json.RawMessage {
	var v any
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil || !redactValue(v) {
		return raw
	}
	b, _ := json.Marshal(v)
	return b
}

// redactValue replaces sensitive values in place and reports whether it did.
func redactValue(v any) bool {
	changed := false
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			if sensitiveKey.MatchString(k) {
				t[k] = "(sensitive)"
				changed = true
			} else if redactValue(e) {
				changed = true
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
