package search

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/provision-dev/provision/provision"
	"github.com/provision-dev/provision/provision/adapter"
	"github.com/provision-dev/provision/provision/cli/render"
	"github.com/provision-dev/provision/provision/plans"
	"github.com/provision-dev/provision/schema"
)

// savedObjects is the shipped spec with its saved objects, against the
// shared t1 and its read-only tribe node.
func savedObjects(t *testing.T) *schema.Config {
	t.Helper()
	return loadFiles(t, []string{"../../specs/project.hcl", "../../specs/dashboard.hcl", "../../testdata/search/saved-objects.hcl"},
		"search_url="+cluster(t).T1.URL, "tribe_url="+cluster(t).Tribe.URL)
}

// planDocs makes the plan as the engine does (ordered by needs) and
// returns it with the backend.
func planDocs(t *testing.T, cfg *schema.Config) (*Backend, *plans.Plan) {
	t.Helper()
	bs, diags := New(cfg, Options{Env: noEnv})
	if diags.HasErrors() || len(bs) != 1 {
		t.Fatalf("New: %v", diags)
	}
	p, diags := makePlan(context.Background(), cfg.Project, bs)
	if diags.HasErrors() {
		t.Fatalf("plan: %v", diags)
	}
	return bs[0].(*Backend), p
}

// makePlan reads every backend and plans from what they answered, as a
// plan run does (provision.Read, then provision.PlanFrom).
func makePlan(ctx context.Context, project string, backends []provision.Backend) (*plans.Plan, hcl.Diagnostics) {
	live, diags := provision.Read(ctx, plans.Converge, backends)
	p, pdiags := provision.PlanFrom(project, plans.Converge, backends, live)
	return p, append(diags, pdiags...)
}

func text(t *testing.T, p *plans.Plan) string {
	t.Helper()
	var out bytes.Buffer
	if err := render.Text(&out, p.Redacted(), render.TextOptions{}); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// TestDocuments is the dashboards-as-code round on the real t1 and its
// read-only tribe node: the four saved objects are created after their
// index and in the order their references give, proven through the tribe
// node, and plan as no changes after; an edit made by hand plans as an
// update shown as paths inside the JSON text, a key reorder by hand as no
// change; an object made by hand is left alone; an edit between plan and
// apply is refused at that object with what changed.
func TestDocuments(t *testing.T) {
	fresh(t, cluster(t).T1.URL, ".dashboard")
	t.Cleanup(func() { fresh(t, cluster(t).T1.URL, ".dashboard") })
	cfg := savedObjects(t)
	b, p := planDocs(t, cfg)
	want := []string{
		`index[".dashboard"] create: PUT /.dashboard/`,
		`index[".dashboard"] create: PUT /.dashboard/_mapping/index-pattern`,
		`index[".dashboard"] create: PUT /.dashboard/_mapping/search`,
		`index[".dashboard"] create: PUT /.dashboard/_mapping/dashboard`,
		`index[".dashboard"] create: PUT /.dashboard/_mapping/visualization`,
		`document[".dashboard/index-pattern/logs-*"] create: POST /_bulk?refresh=true {"create":{"_index":".dashboard","_type":"index-pattern","_id":"logs-*"}}`,
		`document[".dashboard/index-pattern/logs-*"] create: POST /_bulk?refresh=true {"index":{"_index":".provision","_type":"document","_id":".dashboard/index-pattern/logs-*"}}`,
		`document[".dashboard/search/errors"] create: POST /_bulk?refresh=true {"create":{"_index":".dashboard","_type":"search","_id":"errors"}}`,
		`document[".dashboard/search/errors"] create: POST /_bulk?refresh=true {"index":{"_index":".provision","_type":"document","_id":".dashboard/search/errors"}}`,
		`document[".dashboard/visualization/error-rate"] create: POST /_bulk?refresh=true {"create":{"_index":".dashboard","_type":"visualization","_id":"error-rate"}}`,
		`document[".dashboard/visualization/error-rate"] create: POST /_bulk?refresh=true {"index":{"_index":".provision","_type":"document","_id":".dashboard/visualization/error-rate"}}`,
		`document[".dashboard/dashboard/edge"] create: POST /_bulk?refresh=true {"create":{"_index":".dashboard","_type":"dashboard","_id":"edge"}}`,
		`document[".dashboard/dashboard/edge"] create: POST /_bulk?refresh=true {"index":{"_index":".provision","_type":"document","_id":".dashboard/dashboard/edge"}}`,
	}
	if diff := cmp.Diff(want, requestLines(p.Changes)); diff != "" {
		t.Fatalf("planned requests (-want +got):\n%s", diff)
	}
	res := provision.Apply(context.Background(), p, map[string]provision.Sender{b.Info().Name: b}, 10, nil)
	if err := res.Err(); err != nil {
		t.Fatal(err)
	}
	lines, diags := b.Verify(context.Background(), p)
	if diags.HasErrors() || len(lines) != 2 || !strings.Contains(lines[1].Line, "4 documents are served through the tribe node "+cluster(t).Tribe.URL+" as written.") {
		t.Fatalf("verify: %v %v", lines, diags)
	}
	t.Logf("proof: %s\n%s", lines[0].Line, lines[1].Line)

	_, p = planDocs(t, cfg)
	if p.Summary.HasChanges() {
		t.Fatalf("converged plan:\n%s", text(t, p))
	}

	t.Run("edited by hand", func(t *testing.T) {
		live := esDo(t, cluster(t).T1.URL, "GET", "/.dashboard/visualization/error-rate", "")
		edited := strings.Replace(strings.Replace(live, `\"interpolate\":\"linear\"`, `\"interpolate\":\"cardinal\"`, 1), `"title":"Error rate"`, `"title":"Error rate (edited)"`, 1)
		_, source, _ := strings.Cut(edited, `"_source":`)
		esDo(t, cluster(t).T1.URL, "PUT", "/.dashboard/visualization/error-rate?refresh=true", strings.TrimSuffix(source, "}"))
		_, p := planDocs(t, cfg)
		out := text(t, p)
		for _, s := range []string{`~ document[".dashboard/visualization/error-rate"]`, `"cardinal" -> "linear"`, `"Error rate (edited)" -> "Error rate"`} {
			if !strings.Contains(out, s) {
				t.Errorf("plan lacks %s:\n%s", s, out)
			}
		}
		plansAsLive(t, cfg)
		t.Logf("plan:\n%s", out)
	})

	t.Run("reordered by hand", func(t *testing.T) {
		// The tool rewrites JSON text with its own key order and spacing.
		fresh(t, cluster(t).T1.URL, ".dashboard")
		b, p := planDocs(t, cfg)
		mustApply(t, b, p)
		esDo(t, cluster(t).T1.URL, "POST", "/.dashboard/dashboard/edge/_update?refresh=true",
			`{"doc":{"panelsJSON":"[ {\"type\": \"visualization\", \"size_y\": 3, \"size_x\": 6, \"row\": 1, \"panelIndex\": 1, \"id\": \"error-rate\", \"col\": 1} ]"}}`)
		if _, p := planDocs(t, cfg); p.Summary.HasChanges() {
			t.Errorf("a key reorder plans changes:\n%s", text(t, p))
		}
	})

	t.Run("made by hand", func(t *testing.T) {
		esDo(t, cluster(t).T1.URL, "PUT", "/.dashboard/search/by-hand?refresh=true", `{"title":"Made in the tool"}`)
		if _, p := planDocs(t, cfg); p.Summary.HasChanges() {
			t.Errorf("an object made by hand is planned:\n%s", text(t, p))
		}
		if got := esDo(t, cluster(t).T1.URL, "GET", "/.dashboard/search/by-hand", ""); !strings.Contains(got, `"found":true`) {
			t.Errorf("the object made by hand is gone: %s", got)
		}
	})

	t.Run("edited between plan and apply", func(t *testing.T) {
		esDo(t, cluster(t).T1.URL, "POST", "/.dashboard/search/errors/_update?refresh=true", `{"doc":{"title":"Errors, by hand"}}`)
		b, p := planDocs(t, cfg) // plans the title back
		esDo(t, cluster(t).T1.URL, "POST", "/.dashboard/search/errors/_update?refresh=true", `{"doc":{"hits":7}}`)
		res := provision.Apply(context.Background(), p, map[string]provision.Sender{b.Info().Name: b}, 10, nil)
		err := res.Err()
		if err == nil || !strings.Contains(err.Error(), "the document /.dashboard/search/errors was changed since the plan read it (version 2 to 3, hits changed); nothing was written to it") {
			t.Fatalf("apply over an edit: %v", err)
		}
		t.Logf("refusal: %v", err)
		if got := esDo(t, cluster(t).T1.URL, "GET", "/.dashboard/search/errors", ""); !strings.Contains(got, `"hits":7`) || !strings.Contains(got, "Errors, by hand") {
			t.Errorf("the edit made by hand was overwritten: %s", got)
		}
	})

	t.Run("half-failed bulk", func(t *testing.T) {
		// Two updates in one _bulk request; one of them is edited again
		// between plan and apply: that item is refused, the other is
		// written (its record, the next batch, is not sent after the
		// failure: its marks own it), and a re-run converges.
		b, p := planDocs(t, cfg)
		mustApply(t, b, p)
		for _, doc := range []string{"index-pattern/logs-*", "dashboard/edge"} {
			esDo(t, cluster(t).T1.URL, "POST", "/.dashboard/"+doc+"/_update?refresh=true", `{"doc":{"title":"By hand"}}`)
		}
		b, p = planDocs(t, cfg)
		esDo(t, cluster(t).T1.URL, "POST", "/.dashboard/index-pattern/logs-*/_update?refresh=true", `{"doc":{"title":"By hand, again"}}`)
		var batches int
		res := provision.Apply(context.Background(), p, map[string]provision.Sender{b.Info().Name: b}, 10, func(e provision.Event) {
			if !e.Done && e.Request.Batch {
				batches++
			}
		})
		var got []string
		for _, o := range res.Outcomes {
			got = append(got, fmt.Sprintf("%s sent %d of %d", o.Change.Addr, o.Sent, len(o.Change.Requests)))
		}
		want := []string{`document[".dashboard/index-pattern/logs-*"] sent 0 of 2`, `document[".dashboard/dashboard/edge"] sent 1 of 2`}
		if diff := cmp.Diff(want, got); diff != "" || batches != 2 {
			t.Errorf("outcomes of %d items (-want +got):\n%s", batches, diff)
		}
		if err := res.Err(); err == nil || !strings.Contains(err.Error(), "the document /.dashboard/index-pattern/logs-%2A was changed since the plan read it (version ") || !strings.Contains(err.Error(), ", title changed)") ||
			!strings.Contains(err.Error(), "elasticsearch answered 409 Conflict for the item: version_conflict_engine_exception") {
			t.Errorf("the refused item: %v", err)
		}
		t.Logf("refusal: %v", res.Err())
		if got := esDo(t, cluster(t).T1.URL, "GET", "/.dashboard/dashboard/edge", ""); strings.Contains(got, "By hand") {
			t.Errorf("the item done is not live: %s", got)
		}
		b, p = planDocs(t, cfg)
		mustApply(t, b, p)
		if _, p := planDocs(t, cfg); p.Summary.HasChanges() {
			t.Errorf("the re-run did not converge:\n%s", text(t, p))
		}
	})
}

// TestDocumentOwnership: a declared document that exists without the
// project's marks or record is refused, and taken over with an import
// block; a
// reference to an id that nothing declares must name a live document
// that the plan does not delete.
func TestDocumentOwnership(t *testing.T) {
	fresh(t, cluster(t).T1.URL, ".dashboard")
	t.Cleanup(func() { fresh(t, cluster(t).T1.URL, ".dashboard") })
	cfg := savedObjects(t)
	b, p := planDocs(t, cfg)
	mustApply(t, b, p)
	// The search, made again by hand: no marks, and no record (an
	// overwrite with the record in place is a save in the tool, which
	// keeps the document the project's: TestOwnershipSurvivesTheToolsSave
	// in provision/cli).
	esDo(t, cluster(t).T1.URL, "PUT", "/.dashboard/search/errors?refresh=true", `{"title":"Errors","hits":0,"version":1}`)
	esDo(t, cluster(t).T1.URL, "DELETE", "/"+recordIndex, "")
	bs, _ := New(cfg, Options{Env: noEnv})
	_, diags := makePlan(context.Background(), cfg.Project, bs)
	if diff := cmp.Diff([]string{"saved-objects.hcl:21: The document exists and provision does not own it"}, diagLines(diags)); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	importFile := filepath.Join(t.TempDir(), "import.hcl")
	if err := os.WriteFile(importFile, []byte("import {\n  to = document[\".dashboard/search/errors\"]\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	withImport := loadFiles(t, []string{"../../specs/project.hcl", "../../specs/dashboard.hcl", "../../testdata/search/saved-objects.hcl", importFile},
		"search_url="+cluster(t).T1.URL, "tribe_url="+cluster(t).Tribe.URL)
	b, p = planDocs(t, withImport)
	// The search's import, and the records of the others, which their
	// marks own, written again.
	record := func(path string) string {
		return `{"index":{"_index":".provision","_type":"document","_id":".dashboard/` + path + `"}}`
	}
	if diff := cmp.Diff([]string{
		`document[".dashboard/index-pattern/logs-*"] update: POST /_bulk?refresh=true ` + record("index-pattern/logs-*"),
		`document[".dashboard/search/errors"] import: POST /_bulk?refresh=true {"index":{"_index":".dashboard","_type":"search","_id":"errors","_version":2}}`,
		`document[".dashboard/search/errors"] import: POST /_bulk?refresh=true ` + record("search/errors"),
		`document[".dashboard/visualization/error-rate"] update: POST /_bulk?refresh=true ` + record("visualization/error-rate"),
		`document[".dashboard/dashboard/edge"] update: POST /_bulk?refresh=true ` + record("dashboard/edge"),
	}, requestLines(p.Changes)); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	mustApply(t, b, p)
	if _, p := planDocs(t, cfg); p.Summary.HasChanges() {
		t.Errorf("after the import:\n%s", text(t, p))
	}

	dangling := func(id string) hcl.Diagnostics {
		spec := filepath.Join(t.TempDir(), "vis.hcl")
		src := fmt.Sprintf("document \"visualization\" \"by-id\" {\n  source = {\n    title         = \"By id\"\n    savedSearchId = %q\n  }\n}\n", id)
		if err := os.WriteFile(spec, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg := loadFiles(t, []string{"../../specs/project.hcl", "../../specs/dashboard.hcl", spec}, "search_url="+cluster(t).T1.URL)
		bs, _ := New(cfg, Options{Env: noEnv})
		_, diags := makePlan(context.Background(), cfg.Project, bs)
		return diags
	}
	if diags := dangling("nothing-has-this-id"); len(diagLines(diags)) != 1 || diagLines(diags)[0] != "vis.hcl:4: Reference to a document that does not exist" {
		t.Errorf("a reference to nothing: %v", diags)
	}
	esDo(t, cluster(t).T1.URL, "PUT", "/.dashboard/search/by-hand?refresh=true", `{"title":"Made in the tool"}`)
	if diags := dangling("by-hand"); diags.HasErrors() {
		t.Errorf("a reference by id to a live search: %v", diags)
	}
	// The project's own search, which these specs no longer declare: the
	// plan deletes it, so it cannot be named.
	if diags := dangling("errors"); len(diagLines(diags)) != 1 || diagLines(diags)[0] != "vis.hcl:4: Reference to a document that does not exist" {
		t.Errorf("a reference to a search this plan deletes: %v", diags)
	}
}

// TestGenerateDocument: a visualization made in the tool (by hand here),
// named by an import block alone, is written out as a document block with
// its JSON text as HCL values; with that block the plan imports it, and
// after the apply plans no change.
func TestGenerateDocument(t *testing.T) {
	files, vars, src := takeOver(t, "visualization/Made in the tool",
		`{"title":"Made in the tool","version":1,"savedSearchId":"errors","visState":"{\"title\":\"Made in the tool\",\"type\":\"table\",\"params\":{\"perPage\":10},\"aggs\":[],\"listeners\":{}}","dashboardSavedObjectMeta":{"searchSourceJSON":"{\"filter\":[]}"}}`)
	dir := t.TempDir()
	for _, s := range []string{`document "visualization" "Made_in_the_tool" {`, `id    = "Made in the tool"`, `index = ".dashboard"`, `perPage = 10`, `"dashboardSavedObjectMeta.searchSourceJSON" = {`} {
		if !strings.Contains(string(src), s) {
			t.Errorf("generated declaration lacks %s:\n%s", s, src)
		}
	}
	t.Logf("generated:\n%s", src)
	gen := filepath.Join(dir, "generated.hcl")
	if err := os.WriteFile(gen, src, 0o644); err != nil {
		t.Fatal(err)
	}
	withGenerated := loadFiles(t, append(files, gen), vars...)
	b, p := planDocs(t, withGenerated)
	if diff := cmp.Diff([]string{`document[".dashboard/visualization/Made in the tool"] import: POST /_bulk?refresh=true {"index":{"_index":".dashboard","_type":"visualization","_id":"Made in the tool","_version":1}}`,
		`document[".dashboard/visualization/Made in the tool"] import: POST /_bulk?refresh=true {"index":{"_index":".provision","_type":"document","_id":".dashboard/visualization/Made in the tool"}}`}, requestLines(p.Changes)); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	mustApply(t, b, p)
	if _, p := planDocs(t, withGenerated); p.Summary.HasChanges() {
		t.Errorf("after the import:\n%s", text(t, p))
	}
}

// takeOver applies the shipped saved objects, makes the document at
// <type>/<id> by hand with source, and generates its declaration from an
// import block: it returns the spec files (the import's among them), the
// variables and the generated declarations.
func takeOver(t *testing.T, path, source string) (files, vars []string, generated []byte) {
	t.Helper()
	fresh(t, cluster(t).T1.URL, ".dashboard")
	t.Cleanup(func() { fresh(t, cluster(t).T1.URL, ".dashboard") })
	b, p := planDocs(t, savedObjects(t))
	mustApply(t, b, p)
	esDo(t, cluster(t).T1.URL, "PUT", "/.dashboard/"+strings.ReplaceAll(path, " ", "%20")+"?refresh=true", source)
	imp := filepath.Join(t.TempDir(), "import.hcl")
	if err := os.WriteFile(imp, []byte(fmt.Sprintf("import {\n  to = document[%q]\n}\n", ".dashboard/"+path)), 0o644); err != nil {
		t.Fatal(err)
	}
	files = []string{"../../specs/project.hcl", "../../specs/dashboard.hcl", "../../testdata/search/saved-objects.hcl", imp}
	vars = []string{"search_url=" + cluster(t).T1.URL, "tribe_url=" + cluster(t).Tribe.URL}
	cfg, diags := schema.NewParser(testLanguage).LoadFiles(files, schema.Inputs{Vars: vars, GenerateConfig: true})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	bs, _ := New(cfg, Options{Env: noEnv})
	generated, diags = provision.GenerateConfig(context.Background(), bs)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	return files, vars, generated
}

// TestTakeOverBrokenReference: a visualization made in the tool that
// names a search which no longer exists (Beats' Evolution-of-the-CPU-
// times-per-process names "Processes") is taken over with
// -generate-config-out: the plan warns that the reference is broken
// already, imports it, and the apply keeps the reference as it was; a
// new document that names nothing is still an error.
func TestTakeOverBrokenReference(t *testing.T) {
	files, vars, src := takeOver(t, "visualization/cpu",
		`{"title":"CPU","version":1,"savedSearchId":"Processes","visState":"{\"title\":\"CPU\",\"type\":\"line\",\"params\":{},\"aggs\":[],\"listeners\":{}}","dashboardSavedObjectMeta":{"searchSourceJSON":"{\"filter\":[]}"}}`)
	if !strings.Contains(string(src), `savedSearchId = "Processes"`) {
		t.Fatalf("generated:\n%s", src)
	}
	dir := t.TempDir()
	gen := filepath.Join(dir, "generated.hcl")
	if err := os.WriteFile(gen, src, 0o644); err != nil {
		t.Fatal(err)
	}
	withGenerated := loadFiles(t, append(files, gen), vars...)
	bs, _ := New(withGenerated, Options{Env: noEnv})
	p, diags := makePlan(context.Background(), withGenerated.Project, bs)
	if diags.HasErrors() || len(diags) != 1 || diags[0].Severity != hcl.DiagWarning || diags[0].Summary != "Reference to a document that does not exist, already live" ||
		!strings.Contains(diags[0].Detail, `savedSearchId of document[".dashboard/visualization/cpu"] names the search "Processes"`) {
		t.Fatalf("plan: %v", diags)
	}
	t.Logf("warning: %s: %s", diags[0].Summary, diags[0].Detail)
	if p.Summary.Import != 1 || p.Summary.HasChanges() && p.Summary.Create+p.Summary.Update+p.Summary.Delete != 0 {
		t.Fatalf("plan: %s", text(t, p))
	}
	b := bs[0].(*Backend)
	mustApply(t, b, p)
	if _, p := planDocs(t, withGenerated); p.Summary.HasChanges() {
		t.Errorf("after the import:\n%s", text(t, p))
	}
	if got := esDo(t, cluster(t).T1.URL, "GET", "/.dashboard/visualization/cpu", ""); !strings.Contains(got, `"savedSearchId":"Processes"`) {
		t.Errorf("the reference was not kept as it was: %s", got)
	}

	// A new document with a reference to nothing is refused.
	broken := filepath.Join(dir, "broken.hcl")
	if err := os.WriteFile(broken, []byte("document \"visualization\" \"new\" {\n  source = {\n    title         = \"New\"\n    savedSearchId = \"Processes\"\n  }\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := loadFiles(t, append(files, gen, broken), vars...)
	bs, _ = New(bad, Options{Env: noEnv})
	if _, diags := makePlan(context.Background(), bad.Project, bs); !diags.HasErrors() || diagLines(diags)[len(diagLines(diags))-1] != "broken.hcl:4: Reference to a document that does not exist" {
		t.Errorf("a new broken reference: %v", diagLines(diags))
	}
}

// TestTakeOverEstate: saved objects made in the tool that name each other
// are taken over with one import block with for_each: their declarations
// come sorted by type and id, a reference to one generated beside it is
// an expression (so the plan orders them), the file is fmt-clean, and the
// plan imports them all and then plans no change.
func TestTakeOverEstate(t *testing.T) {
	fresh(t, cluster(t).T1.URL, ".dashboard")
	t.Cleanup(func() { fresh(t, cluster(t).T1.URL, ".dashboard") })
	cfg := seed(t, "search_url="+cluster(t).T1.URL)
	b, changes, diags := plan(t, cfg, plans.Converge)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	send(t, b, changes)
	for path, src := range map[string]string{
		"search/Errors":     `{"title":"Errors","columns":["_source"],"dashboardSavedObjectMeta":{"searchSourceJSON":"{\"query\":{\"query_string\":{\"query\":\"level:error\"}}}"}}`,
		"visualization/CPU": `{"title":"CPU","savedSearchId":"Errors","visState":"{\"title\":\"CPU\",\"type\":\"markdown\",\"params\":{\"markdown\":\"### CPU\\n\\nper process\"},\"aggs\":[],\"listeners\":{}}","dashboardSavedObjectMeta":{"searchSourceJSON":"{\"filter\":[]}"}}`,
		"dashboard/Edge":    `{"title":"Edge","panelsJSON":"[{\"id\":\"CPU\",\"type\":\"visualization\",\"panelIndex\":1},{\"id\":\"Elsewhere\",\"type\":\"visualization\",\"panelIndex\":2}]"}`,
	} {
		esDo(t, cluster(t).T1.URL, "PUT", "/.dashboard/"+path+"?refresh=true", src)
	}
	dir := t.TempDir()
	imp := filepath.Join(dir, "import.hcl")
	if err := os.WriteFile(imp, []byte("import {\n  for_each = toset([\"visualization/CPU\", \"search/Errors\", \"dashboard/Edge\"])\n  to       = document[\".dashboard/${each.value}\"]\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	files := []string{"../../specs/project.hcl", "../../specs/dashboard.hcl", imp}
	vars := []string{"search_url=" + cluster(t).T1.URL}
	gcfg, diags := schema.NewParser(testLanguage).LoadFiles(files, schema.Inputs{Vars: vars, GenerateConfig: true})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	bs, _ := New(gcfg, Options{Env: noEnv})
	src, diags := provision.GenerateConfig(context.Background(), bs)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	generated := string(src)
	for _, s := range []string{`savedSearchId = document.search.Errors.id`, `id         = document.visualization.CPU.id`, `id         = "Elsewhere"`} {
		if !strings.Contains(generated, s) {
			t.Errorf("generated declarations lack %s:\n%s", s, generated)
		}
	}
	if d, s, v := strings.Index(generated, `document "dashboard" "Edge"`), strings.Index(generated, `document "search" "Errors"`), strings.Index(generated, `document "visualization" "CPU"`); !(d >= 0 && d < s && s < v) {
		t.Errorf("not sorted by type and id:\n%s", generated)
	}
	if formatted := hclwrite.Format(src); !bytes.Equal(formatted, src) {
		t.Errorf("not fmt-clean:\n%s", src)
	}
	t.Logf("generated:\n%s", generated)
	gen := filepath.Join(dir, "generated.hcl")
	if err := os.WriteFile(gen, src, 0o644); err != nil {
		t.Fatal(err)
	}
	with := loadFiles(t, append(files, gen), vars...)
	// The dashboard's panel "Elsewhere" names nothing: broken already, a
	// warning, and the plan goes on.
	bs, _ = New(with, Options{Env: noEnv})
	if _, diags := makePlan(context.Background(), with.Project, bs); diags.HasErrors() || len(diags) != 1 ||
		diags[0].Summary != "Reference to a document that does not exist, already live" || !strings.Contains(diags[0].Detail, `panelsJSON[1].id of document[".dashboard/dashboard/Edge"] names the visualization "Elsewhere"`) {
		t.Errorf("plan: %v", diags)
	}
	b, p := planDocs(t, with)
	// (The index gets the mapping of the marks the documents carry.)
	if p.Summary.Import != 3 || p.Summary.Create+p.Summary.Delete != 0 {
		t.Fatalf("plan:\n%s", text(t, p))
	}
	mustApply(t, b, p)
	if _, p := planDocs(t, with); p.Summary.HasChanges() {
		t.Errorf("after the import:\n%s", text(t, p))
	}
	// A line of the markdown edited by hand plans as a line-by-line diff.
	live := esDo(t, cluster(t).T1.URL, "GET", "/.dashboard/visualization/CPU", "")
	_, source, _ := strings.Cut(strings.Replace(live, `per process`, `per process, by hand`, 1), `"_source":`)
	esDo(t, cluster(t).T1.URL, "PUT", "/.dashboard/visualization/CPU?refresh=true", strings.TrimSuffix(source, "}"))
	_, p = planDocs(t, with)
	out := text(t, p)
	for _, s := range []string{"~ markdown = <<-EOT", "- per process, by hand", "+ per process", "# (1 unchanged line hidden)"} {
		if !strings.Contains(out, s) {
			t.Errorf("the plan lacks %q:\n%s", s, out)
		}
	}
	t.Logf("plan:\n%s", out)
}

// mustApply applies p to the cluster of b and fails the test on an error.
func mustApply(t *testing.T, b *Backend, p *plans.Plan) {
	t.Helper()
	if res := provision.Apply(context.Background(), p, map[string]provision.Sender{b.Info().Name: b}, 10, nil); res.Err() != nil {
		t.Fatal(res.Err())
	}
}

// TestDecodedIsTheRoundTrip: where the walk answers, it gives what
// encoding a source and decoding it again gives, as the plan compared
// before the walk; where it does not (a string that is not UTF-8), the
// plan still makes the round trip.
func TestDecodedIsTheRoundTrip(t *testing.T) {
	for _, v := range []any{
		map[string]any{"a": int64(1), "b": int64(1<<53 + 1), "c": int64(-1 << 62), "d": 0.1, "e": math.Copysign(0, -1), "f": 1e300},
		map[string]any{"nested": map[string]any{"list": []any{int64(2), "x", true, nil, []any{}, map[string]any{}}}},
		map[string]any{"nil list": []any(nil), "nil map": map[string]any(nil), "é": "ü"},
	} {
		got, ok := decoded(v)
		if !ok {
			t.Fatalf("%v: the walk does not answer", v)
		}
		var want any
		if err := json.Unmarshal(adapter.RawJSON(v), &want); err != nil {
			t.Fatal(err)
		}
		if !cmp.Equal(got, want) {
			t.Errorf("the walk and the round trip differ: %s", cmp.Diff(want, got))
		}
	}
	for _, v := range []any{map[string]any{"a": "\xff"}, map[string]any{"\xff": "a"}, map[string]any{"a": 1}} {
		if _, ok := decoded(v); ok {
			t.Errorf("%#v: the walk answers for what it cannot", v)
		}
	}
}
