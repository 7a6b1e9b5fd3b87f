package search

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/provision-dev/provision/provision"
	"github.com/provision-dev/provision/provision/plans"
	"github.com/provision-dev/provision/schema"
)

// seedCalls are the seed's hand-made calls that create .dashboard on the
// master of t1: PUT /.dashboard/ with no body, then the four mappings.
var seedCalls = []struct{ path, body string }{
	{"/.dashboard/", ""},
	{"/.dashboard/_mapping/index-pattern", `{"index-pattern":{"properties":{"title":{"type":"string"},"timeFieldName":{"type":"string"},"intervalName":{"type":"string"},"customFormats":{"type":"string"},"fields":{"type":"string"}}}}`},
	{"/.dashboard/_mapping/search", `{"search":{"properties":{"title":{"type":"string"},"description":{"type":"string"},"hits":{"type":"integer"},"columns":{"type":"string"},"sort":{"type":"string"},"version":{"type":"integer"},"dashboardSavedObjectMeta":{"properties":{"searchSourceJSON":{"type":"string"}}}}}}`},
	{"/.dashboard/_mapping/dashboard", `{"dashboard":{"properties":{"title":{"type":"string"},"hits":{"type":"integer"},"description":{"type":"string"},"panelsJSON":{"type":"string"},"version":{"type":"integer"},"dashboardSavedObjectMeta":{"properties":{"searchSourceJSON":{"type":"string"}}}}}}`},
	{"/.dashboard/_mapping/visualization", `{"visualization":{"properties":{"title":{"type":"string"},"visState":{"type":"string"},"description":{"type":"string"},"savedSearchId":{"type":"string"},"version":{"type":"integer"},"dashboardSavedObjectMeta":{"properties":{"searchSourceJSON":{"type":"string"}}}}}}`},
}

// handMade makes .dashboard on t1 exactly as the seed does, and saves one
// document in it as the dashboard tool would, with a type of its own.
func handMade(t *testing.T) { handMadeOn(t, cluster(t).T1.URL) }

// handMadeOn does the seed's calls on the cluster at base.
func handMadeOn(t *testing.T, base string) {
	t.Helper()
	fresh(t, base, ".dashboard")
	for _, c := range seedCalls {
		esDo(t, base, "PUT", c.path, c.body)
	}
	esDo(t, base, "PUT", "/.dashboard/config/4.6.1?refresh=true", `{"buildNum":10146,"defaultIndex":"logstash-*"}`)
}

func importSpec(t *testing.T, extra ...string) *schema.Config {
	t.Helper()
	files := append([]string{"../../specs/project.hcl", "../../specs/dashboard.hcl", "../../testdata/import/index.hcl"}, extra...)
	return loadFiles(t, files, "search_url="+cluster(t).T1.URL, "tribe_url="+cluster(t).Tribe.URL)
}

// TestImportHandMade takes over the seed's hand-made .dashboard: the plan
// imports it with one mapping PUT per declared type (the marks, no field
// change), the apply keeps the saved document, the dashboard tool's own
// type and every field, and the next plan is empty, with a note that the
// import block can go.
func TestImportHandMade(t *testing.T) {
	handMade(t)
	// The dashboard tool keeps its own _meta, with object values, on a type.
	esDo(t, cluster(t).T1.URL, "PUT", "/.dashboard/_mapping/search", `{"search":{"_meta":{"tool":{"schema":2}}}}`)
	_, _, diags := plan(t, seed(t, "search_url="+cluster(t).T1.URL), plans.Converge)
	if diff := cmp.Diff([]string{"dashboard.hcl:23: The index exists and provision does not own it"}, diagLines(diags)); diff != "" {
		t.Fatalf("without an import block (-want +got):\n%s", diff)
	}

	cfg := importSpec(t)
	b, changes, diags := plan(t, cfg, plans.Converge)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	want := []string{
		`index[".dashboard"] import: PUT /.dashboard/_mapping/index-pattern`,
		`index[".dashboard"] import: PUT /.dashboard/_mapping/search`,
		`index[".dashboard"] import: PUT /.dashboard/_mapping/dashboard`,
		`index[".dashboard"] import: PUT /.dashboard/_mapping/visualization`,
	}
	if diff := cmp.Diff(want, requestLines(changes)); diff != "" {
		t.Fatalf("import plan (-want +got):\n%s", diff)
	}
	if !strings.Contains(strings.Join(changes[0].Notes, "\n"), `live mapping types that are not declared, left alone: "config"`) {
		t.Errorf("the dashboard tool's own type is not noted: %q", changes[0].Notes)
	}
	send(t, b, changes)
	if msg, err := b.verify(context.Background(), changes); err != nil {
		t.Errorf("Verify: %v", err)
	} else {
		t.Log(msg)
	}

	_, again, _ := plan(t, cfg, plans.Converge)
	if len(again) != 1 || again[0].Action != plans.NoOp || again[0].RemovableImport.String() != "../../testdata/import/index.hcl:5,8-27" {
		t.Fatalf("re-plan after the import: %v %+v", requestLines(again), again)
	}
	if got := esDo(t, cluster(t).T1.URL, "GET", "/.dashboard/config/4.6.1", ""); !strings.Contains(got, `"defaultIndex":"logstash-*"`) {
		t.Errorf("the saved document is gone: %s", got)
	}
	if got := esDo(t, cluster(t).T1.URL, "GET", "/.dashboard/_mapping", ""); !strings.Contains(got, `"config":{"properties":{"buildNum"`) ||
		!strings.Contains(got, `"_meta":{"managed-by":"provision","provision-project":"edge"}`) ||
		!strings.Contains(got, `"_meta":{"managed-by":"provision","provision-project":"edge","tool":{"schema":2}}`) {
		t.Errorf("after the import the mapping lacks the tool's type, its _meta or the marks: %s", got)
	}
	// Without the import block, the imported index is simply owned.
	if _, c, d := plan(t, seed(t, "search_url="+cluster(t).T1.URL), plans.Converge); d.HasErrors() || c[0].Action != plans.NoOp {
		t.Errorf("plan without the import block: %v %v", requestLines(c), d)
	}
}

// TestImportOtherProject never imports an index another project owns.
func TestImportOtherProject(t *testing.T) {
	fresh(t, cluster(t).T1.URL, "theirs")
	esDo(t, cluster(t).T1.URL, "PUT", "/theirs/", "")
	esDo(t, cluster(t).T1.URL, "PUT", "/theirs/_mapping/search", `{"search":{"_meta":{"managed-by":"provision","provision-project":"other"},"properties":{"title":{"type":"string"}}}}`)
	spec := strings.Replace(fieldsSpec, "index %q {", "import {\n  to = index.theirs\n}\n\nindex %q {", 1)
	cfg := load(t, map[string]string{"main.hcl": fmt.Sprintf(spec, cluster(t).T1.URL, "t1", "theirs", "string", "")})
	_, changes, diags := plan(t, cfg, plans.Converge)
	if diff := cmp.Diff([]string{"main.hcl:9: The index belongs to another project"}, diagLines(diags)); diff != "" || len(changes) != 0 {
		t.Fatalf("(-want +got):\n%s%v", diff, requestLines(changes))
	}
	if !strings.Contains(diags[0].Detail, `the provision project "other"`) {
		t.Errorf("the refusal does not name the project: %s", diags[0].Detail)
	}
}

// TestGenerateRoundTrip writes the declaration of the hand-made
// .dashboard from the live index; with it, the specs validate, the plan
// imports, and after the apply the next plan is empty.
func TestGenerateRoundTrip(t *testing.T) {
	handMade(t)
	dir := t.TempDir()
	main := `project = "edge"

search "t1" {
  url          = "` + cluster(t).T1.URL + `"
  cluster_name = "t1"
}

import {
  to = index[".dashboard"]
}
`
	if err := os.WriteFile(filepath.Join(dir, "main.hcl"), []byte(main), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, diags := schema.NewParser(testLanguage).LoadDir(dir, schema.Inputs{GenerateConfig: true})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	bs, diags := New(cfg, Options{Env: noEnv})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	src, diags := provision.GenerateConfig(context.Background(), bs)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	for _, s := range []string{`index ".dashboard" {`, `search = "t1"`, `mapping "config" {`, `mapping "search" {`,
		`"dashboardSavedObjectMeta.searchSourceJSON" = "string"`, `hits                                        = "integer"`} {
		if !strings.Contains(string(src), s) {
			t.Errorf("the generated spec lacks %s:\n%s", s, src)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "generated.hcl"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, diags = schema.NewParser(testLanguage).LoadDir(dir, schema.Inputs{})
	if diags.HasErrors() {
		t.Fatalf("the generated spec does not validate: %v\n%s", diags, src)
	}
	if formatted, _ := schema.Format(src, "generated.hcl"); string(formatted) != string(src) {
		t.Errorf("the generated spec is not in fmt layout:\n%s", src)
	}
	b, changes, diags := plan(t, cfg, plans.Converge)
	if diags.HasErrors() || len(changes) != 1 || changes[0].Action != plans.Import || len(changes[0].Requests) != 5 {
		t.Fatalf("plan with the generated spec: %v %v", requestLines(changes), diags)
	}
	send(t, b, changes)
	if _, changes, diags = plan(t, cfg, plans.Converge); diags.HasErrors() || changes[0].Action != plans.NoOp {
		t.Fatalf("not converged after the import: %v %v", requestLines(changes), diags)
	}
}
