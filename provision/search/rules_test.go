package search

import (
	"fmt"
	"strings"
	"testing"
)

// BenchmarkMappingRules judges an index of 1,000 fields of every 2.x
// core type, each with the parameters its type takes, by Elasticsearch
// 2.x's rules (versionLimits, as the plan judges them), next to the
// baseline of loading the spec that declares it: the rules should cost a
// small part of the load.
func BenchmarkMappingRules(b *testing.B) {
	shapes := []string{
		`{ type = "string", index = "not_analyzed", doc_values = true }`,
		`{ type = "string", analyzer = "english", search_analyzer = "standard", fields = { raw = { type = "string", index = "not_analyzed" } } }`,
		`{ type = "long", doc_values = true, ignore_malformed = true }`,
		`{ type = "date", format = "yyyy-MM-dd HH:mm:ss||epoch_millis" }`,
		`{ type = "boolean", store = true }`,
		`{ type = "object", properties = { a = "string", b = { type = "integer", coerce = false } } }`,
	}
	var fields []string
	for i := range 1000 {
		fields = append(fields, fmt.Sprintf("      f%d = %s", i, shapes[i%len(shapes)]))
	}
	src := "project = \"bench\"\n\nsearch \"t1\" {\n  url          = \"http://127.0.0.1:1\"\n  cluster_name = \"t1\"\n}\n\nindex \"logs\" {\n  search = \"t1\"\n  mapping \"doc\" {\n    properties = {\n" +
		strings.Join(fields, "\n") + "\n    }\n  }\n}\n"
	dir := b.TempDir()
	cfg, diags := loadSpec(dir, src)
	if diags.HasErrors() {
		b.Fatal(diags)
	}
	ix := Indices(cfg)[0]
	if diags := versionLimits(ix, liveIndex{}, 2); len(diags) > 0 {
		b.Fatalf("the bench's mapping is refused: %v", diags)
	}
	b.Run("baseline-load", func(b *testing.B) {
		for b.Loop() {
			loadSpec(dir, src)
		}
	})
	b.Run("rules", func(b *testing.B) {
		for b.Loop() {
			versionLimits(ix, liveIndex{}, 2)
		}
	})
}
