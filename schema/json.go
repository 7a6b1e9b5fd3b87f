package schema

import (
	"encoding/json"
	"maps"
	"math"
	"slices"
	"strconv"
)

// AppendJSON appends v to b as json.Marshal writes it, without
// reflection for the values JSON decodes into (nil, bool, float64,
// string, []any, map[string]any) and for ints, string lists and string
// maps; anything else, and a float json.Marshal writes with an exponent,
// is json.Marshal's own. A plan encodes every registration's other
// fields and every live service's fingerprint, and at 100,000 services
// json.Marshal's reflection was a fifth of what a plan adds to validate
// (docs/internals/performance.md); FuzzAppendJSON holds it to
// json.Marshal byte for byte. A value json.Marshal refuses (NaN) appends
// nothing.
func AppendJSON(b []byte, v any) []byte {
	switch v := v.(type) {
	case nil:
		return append(b, "null"...)
	case bool:
		return strconv.AppendBool(b, v)
	case string:
		return AppendJSONString(b, v)
	case int:
		return strconv.AppendInt(b, int64(v), 10)
	case float64:
		if a := math.Abs(v); a == 0 || a >= 1e-6 && a < 1e21 {
			return strconv.AppendFloat(b, v, 'f', -1, 64)
		}
	case []any:
		return appendList(b, v, AppendJSON)
	case []string:
		return appendList(b, v, AppendJSONString)
	case map[string]any:
		return appendMap(b, v, AppendJSON)
	case map[string]string:
		return appendMap(b, v, AppendJSONString)
	}
	out, _ := json.Marshal(v)
	return append(b, out...)
}

// appendList appends l as a JSON array (null when nil), each element by
// each.
func appendList[E any](b []byte, l []E, each func([]byte, E) []byte) []byte {
	if l == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, e := range l {
		if i > 0 {
			b = append(b, ',')
		}
		b = each(b, e)
	}
	return append(b, ']')
}

// appendMap appends m as a JSON object (null when nil), its keys sorted,
// each value by each.
func appendMap[V any](b []byte, m map[string]V, each func([]byte, V) []byte) []byte {
	if m == nil {
		return append(b, "null"...)
	}
	b = append(b, '{')
	for i, k := range slices.Sorted(maps.Keys(m)) {
		if i > 0 {
			b = append(b, ',')
		}
		b = each(append(AppendJSONString(b, k), ':'), m[k])
	}
	return append(b, '}')
}

// AppendJSONString appends s as a JSON string, as json.Marshal writes
// it: plain ASCII as it is, anything it escapes (control characters,
// quotes, backslashes, <, > and &, and every non-ASCII byte, for its
// handling of invalid UTF-8 and of U+2028 and U+2029) by json.Marshal
// itself.
func AppendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' || c >= 0x80 {
			q, _ := json.Marshal(s) // a string always encodes
			return append(b, q...)
		}
	}
	return append(append(append(b, '"'), s...), '"')
}
