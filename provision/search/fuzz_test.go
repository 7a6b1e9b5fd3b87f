package search

import (
	"encoding/json"
	"testing"

	"github.com/provision-dev/provision/provision/fuzzing"
)

// FuzzMapping runs the mapping normaliser on arbitrary live mappings: the
// field diff against the seed's declared fields on 2.x and 5.x, the live
// view and the generated declaration must never panic, and a generated
// declaration is a value a properties attribute can hold.
func FuzzMapping(f *testing.F) {
	f.Add([]byte(`{"title":{"type":"string"},"hits":{"type":"integer"},"dashboardSavedObjectMeta":{"properties":{"searchSourceJSON":{"type":"string"}}}}`))
	f.Add([]byte(`{"title":{"type":"text","fields":{"keyword":{"type":"keyword","ignore_above":256}}}}`))
	declared := []*Field{
		{Name: "title", Params: map[string]any{"type": "string"}},
		{Name: "hits", Params: map[string]any{"type": "integer"}},
		{Name: "dashboardSavedObjectMeta", Params: map[string]any{}, Properties: []*Field{{Name: "searchSourceJSON", Params: map[string]any{"type": "string"}}}},
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		fuzzing.Bounded(t, raw, func(t testing.TB) {
			var live map[string]liveField
			if json.Unmarshal(raw, &live) != nil {
				return
			}
			for _, major := range []int{2, 5} {
				fieldDiff("", declared, live, major)
			}
			liveView(declared, live)
			for name, v := range declaration("", live) {
				if name == "" || v.IsNull() && !v.Type().IsPrimitiveType() {
					t.Fatalf("declaration of %s: %q = %#v", raw, name, v)
				}
			}
		})
	})
}
