package search

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision"
	"github.com/provision-dev/provision/provision/plans"
	"github.com/provision-dev/provision/provision/servers"
	"github.com/provision-dev/provision/schema"
)

// shared is the one tribe setup of this package's real-server tests
// (ES 2.4.1: member clusters t1 and t2 and a tribe node), started by the
// first test that needs it: the unit and fake tests run without Java.
var shared struct {
	once  sync.Once
	tribe *servers.Tribe
	err   error
	dir   string
	log   servers.LogBuffer
}

// cluster is the shared tribe setup, started on first use; a test fails
// (never skips) when it cannot start.
func cluster(t testing.TB) *servers.Tribe {
	t.Helper()
	shared.once.Do(func() {
		if shared.dir, shared.err = os.MkdirTemp("", "provision-search"); shared.err == nil {
			shared.tribe, shared.err = servers.StartTribe(context.Background(), shared.dir, &shared.log)
		}
	})
	if shared.err != nil {
		t.Fatalf("starting elasticsearch: %v\n%s", shared.err, shared.log.Tail(4000))
	}
	return shared.tribe
}

func TestMain(m *testing.M) {
	flag.Parse()
	code := m.Run()
	if shared.tribe != nil {
		shared.tribe.Stop()
		if code != 0 {
			fmt.Fprintf(os.Stderr, "elasticsearch log (tail):\n%s\n", shared.log.Tail(3000))
		}
	}
	if shared.dir != "" {
		os.RemoveAll(shared.dir)
	}
	os.Exit(code)
}

// load writes a spec into a directory of the test's own and loads it, so
// that diagnostics carry real ranges.
func load(t *testing.T, files map[string]string, vars ...string) *schema.Config {
	t.Helper()
	dir := t.TempDir()
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg, diags := schema.NewParser(testLanguage).LoadDir(dir, schema.Inputs{Vars: vars})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	return cfg
}

// seed is the shipped spec: specs/project.hcl and specs/dashboard.hcl.
func seed(t *testing.T, vars ...string) *schema.Config {
	t.Helper()
	return loadFiles(t, []string{"../../specs/project.hcl", "../../specs/dashboard.hcl"}, vars...)
}

func loadFiles(t *testing.T, files []string, vars ...string) *schema.Config {
	t.Helper()
	cfg, diags := schema.NewParser(testLanguage).LoadFiles(files, schema.Inputs{Vars: vars})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	return cfg
}

func noEnv(string) string { return "" }

func plan(t *testing.T, cfg *schema.Config, mode plans.Mode) (*Backend, []*plans.Change, hcl.Diagnostics) {
	t.Helper()
	bs, diags := New(cfg, Options{Env: noEnv})
	if diags.HasErrors() || len(bs) != 1 {
		t.Fatalf("New: %d backends, %v", len(bs), diags)
	}
	b := bs[0].(*Backend)
	changes, _, diags := readPlan(b, mode)
	return b, changes, diags
}

func send(t *testing.T, b *Backend, changes []*plans.Change) {
	t.Helper()
	for _, c := range changes {
		for _, r := range c.Requests {
			if err := b.Send(context.Background(), r); err != nil {
				t.Fatalf("%s %s: %v", r.Method, r.Path, err)
			}
		}
	}
}

func requestLines(changes []*plans.Change) []string {
	var out []string
	for _, c := range changes {
		for _, r := range c.Requests {
			line := c.Addr.String() + " " + c.Action.String() + ": " + r.Method + " " + r.Path
			if lines := itemLines(r); r.Batch && len(lines) > 0 {
				line += " " + string(lines[0]) // the item's action
			}
			out = append(out, line)
		}
	}
	return out
}

// diagLines are the errors, as "file:line: summary". Warnings are left
// out: the shared clusters hold the indices of every test, which a plan
// of project edge notes as no longer declared.
func diagLines(diags hcl.Diagnostics) []string {
	var out []string
	for _, d := range diags {
		if d.Severity != hcl.DiagError {
			continue
		}
		out = append(out, fmt.Sprintf("%s:%d: %s", filepath.Base(d.Subject.Filename), d.Subject.Start.Line, d.Summary))
	}
	return out
}

// esDo sends one request around provision, as a person would with curl,
// and fails the test unless it succeeds. It returns the answer's body.
func esDo(t *testing.T, base, method, path, body string) string {
	t.Helper()
	code, b := esStatus(t, base, method, path, body)
	if code/100 != 2 {
		t.Fatalf("%s %s: %d %s", method, path, code, b)
	}
	return b
}

// fresh deletes an index left by another test, if there is one.
func fresh(t *testing.T, base, index string) {
	t.Helper()
	// The project's records of documents go with the index: a record left
	// from another test would own a document this one makes by hand.
	for _, name := range []string{index, recordIndex} {
		req, _ := http.NewRequest("DELETE", base+"/"+name, nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}
}

// TestSeedDashboard plans and applies the shipped .dashboard on t1, checks
// a re-plan is empty and that the four types show through the tribe node.
func TestSeedDashboard(t *testing.T) {
	fresh(t, cluster(t).T1.URL, ".dashboard")
	cfg := seed(t, "search_url="+cluster(t).T1.URL, "tribe_url="+cluster(t).Tribe.URL)
	b, changes, diags := plan(t, cfg, plans.Converge)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	want := []string{
		`index[".dashboard"] create: PUT /.dashboard/`,
		`index[".dashboard"] create: PUT /.dashboard/_mapping/index-pattern`,
		`index[".dashboard"] create: PUT /.dashboard/_mapping/search`,
		`index[".dashboard"] create: PUT /.dashboard/_mapping/dashboard`,
		`index[".dashboard"] create: PUT /.dashboard/_mapping/visualization`,
	}
	if diff := cmp.Diff(want, requestLines(changes)); diff != "" {
		t.Fatalf("planned requests (-want +got):\n%s", diff)
	}
	body := string(changes[0].Requests[2].Body)
	for _, s := range []string{`"search":{`, `"dashboardSavedObjectMeta":{"properties":{"searchSourceJSON":{"type":"string"}}}`, `"hits":{"type":"integer"}`, `"_meta":{"managed-by":"provision","provision-project":"edge"}`} {
		if !strings.Contains(body, s) {
			t.Errorf("the search mapping body lacks %s:\n%s", s, body)
		}
	}
	send(t, b, changes)
	msg, err := b.verify(context.Background(), changes)
	if err != nil || !strings.Contains(msg, `".dashboard" and 4 mapping types are visible through the tribe node `+cluster(t).Tribe.URL) {
		t.Errorf("Verify = %q, %v", msg, err)
	}
	_, again, diags := plan(t, cfg, plans.Converge)
	if diags.HasErrors() || len(again) != 1 || again[0].Action != plans.NoOp {
		t.Fatalf("re-plan after apply: %v %v", requestLines(again), diags)
	}
}

const fieldsSpec = `project = "edge"

search "t1" {
  url          = %q
  cluster_name = %q
}

index %q {
  search = "t1"
  mapping "search" {
    properties = {
      title = %q
      hits  = "integer"%s
    }
  }
}
`

// fields is a spec of one index, in a project named after the index, so
// that the tests sharing the clusters never own each other's indices.
func fields(t *testing.T, url, cluster, index, titleType, extra string) *schema.Config {
	spec := fmt.Sprintf(fieldsSpec, url, cluster, index, titleType, extra)
	return load(t, map[string]string{"main.hcl": strings.Replace(spec, `"edge"`, strconv.Quote(strings.TrimLeft(index, ".")), 1)})
}

// TestDrift adds a field (an update in place), then changes a type (a
// conflict at the field's line, nothing written).
func TestDrift(t *testing.T) {
	b, changes, diags := plan(t, fields(t, cluster(t).T1.URL, "t1", "drift", "string", ""), plans.Converge)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	send(t, b, changes)

	b, changes, diags = plan(t, fields(t, cluster(t).T1.URL, "t1", "drift", "string", "\n      sort  = \"string\""), plans.Converge)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if diff := cmp.Diff([]string{`index.drift update: PUT /drift/_mapping/search`}, requestLines(changes)); diff != "" {
		t.Fatalf("adding a field (-want +got):\n%s", diff)
	}
	send(t, b, changes)

	_, changes, diags = plan(t, fields(t, cluster(t).T1.URL, "t1", "drift", "integer", ""), plans.Converge)
	if diff := cmp.Diff([]string{"main.hcl:12: Field type cannot change"}, diagLines(diags)); diff != "" {
		t.Fatalf("changing a type (-want +got):\n%s", diff)
	}
	if !strings.Contains(diags[0].Detail, `"string" on the live cluster and declared as "integer"`) || !strings.Contains(diags[0].Detail, "reindex") {
		t.Errorf("the conflict does not name both types and the way out: %s", diags[0].Detail)
	}
	if len(changes) != 0 && changes[0].Action != plans.NoOp {
		t.Errorf("a conflicting plan still has changes: %v", requestLines(changes))
	}
	// The undeclared live field is noted, never removed.
	_, changes, _ = plan(t, fields(t, cluster(t).T1.URL, "t1", "drift", "string", ""), plans.Converge)
	if len(changes) != 1 || changes[0].Action != plans.NoOp || len(changes[0].Notes) != 1 || !strings.Contains(changes[0].Notes[0], "left alone: sort") {
		t.Errorf("undeclared field: %+v", changes)
	}
}

// TestTribeRefused aims the writes at the tribe node: refused at plan
// time, naming both members, in a few seconds.
func TestTribeRefused(t *testing.T) {
	tribe := cluster(t).Tribe.URL // started before the clock does
	start := time.Now()
	_, changes, diags := plan(t, fields(t, tribe, "t1", "via-tribe", "string", ""), plans.Converge)
	took := time.Since(start)
	if diff := cmp.Diff([]string{"main.hcl:4: Search URL is a tribe node"}, diagLines(diags)); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	for _, s := range []string{"t1 (cluster.name t1)", "t2 (cluster.name t2)"} {
		if !strings.Contains(diags[0].Detail, s) {
			t.Errorf("the refusal does not name %s: %s", s, diags[0].Detail)
		}
	}
	if took > 5*time.Second || len(changes) != 0 {
		t.Errorf("refused in %s with %d changes; want under 5s and none", took, len(changes))
	}
	t.Logf("tribe URL refused in %s", took)
}

func TestWrongCluster(t *testing.T) {
	_, _, diags := plan(t, fields(t, cluster(t).T2.URL, "t1", "wrong", "string", ""), plans.Converge)
	if diff := cmp.Diff([]string{"main.hcl:4: Wrong search cluster"}, diagLines(diags)); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
}

// TestOwnership refuses an index made by hand, and destroys only what the
// project owns.
func TestOwnership(t *testing.T) {
	esDo(t, cluster(t).T1.URL, "PUT", "/handmade/", "")
	esDo(t, cluster(t).T1.URL, "PUT", "/handmade/_mapping/search", `{"search":{"properties":{"title":{"type":"string"}}}}`)
	_, _, diags := plan(t, fields(t, cluster(t).T1.URL, "t1", "handmade", "string", ""), plans.Converge)
	if diff := cmp.Diff([]string{"main.hcl:8: The index exists and provision does not own it"}, diagLines(diags)); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	// An empty index made by hand is nobody's either: only the marks count.
	esDo(t, cluster(t).T1.URL, "PUT", "/handmade-empty/", "")
	_, _, diags = plan(t, fields(t, cluster(t).T1.URL, "t1", "handmade-empty", "string", ""), plans.Converge)
	if diff := cmp.Diff([]string{"main.hcl:8: The index exists and provision does not own it"}, diagLines(diags)); diff != "" {
		t.Fatalf("an empty hand-made index (-want +got):\n%s", diff)
	}
	_, changes, diags := plan(t, fields(t, cluster(t).T1.URL, "t1", "handmade", "string", ""), plans.Destroy)
	if len(diags) != 0 || len(changes) != 0 {
		t.Fatalf("destroy of an unowned index: %v %v", requestLines(changes), diags)
	}

	cfg := fields(t, cluster(t).T1.URL, "t1", "owned", "string", "")
	b, changes, _ := plan(t, cfg, plans.Converge)
	send(t, b, changes)
	b, changes, diags = plan(t, cfg, plans.Destroy)
	if diff := cmp.Diff([]string{"index.owned delete: DELETE /owned"}, requestLines(changes)); diff != "" || diags.HasErrors() {
		t.Fatalf("destroy (-want +got):\n%s%v", diff, diags)
	}
	send(t, b, changes)
	if _, changes, _ = plan(t, cfg, plans.Converge); changes[0].Action != plans.Create {
		t.Errorf("after destroy the index should plan as a create: %v", requestLines(changes))
	}
}

// TestRerunAfterPartialApply: an apply that stopped right after creating
// the index leaves an index with no types; the next plan adds the types
// and does not create the index again.
func TestRerunAfterPartialApply(t *testing.T) {
	cfg := fields(t, cluster(t).T1.URL, "t1", "partial", "string", "")
	b, changes, diags := plan(t, cfg, plans.Converge)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if err := b.Send(context.Background(), changes[0].Requests[0]); err != nil { // PUT /partial/ only
		t.Fatal(err)
	}
	b, changes, diags = plan(t, cfg, plans.Converge)
	if diff := cmp.Diff([]string{`index.partial update: PUT /partial/_mapping/search`}, requestLines(changes)); diff != "" || diags.HasErrors() {
		t.Fatalf("re-plan after a partial apply (-want +got):\n%s%v", diff, diags)
	}
	send(t, b, changes)
	if _, changes, _ = plan(t, cfg, plans.Converge); changes[0].Action != plans.NoOp {
		t.Errorf("not converged: %v", requestLines(changes))
	}
}

const paramsSpec = `project = "params"

search "t1" {
  url          = %q
  cluster_name = "t1"
}

index "params" {
  search = "t1"
  mapping "doc" {
    properties = {
      title   = %s
      code    = { type = "string", index = "not_analyzed", ignore_above = %d }
      created = "date"
      hits    = { type = "integer", coerce = true }
    }
  }
}
`

// TestFieldParameters compares field parameters with real ES 2.4.1: the
// defaults it does not echo plan as converged, ignore_above changes in
// place, index of a string cannot change, and text is refused on 2.x.
func TestFieldParameters(t *testing.T) {
	fresh(t, cluster(t).T1.URL, "params")
	spec := func(title string, ignoreAbove int) *schema.Config {
		return load(t, map[string]string{"main.hcl": fmt.Sprintf(paramsSpec, cluster(t).T1.URL, title, ignoreAbove)})
	}
	b, changes, diags := plan(t, spec(`{ type = "string", index = "analyzed", doc_values = false }`, 64), plans.Converge)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	send(t, b, changes)
	if _, changes, diags = plan(t, spec(`{ type = "string", index = "analyzed", doc_values = false }`, 64), plans.Converge); diags.HasErrors() || changes[0].Action != plans.NoOp {
		t.Fatalf("defaults the server does not echo plan as changes: %v %v", requestLines(changes), diags)
	}
	b, changes, diags = plan(t, spec(`"string"`, 128), plans.Converge)
	if diff := cmp.Diff([]string{"index.params update: PUT /params/_mapping/doc"}, requestLines(changes)); diff != "" || diags.HasErrors() {
		t.Fatalf("ignore_above 64 -> 128 (-want +got):\n%s%v", diff, diags)
	}
	send(t, b, changes)
	if _, changes, _ = plan(t, spec(`"string"`, 128), plans.Converge); changes[0].Action != plans.NoOp {
		t.Fatalf("not converged after the update: %v", requestLines(changes))
	}
	_, _, diags = plan(t, spec(`{ type = "string", index = "not_analyzed" }`, 128), plans.Converge)
	if diff := cmp.Diff([]string{"main.hcl:12: Field parameter cannot change"}, diagLines(diags)); diff != "" {
		t.Fatalf("index analyzed -> not_analyzed (-want +got):\n%s", diff)
	}
	if !strings.Contains(diags[0].Detail, `"title" has index = "analyzed" on the live cluster and "not_analyzed" declared`) || !strings.Contains(diags[0].Detail, "reindex") {
		t.Errorf("the conflict does not name both values and the way out: %s", diags[0].Detail)
	}
	_, _, diags = plan(t, spec(`"text"`, 128), plans.Converge)
	if diff := cmp.Diff([]string{"main.hcl:12: Field type the server does not have"}, diagLines(diags)); diff != "" {
		t.Errorf("text on 2.x (-want +got):\n%s", diff)
	}
}

// TestOwnedNoLongerDeclared: an index the project owns and no longer
// declares is kept with a warning by a plain plan, deleted with prune and
// by destroy; another project's index is never listed.
func TestOwnedNoLongerDeclared(t *testing.T) {
	for _, ix := range []string{"gone", "kept", "theirs-too"} {
		fresh(t, cluster(t).T1.URL, ix)
	}
	esDo(t, cluster(t).T1.URL, "PUT", "/theirs-too/", `{"mappings":{"doc":{"_meta":{"managed-by":"provision","provision-project":"other"}}}}`)
	pruner := func(index string) *schema.Config {
		return load(t, map[string]string{"main.hcl": strings.Replace(fmt.Sprintf(fieldsSpec, cluster(t).T1.URL, "t1", index, "string", ""), `"edge"`, `"pruner"`, 1)})
	}
	b, changes, _ := plan(t, pruner("gone"), plans.Converge)
	send(t, b, changes)
	cfg := pruner("kept")
	b, changes, diags := plan(t, cfg, plans.Converge)
	if len(diags) != 1 || diags[0].Summary != "Owned index no longer declared" || !strings.Contains(diags[0].Detail, `The index "gone" on cluster t1 is owned by project pruner`) {
		t.Fatalf("warnings: %v", diags)
	}
	if diff := cmp.Diff([]string{"index.kept create: PUT /kept/", "index.kept create: PUT /kept/_mapping/search"}, requestLines(changes)); diff != "" {
		t.Fatalf("a plain plan touches the undeclared index (-want +got):\n%s", diff)
	}
	send(t, b, changes)
	bs, _ := New(cfg, Options{Env: noEnv, Prune: true})
	b = bs[0].(*Backend)
	changes, _, diags = readPlan(b, plans.Converge)
	if got := requestLines(changes); len(got) != 1 || got[0] != "index.gone delete: DELETE /gone" {
		t.Fatalf("with -prune-indices: %v %v", got, diags)
	}
	send(t, b, changes)
	_, changes, _ = plan(t, cfg, plans.Destroy)
	if diff := cmp.Diff([]string{"index.kept delete: DELETE /kept"}, requestLines(changes)); diff != "" {
		t.Errorf("destroy (-want +got):\n%s", diff)
	}
}

const settingsSpec = `project = "settings"

search "t1" {
  url          = %q
  cluster_name = "t1"
}

index "settings" {
  search = "t1"
  settings = {
    number_of_shards   = %d
    number_of_replicas = 0
    refresh_interval   = %q
    analysis = {
      analyzer = {
        folded = { type = "custom", tokenizer = "standard", filter = ["lowercase", "asciifolding"] }
      }
    }
  }
  mapping "doc" {
    properties = {
      title = { type = "string", analyzer = "folded" }
    }
  }
}
`

// TestIndexSettings on real ES 2.4.1: settings go with the create (a
// custom analyzer the mapping uses included), a converged index plans as
// no change, a dynamic setting is updated in place, a static one is a
// conflict at the settings attribute, and the read stays one request.
func TestIndexSettings(t *testing.T) {
	fresh(t, cluster(t).T1.URL, "settings")
	spec := func(shards int, refresh string) *schema.Config {
		return load(t, map[string]string{"main.hcl": fmt.Sprintf(settingsSpec, cluster(t).T1.URL, shards, refresh)})
	}
	b, changes, diags := plan(t, spec(1, "5s"), plans.Converge)
	if diags.HasErrors() || !strings.Contains(string(changes[0].Requests[0].Body), `"index.analysis.analyzer.folded.filter.1":"asciifolding"`) {
		t.Fatalf("create: %v %s", diags, changes[0].Requests[0].Body)
	}
	send(t, b, changes)
	if _, changes, diags = plan(t, spec(1, "5s"), plans.Converge); diags.HasErrors() || changes[0].Action != plans.NoOp {
		t.Fatalf("not converged: %v %v", requestLines(changes), diags)
	}
	b, changes, diags = plan(t, spec(1, "30s"), plans.Converge)
	if diff := cmp.Diff([]string{"index.settings update: PUT /settings/_settings"}, requestLines(changes)); diff != "" || diags.HasErrors() {
		t.Fatalf("refresh_interval 5s -> 30s (-want +got):\n%s%v", diff, diags)
	}
	send(t, b, changes)
	if _, changes, _ = plan(t, spec(1, "30s"), plans.Converge); changes[0].Action != plans.NoOp {
		t.Fatalf("not converged after the update: %v", requestLines(changes))
	}
	_, _, diags = plan(t, spec(3, "30s"), plans.Converge)
	if diff := cmp.Diff([]string{"main.hcl:10: Static index setting cannot change"}, diagLines(diags)); diff != "" {
		t.Fatalf("number_of_shards 1 -> 3 (-want +got):\n%s", diff)
	}
	if !strings.Contains(diags[0].Detail, `index.number_of_shards = "1" on the live cluster and "3" declared`) {
		t.Errorf("detail: %s", diags[0].Detail)
	}
}

// TestManyLongIndexNames declares more indices than one request line can
// name (80 names of 60 characters: 4.9 KB, past Elasticsearch's 4 KB
// http.max_initial_line_length), two of which exist: the plan still reads
// the cluster in a fixed number of requests and sees the two.
func TestManyLongIndexNames(t *testing.T) {
	var src strings.Builder
	fmt.Fprintf(&src, "project = \"longnames\"\n\nsearch \"t1\" {\n  url          = %q\n  cluster_name = \"t1\"\n}\n", cluster(t).T1.URL)
	var names []string
	for i := range 80 {
		name := fmt.Sprintf("longnames-%050d", i)
		names = append(names, name)
		fmt.Fprintf(&src, "\nindex %q {\n  search = \"t1\"\n  mapping \"doc\" {\n    properties = { title = \"string\" }\n  }\n}\n", name)
	}
	cfg := load(t, map[string]string{"main.hcl": src.String()})
	b, changes, diags := plan(t, cfg, plans.Converge)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	var first []*plans.Change
	for _, c := range changes {
		if c.Addr.Name == names[0] || c.Addr.Name == names[1] {
			first = append(first, c)
		}
	}
	send(t, b, first)
	for _, name := range names[:2] {
		t.Cleanup(func() { esDo(t, cluster(t).T1.URL, "DELETE", "/"+name, "") })
	}
	_, changes, diags = plan(t, cfg, plans.Converge)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	count := map[plans.Action]int{}
	for _, c := range changes {
		count[c.Action]++
	}
	if count[plans.NoOp] != 2 || count[plans.Create] != 78 {
		t.Errorf("plan of 80 declared indices, 2 live: %v", count)
	}
}

// readPlan reads the cluster and plans from what it read.
func readPlan(b *Backend, mode plans.Mode) ([]*plans.Change, string, hcl.Diagnostics) {
	st, diags := b.Read(context.Background(), mode)
	if diags.HasErrors() {
		return nil, "", diags
	}
	planned, pdiags := provision.PlanBackend(mode, b, st)
	return planned.Changes, planned.Fingerprint.String(), append(diags, pdiags...)
}
