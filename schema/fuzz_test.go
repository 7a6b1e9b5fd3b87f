package schema_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/provision-dev/provision/provision/fuzzing"
	"github.com/provision-dev/provision/provision/langtest"
	"github.com/provision-dev/provision/schema"
)

// FuzzLoad feeds the spec decoder arbitrary files: it must never panic,
// and whatever it refuses it refuses with a diagnostic that has a summary.
func FuzzLoad(f *testing.F) {
	for _, seed := range []string{"../specs/gated-api.hcl", "../specs/dashboard.hcl", "../specs/project.hcl", "../testdata/import/index.hcl",
		"../testdata/language/main.hcl", "../testdata/invalid/locals-cycle.hcl", "../testdata/invalid/dynamic-bad-interval.hcl"} {
		if b, err := os.ReadFile(seed); err == nil {
			f.Add(b)
		}
	}
	// The constructs added since: the limits' cases, dynamic blocks,
	// traefik blocks, for_each on indices.
	more, _ := filepath.Glob("../testdata/invalid/limit-*.hcl")
	dynamic, _ := filepath.Glob("../testdata/invalid/dynamic-*.hcl")
	traefik, _ := filepath.Glob("../testdata/invalid/*traefik*.hcl")
	documents, _ := filepath.Glob("../testdata/invalid/document-*.hcl")
	for _, seed := range append(append(append(more, dynamic...), traefik...), append(documents, "../testdata/search/saved-objects.hcl")...) {
		if b, err := os.ReadFile(seed); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`project = "x"` + "\ntraefik \"v1\" {\n  api = \"http://127.0.0.1:8081\"\n  url = \"http://127.0.0.1:8080\"\n}\n"))
	f.Add([]byte(`project = "x"` + "\nsearch \"t1\" {\n  url = \"http://127.0.0.1:9200\"\n}\nindex \"logs\" {\n  for_each = toset([\"a\", \"b\"])\n  search = \"t1\"\n  mapping \"doc\" {\n    properties = { title = \"string\" }\n  }\n}\n"))
	f.Add([]byte(`project = "x"` + "\nimport {\n  to = index[\".d\"]\n}\n"))
	f.Add([]byte(`project = "x"` + "\nlocals {\n  m = { a = 1 }\n}\nservice \"s\" {\n  for_each = local.m\n  port = each.value + length(keys(local.m))\n}\n"))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, src []byte) {
		fuzzing.Bounded(t, src, func(t testing.TB) {
			path := filepath.Join(dir, "main.hcl")
			if err := os.WriteFile(path, src, 0o644); err != nil {
				t.Fatal(err)
			}
			_, diags := schema.NewParser(langtest.Language).LoadFiles([]string{path}, schema.Inputs{Vars: []string{"api_host=h", "api_port=1"}})
			for _, d := range diags {
				if d.Summary == "" {
					t.Fatalf("a diagnostic without summary: %+v", d)
				}
			}
		})
	})
}
