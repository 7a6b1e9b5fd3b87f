package schema_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/provision-dev/provision/provision/langtest"
	"github.com/provision-dev/provision/provision/search"
	"github.com/provision-dev/provision/schema"
)

// TestDocuments decodes the shipped saved objects: an object given to a
// string field is compact JSON text with its keys sorted, a list of
// strings stays a list, references (written as expressions) are resolved
// to the declared documents, and a block with for_each makes one
// document per key.
func TestDocuments(t *testing.T) {
	dir := t.TempDir()
	each := `document "index-pattern" "team" {
  for_each = toset(["edge", "core"])
  id       = "logs-${each.key}-*"
  source   = { title = "logs-${each.key}-*" }
}
`
	if err := os.WriteFile(filepath.Join(dir, "each.hcl"), []byte(each), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, diags := schema.NewParser(langtest.Language).LoadFiles([]string{"../specs/project.hcl", "../specs/dashboard.hcl", "../testdata/search/saved-objects.hcl", filepath.Join(dir, "each.hcl")}, schema.Inputs{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	byPath := map[string]*search.DocumentDecl{}
	var paths []string
	for _, d := range search.Documents(cfg) {
		byPath[d.Path()] = d
		paths = append(paths, d.Path())
	}
	want := []string{".dashboard/index-pattern/logs-*", ".dashboard/search/errors", ".dashboard/visualization/error-rate", ".dashboard/dashboard/edge",
		".dashboard/index-pattern/logs-core-*", ".dashboard/index-pattern/logs-edge-*"}
	if diff := cmp.Diff(want, paths); diff != "" {
		t.Fatalf("documents (-want +got):\n%s", diff)
	}
	vis := byPath[".dashboard/visualization/error-rate"]
	if got := vis.Source["visState"]; got != `{"aggs":[{"id":"1","params":{},"schema":"metric","type":"count"},{"id":"2","params":{"extended_bounds":{},"field":"@timestamp","interval":"auto","min_doc_count":1},"schema":"segment","type":"date_histogram"}],"listeners":{},"params":{"addLegend":true,"addTooltip":true,"interpolate":"linear","shareYAxis":true,"showCircles":true},"title":"Error rate","type":"line"}` {
		t.Errorf("visState = %v", got)
	}
	if diff := cmp.Diff([]string{"dashboardSavedObjectMeta.searchSourceJSON", "visState"}, vis.JSONFields); diff != "" {
		t.Errorf("JSON fields (-want +got):\n%s", diff)
	}
	search := byPath[".dashboard/search/errors"]
	if diff := cmp.Diff([]any{"level", "message"}, search.Source["columns"]); diff != "" {
		t.Errorf("columns (-want +got):\n%s", diff)
	}
	needs := func(path string) []string {
		var out []string
		for _, n := range byPath[path].Needs {
			out = append(out, n.Path())
		}
		return out
	}
	for path, want := range map[string][]string{
		".dashboard/search/errors":            {".dashboard/index-pattern/logs-*"},
		".dashboard/visualization/error-rate": {".dashboard/search/errors"},
		".dashboard/dashboard/edge":           {".dashboard/visualization/error-rate"},
	} {
		if diff := cmp.Diff(want, needs(path)); diff != "" {
			t.Errorf("%s needs (-want +got):\n%s", path, diff)
		}
	}
}
