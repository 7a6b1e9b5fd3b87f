package schema_test

import (
	"encoding/json"
	"testing"

	"github.com/provision-dev/provision/provision/fuzzing"
	"github.com/provision-dev/provision/schema"
)

// FuzzAppendJSON: whatever JSON decodes into (escapes, <, > and &,
// invalid UTF-8, U+2028, numbers small, large and negative, nesting),
// AppendJSON writes byte for byte as json.Marshal does, and so does
// Wire with no args of its own (a live value's fields kept as they are);
// ints, string lists and string maps likewise.
func FuzzAppendJSON(f *testing.F) {
	f.Add([]byte(`{"TaggedAddresses":{"wan":{"Address":"198.51.100.5","Port":80}},"Weights":{"Passing":10,"Warning":1}}`))
	f.Add([]byte(`{"a\u2028<&>":["\ud800x",1e-7,1e21,-0,123456789012345678901234,0.000001,[],{},null,true,false]}`))
	f.Add([]byte(`[1.5, -2, "\u00e9\u0000", {"z":1,"a":2}]`))
	f.Fuzz(func(t *testing.T, in []byte) {
		var v any
		if json.Unmarshal(in, &v) != nil {
			return
		}
		same := func(what string, v any, got []byte) { t.Helper(); fuzzing.SameJSON(t, what, v, got) }
		same("value", v, schema.AppendJSON(nil, v))
		if m, ok := v.(map[string]any); ok && len(m) > 0 {
			same("Wire", m, schema.Wire(nil, m))
		}
		if f, ok := v.(float64); ok && f == float64(int(f)) {
			same("int", int(f), schema.AppendJSON([]byte{}, int(f)))
		}
		var strs []string
		var strMap map[string]string
		switch v := v.(type) {
		case []any:
			strs = []string{}
			for _, e := range v {
				if s, ok := e.(string); ok {
					strs = append(strs, s)
				}
			}
			same("strings", strs, schema.AppendJSON(nil, strs))
		case map[string]any:
			strMap = map[string]string{}
			for k, e := range v {
				if s, ok := e.(string); ok {
					strMap[k] = s
				}
			}
			same("string map", strMap, schema.AppendJSON(nil, strMap))
		}
		same("nil strings", []string(nil), schema.AppendJSON(nil, []string(nil)))
	})
}
