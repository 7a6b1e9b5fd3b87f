package search

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestKeepToolState: an index pattern's live popularity counts are taken
// where the specs declare 0 or none, a positive declared count is kept,
// and fields the tool never wrote (or a hand wrote oddly) change nothing.
func TestKeepToolState(t *testing.T) {
	live := liveDoc{Source: map[string]any{"fields": `[{"name":"level","count":3},{"name":"msg","count":null},{"name":["odd"],"count":9},{"name":"host","count":0}]`}}
	for name, tt := range map[string]struct {
		typ, fields, want string
	}{
		"count 0 takes the live one":     {"index-pattern", `[{"count":0,"name":"level"}]`, `[{"count":3,"name":"level"}]`},
		"no count takes the live one":    {"index-pattern", `[{"name":"level"}]`, `[{"count":3,"name":"level"}]`},
		"a positive count is declared":   {"index-pattern", `[{"count":12,"name":"level"}]`, `[{"count":12,"name":"level"}]`},
		"a live count of null is none":   {"index-pattern", `[{"count":0,"name":"msg"}]`, `[{"count":0,"name":"msg"}]`},
		"a live count of 0 equals 0":     {"index-pattern", `[{"count":0,"name":"host"}]`, `[{"count":0,"name":"host"}]`},
		"a field the tool does not have": {"index-pattern", `[{"count":0,"name":"new"}]`, `[{"count":0,"name":"new"}]`},
		"a field with an odd name":       {"index-pattern", `[{"count":0,"name":["odd"]}]`, `[{"count":0,"name":["odd"]}]`},
		"another type's fields are data": {"search", `[{"count":0,"name":"level"}]`, `[{"count":0,"name":"level"}]`},
		"fields that are not a list":     {"index-pattern", `{"name":"level"}`, `{"name":"level"}`},
	} {
		t.Run(name, func(t *testing.T) {
			got := keepToolState(tt.typ, map[string]any{"title": "logs-*", "fields": tt.fields}, live, true)
			if diff := cmp.Diff(map[string]any{"title": "logs-*", "fields": tt.want}, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	declared := map[string]any{"fields": []any{map[string]any{"name": "level", "count": int64(5)}}}
	if got := keepToolState("index-pattern", declared, live, true); !cmp.Equal(got, declared) {
		t.Errorf("a positive count from HCL (int64) was not kept: %v", got)
	}
	if got := keepToolState("index-pattern", map[string]any{"fields": `[{"name":"level"}]`}, live, false); got["fields"] != `[{"name":"level"}]` {
		t.Errorf("a document that does not exist took counts: %v", got)
	}
}
