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
	f.Add([]byte(`{"<":"a>b","&":["\"","\\","\u0001"]}`)) // each escape on its own
	f.Fuzz(func(t *testing.T, in []byte) {
		var v any
		if json.Unmarshal(in, &v) != nil {
			return
		}
		fuzzing.SameJSON(t, "value", v, schema.AppendJSON(nil, v))
		if m, ok := v.(map[string]any); ok && len(m) > 0 {
			fuzzing.SameJSON(t, "Wire", m, schema.Wire(nil, m))
		}
		if f, ok := v.(float64); ok && f == float64(int(f)) {
			fuzzing.SameJSON(t, "int", int(f), schema.AppendJSON([]byte{}, int(f)))
		}
		switch v := v.(type) {
		case []any:
			strs := []string{}
			for _, e := range v {
				if s, ok := e.(string); ok {
					strs = append(strs, s)
				}
			}
			fuzzing.SameJSON(t, "strings", strs, schema.AppendJSON(nil, strs))
		case map[string]any:
			strMap := map[string]string{}
			for k, e := range v {
				if s, ok := e.(string); ok {
					strMap[k] = s
				}
			}
			fuzzing.SameJSON(t, "string map", strMap, schema.AppendJSON(nil, strMap))
		}
		fuzzing.SameJSON(t, "nil strings", []string(nil), schema.AppendJSON(nil, []string(nil)))
	})
}

// TestWireEmpty: an empty list of objects is [] and an empty map of them
// {}, nil or not, as the agent takes them (json.Marshal would write a nil
// one as null).
func TestWireEmpty(t *testing.T) {
	args := []schema.Arg{{Wire: "L", Type: schema.Objects}, {Wire: "M", Type: schema.ObjectMap}, {Wire: "O", Type: schema.Object}}
	for _, m := range []map[string]any{
		{"L": []any(nil), "M": map[string]any(nil), "O": map[string]any(nil)},
		{"L": []any{}, "M": map[string]any{}, "O": map[string]any{}},
	} {
		if got := string(schema.Wire(args, m)); got != `{"L":[],"M":{},"O":{}}` {
			t.Errorf("Wire(%#v) = %s", m, got)
		}
	}
}
