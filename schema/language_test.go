package schema_test

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/provision-dev/provision/provision/consul"
	"github.com/provision-dev/provision/provision/langtest"
	"github.com/provision-dev/provision/provision/search"
	"github.com/provision-dev/provision/schema"
)

// TestLanguage loads a spec that uses locals, functions, for_each and
// dynamic blocks, and compares what it declares with what the same specs
// written out by hand would declare.
func TestLanguage(t *testing.T) {
	cfg, diags := schema.NewParser(langtest.Language).LoadDir("../testdata/language", schema.Inputs{})
	if len(diags) > 0 {
		t.Fatalf("diagnostics: %s", diags)
	}
	type service struct {
		ID, Name, Key string
		Port          int
		Tags          []string
		Checks        []string
	}
	var got []service
	for _, s := range consul.Services(cfg) {
		sv := service{ID: s.Name, Name: s.Service, Port: s.Port, Tags: s.Tags}
		if s.Instance != nil {
			sv.Key = s.Instance.String()
		}
		for _, c := range s.Checks {
			sv.Checks = append(sv.Checks, fmt.Sprint(c.Name, " ", c.Def["HTTP"], " ", c.Def["Interval"]))
		}
		got = append(got, sv)
	}
	want := []service{
		{ID: "app-api", Name: "app", Key: `each.key = "api"`, Port: 8080, Tags: []string{"public", "team-api"},
			Checks: []string{"live http://127.0.0.1:8080/live 10s", "ready http://127.0.0.1:8080/ready 5s"}},
		{ID: "app-jobs", Name: "app", Key: `each.key = "jobs"`, Port: 8081, Tags: []string{"team-jobs"},
			Checks: []string{"live http://127.0.0.1:8081/live 10s", "ready http://127.0.0.1:8081/ready 5s"}},
		{ID: "worker-a", Name: "worker", Key: `each.key = "a"`, Port: 7000},
		{ID: "worker-b", Name: "worker", Key: `each.key = "b"`, Port: 7001},
		{ID: "solo", Name: "solo-svc", Port: 3000, Checks: []string{"health http://127.0.0.1:9000/healthz 10s"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("services (-want +got):\n%s", diff)
	}

	var indices []string
	for _, ix := range search.Indices(cfg) {
		var types []string
		for _, m := range ix.Mappings {
			var fields []string
			for _, f := range m.Properties {
				fields = append(fields, describeField(f))
			}
			types = append(types, m.Type+"{"+strings.Join(fields, " ")+"}")
		}
		indices = append(indices, ix.Name+" "+strings.Join(types, " "))
	}
	wantIndices := []string{
		"logs-a doc{hits:integer meta{a:keyword} title:string}",
		"logs-b doc{hits:integer meta{b:keyword} title:string}",
		".dash search{hits:integer title:string} visualization{hits:integer title:string}",
	}
	if diff := cmp.Diff(wantIndices, indices); diff != "" {
		t.Errorf("indices (-want +got):\n%s", diff)
	}

	// The sensitive value went through a local and a function: what came
	// out of it is still a secret.
	if !slices.Contains(cfg.Secrets, "S3CR3T-PATH") {
		t.Errorf("secrets %q lack the upper-cased sensitive value", cfg.Secrets)
	}
}

func describeField(f *search.Field) string {
	if len(f.Properties) == 0 {
		return fmt.Sprintf("%s:%s", f.Name, f.Type())
	}
	var sub []string
	for _, p := range f.Properties {
		sub = append(sub, describeField(p))
	}
	return f.Name + "{" + strings.Join(sub, " ") + "}"
}

// TestIterationInDiagnostics: the instances of a block share its lines,
// so a diagnostic inside one says which iteration it is about.
func TestIterationInDiagnostics(t *testing.T) {
	tests := map[string]string{
		"dynamic-bad-interval.hcl": `(In the iteration check.key = "ready".)`,
		"for-each-invalid-key.hcl": `(In the iteration each.key = "bad\tkey".)`,
	}
	for file, want := range tests {
		t.Run(file, func(t *testing.T) {
			_, diags := schema.NewParser(langtest.Language).LoadFiles([]string{"../testdata/invalid/" + file}, schema.Inputs{})
			if len(diags) != 1 {
				t.Fatalf("want one diagnostic, got %s", diags)
			}
			if !strings.HasSuffix(diags[0].Detail, want) {
				t.Errorf("detail %q does not end with %q", diags[0].Detail, want)
			}
		})
	}
}

// TestFunctionTableDocumented: every function a spec may call is in the
// table of docs/language/locals-and-functions.md, and every one of them
// can be called.
func TestFunctionTableDocumented(t *testing.T) {
	readme, err := os.ReadFile("../docs/language/locals-and-functions.md")
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(string(readme), "| kind | functions |")
	if i < 0 {
		t.Fatal("docs/language/locals-and-functions.md has no function table")
	}
	table := string(readme[i:])
	table = table[:strings.Index(table, "\n\n")]
	for _, name := range slices.Sorted(maps.Keys(schema.Functions)) {
		if !strings.Contains(table, "`"+name+"`") {
			t.Errorf("the function table of docs/language/locals-and-functions.md lacks %s", name)
		}
	}
}
