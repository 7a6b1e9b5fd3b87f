package search

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision"
	"github.com/provision-dev/provision/provision/adapter"
	"github.com/provision-dev/provision/provision/internal/golden"
	"github.com/provision-dev/provision/provision/plans"
	"github.com/provision-dev/provision/schema"
)

// TestGoldenPlans renders the plan of the shipped .dashboard against an
// empty, a converged and a drifted t1 (a type missing, a field missing, a
// field that is not declared), from answers captured from ES 2.4.1, and
// against .dashboard made by hand (no marks, the dashboard tool's own
// config type) with the import block of testdata/import.
func TestGoldenPlans(t *testing.T) {
	var root struct {
		ClusterName string `json:"cluster_name"`
		Version     struct{ Number string }
	}
	readJSON(t, "../../testdata/search/live/root.json", &root)
	for _, state := range []string{"empty", "converged", "drifted", "handmade"} {
		t.Run(state, func(t *testing.T) {
			files := []string{"../../specs/project.hcl", "../../specs/dashboard.hcl"}
			if state == "handmade" {
				files = append(files, "../../testdata/import/index.hcl")
			}
			f := facts{Version: root.Version.Number, ClusterName: root.ClusterName}
			readJSON(t, "../../testdata/search/live/"+state+".json", &f.Indices)
			checkGoldenPlan(t, goldenBackend(t, files...), f, "../../testdata/golden/search/"+state)
		})
	}
}

// TestGoldenConflicts renders, as text diagnostics with their snippets,
// the conflicts of declarations that Elasticsearch 2.4.1 would refuse,
// against live mappings in the shape it answers (testdata/search/conflicts:
// a parameter the declaration leaves to its default; a field a live type
// the specs do not declare maps otherwise).
func TestGoldenConflicts(t *testing.T) {
	for _, name := range []string{"undeclared-default", "shared-live-type"} {
		t.Run(name, func(t *testing.T) {
			dir := "../../testdata/search/conflicts/" + name
			p := schema.NewParser(testLanguage)
			cfg, diags := p.LoadDir(dir, schema.Inputs{})
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			bs, _ := New(cfg, Options{Env: noEnv})
			f := facts{Version: "2.4.1", ClusterName: "t1"}
			readJSON(t, dir+"/live.json", &f.Indices)
			planned, diags := provision.PlanBackend(plans.Converge, bs[0], f)
			changes := planned.Changes
			if !diags.HasErrors() {
				t.Fatalf("no conflict; changes: %v", requestLines(changes))
			}
			var out bytes.Buffer
			if err := hcl.NewDiagnosticTextWriter(&out, p.Files(), 100, false).WriteDiagnostics(diags); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, "../../testdata/golden/search/conflicts/"+name+".txt", out.Bytes())
		})
	}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// TestGoldenDocuments renders the plan of the shipped saved objects
// against what ES 2.4.1 answered after they were applied and then edited
// in the tool's ways (captured in testdata/search/live/documents.json):
// a title and a visState key changed (an update shown as paths inside the
// JSON text), the panels rewritten with other key order and spacing (no
// change), an object of the project's no longer declared (deleted), and
// one made by hand (left alone). The project's records of its documents
// (records) are as provision's writes of version 1 left them.
func TestGoldenDocuments(t *testing.T) {
	b := goldenBackend(t, "../../specs/project.hcl", "../../specs/dashboard.hcl", "../../testdata/search/saved-objects.hcl")
	var live struct {
		Indices   map[string]liveIndex `json:"indices"`
		Documents map[string]liveDoc   `json:"documents"`
		Owned     []liveDoc            `json:"owned"`
		Records   map[string]docRecord `json:"records"`
	}
	readJSON(t, "../../testdata/search/live/documents.json", &live)
	f := facts{Version: "2.4.1", ClusterName: "t1", Indices: live.Indices, Documents: live.Documents, Owned: live.Owned, Records: live.Records}
	checkGoldenPlan(t, b, f, "../../testdata/golden/search/documents")
}

// goldenBackend is the search backend of the spec files, on the
// addresses the live states of testdata/search/live were read from.
func goldenBackend(t *testing.T, files ...string) *Backend {
	t.Helper()
	cfg := loadFiles(t, files, "search_url=http://127.0.0.1:9200", "tribe_url=http://127.0.0.1:9201")
	bs, diags := New(cfg, Options{Env: noEnv})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	return bs[0].(*Backend)
}

// changesOf are the changes of b's plan against the live facts f.
func changesOf(t *testing.T, b *Backend, f facts) []*plans.Change {
	t.Helper()
	planned, diags := provision.PlanBackend(plans.Converge, b, f)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	return planned.Changes
}

// checkGoldenPlan renders b's plan against the live facts f as the
// golden files at path.
func checkGoldenPlan(t *testing.T, b *Backend, f facts, path string) {
	t.Helper()
	changes := changesOf(t, b, f)
	info := b.Info()
	info.Fingerprint = plans.Digested(b.fingerprint(f))
	p := &plans.Plan{FormatVersion: plans.FormatVersion, Project: b.project, Backends: []plans.BackendInfo{info}, Changes: changes}
	p.Target(nil, nil)
	golden.CheckPlan(t, path, p)
}

// TestRemovedDocumentsOrder: of the project's documents no longer
// declared, one that names another is deleted before it (the dashboard
// before its panel's visualization, the visualization before its search),
// read from the JSON text of the live sources.
func TestRemovedDocumentsOrder(t *testing.T) {
	b := goldenBackend(t, "../../specs/project.hcl", "../../specs/dashboard.hcl")
	var live struct {
		Indices map[string]liveIndex `json:"indices"`
	}
	readJSON(t, "../../testdata/search/live/documents.json", &live)
	owned := func(typ, id string, source map[string]any) liveDoc {
		source[markField] = adapter.Marks("edge", false)
		return liveDoc{Index: ".dashboard", Type: typ, ID: id, Version: 1, Source: source}
	}
	f := facts{Version: "2.4.1", ClusterName: "t1", Indices: live.Indices, Owned: []liveDoc{
		owned("dashboard", "old", map[string]any{"title": "Old", "panelsJSON": `[{"id":"old-rate","type":"visualization"}]`}),
		owned("search", "old-errors", map[string]any{"title": "Old errors"}),
		owned("visualization", "old-rate", map[string]any{"title": "Old rate", "savedSearchId": "old-errors"}),
	}}
	changes := changesOf(t, b, f)
	needs := map[string][]string{}
	for _, c := range changes {
		if c.Addr.Kind == Document {
			if c.Action != plans.Delete {
				t.Errorf("%s: %s, want delete", c.Addr, c.Action)
			}
			for _, n := range c.Needs {
				needs[c.Addr.Name] = append(needs[c.Addr.Name], n.Name)
			}
		}
	}
	want := map[string][]string{
		".dashboard/search/old-errors":      {".dashboard/visualization/old-rate"},
		".dashboard/visualization/old-rate": {".dashboard/dashboard/old"},
	}
	if diff := cmp.Diff(want, needs); diff != "" {
		t.Errorf("what each deletion waits for (-want +got):\n%s", diff)
	}
}
