package schema_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision/consul/kv"
	"github.com/provision-dev/provision/provision/langtest"
	"github.com/provision-dev/provision/provision/search"
	"github.com/provision-dev/provision/schema"
)

// writeTree writes files (path from root: content) under a new directory.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for p, content := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// TestFileFunctions: file, fileexists, fileset, templatefile and
// yamldecode read the specs' own files, named from the specs' directory.
func TestFileFunctions(t *testing.T) {
	root := writeTree(t, map[string]string{
		"specs/main.hcl": `project = "ft"

locals {
  objs = fileset(path.module, "dash/**/*.json")
}

key "apps/ft/x" {
  value = {
    objs   = local.objs
    parsed = { for p in local.objs : p => jsondecode(file("${path.module}/${p}")) }
    t      = templatefile("dash/t.tpl", { name = "edge" })
    y      = yamldecode(file("dash/c.yaml"))
    ex     = [fileexists("dash/a.json"), fileexists("dash/none.json")]
    braces = fileset(path.module, "dash/{t.tpl,c.yaml,none}")
    class  = fileset(path.module, "dash/{[ct].yaml,none}")
    sums   = [filemd5("dash/t.tpl"), filesha256("dash/t.tpl"), filebase64("dash/t.tpl"), filebase64sha256("dash/t.tpl")]
    ts     = templatestring("$${a}-$${b}", { a = "x", b = 1 })
  }
}
`,
		"specs/dash/a.json":     `{"title": "A"}`,
		"specs/dash/sub/b.json": `{"title": "B", "n": [1, 2]}`,
		"specs/dash/t.tpl":      "hello ${name}",
		"specs/dash/c.yaml":     "a: 1\nb: [x, z]\n",
		"specs/dash/skip.txt":   "not json",
	})
	cfg, diags := schema.NewParser(langtest.Language).LoadDir(filepath.Join(root, "specs"), schema.Inputs{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	// The digests of "hello ${name}" are md5sum's, sha256sum's and
	// base64's of those bytes.
	want := `{"braces":["dash/c.yaml","dash/t.tpl"],"class":["dash/c.yaml"],"ex":[true,false],"objs":["dash/a.json","dash/sub/b.json"],"parsed":{"dash/a.json":{"title":"A"},"dash/sub/b.json":{"n":[1,2],"title":"B"}},` +
		`"sums":["eced06fde98f8d1de656d83d5f764103","c7c46c62f7efe4b646f7588ca9a87207ee8337bcf18b40945826162f3ea40e79","aGVsbG8gJHtuYW1lfQ==","x8RsYvfv5LZG91iMqahyB+6DN7zxi0CUWCYWLz6kDnk="],"t":"hello edge","ts":"x-1","y":{"a":1,"b":["x","z"]}}`
	if got := kv.Keys(cfg)[0].Value; got != want {
		t.Errorf("value:\n%s\nwant\n%s", got, want)
	}
}

// TestFileFunctionsConfined: a path outside the specs' directory, by
// "..", an absolute path or a symbolic link, is an error at its range
// that never shows the file's text; so is JSON that does not parse, with
// its file and line.
func TestFileFunctionsConfined(t *testing.T) {
	root := writeTree(t, map[string]string{
		"secret.txt":     "s3cr3t-value",
		"specs/bad.json": "{\n  \"a\": 1,\n  oops\n}\n",
		"specs/bad.tpl":  "${",
		// Work a template asks for counts as the specs' own: the values
		// its functions build and those its loops iterate over.
		"specs/loops.tpl": "%{for a in range(1000)}%{for b in range(1000)}%{endfor}%{endfor}",
	})
	if err := os.Symlink(filepath.Join(root, "secret.txt"), filepath.Join(root, "specs", "link.txt")); err != nil {
		t.Fatal(err)
	}
	// A FIFO inside the specs is refused before it is opened (a read of
	// it would wait for a writer forever).
	if err := syscall.Mkfifo(filepath.Join(root, "specs", "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ expr, want string }{
		{`file("../secret.txt")`, "is outside the directory of the specs"},
		{`file("` + filepath.Join(root, "secret.txt") + `")`, "is an absolute path"},
		{`file("link.txt")`, "is a symbolic link to outside the directory of the specs"},
		{`file("pipe")`, `"pipe" is not a regular file`},
		{`filebase64("pipe")`, `"pipe" is not a regular file`},
		{`file("none.txt")`, `no file "none.txt" inside the directory of the specs`},
		{`fileset("..", "*.txt")`, "is outside the directory of the specs"},
		{`fileset(".", "{[a,b")`, "syntax error in pattern"},
		{`fileset(".", "*.yaml")`, `the pattern "*.yaml" matches no file under "."`},
		{`fileset("none", "*.json")`, `no directory "none" inside the directory of the specs`},
		{`jsondecode(file("bad.json"))`, "bad.json:3,3: the JSON does not parse"},
		{`templatefile("bad.tpl", {})`, "bad.tpl:1,3"},
		{`templatefile("loops.tpl", {})`, "Spec asks for too much work"},
		{`jsondecode(templatefile("bad.json", {}))`, "bad.json (as rendered):3,3: the JSON does not parse"},
	} {
		spec := "project = \"ft\"\n\nkey \"apps/ft/x\" {\n  value = " + tt.expr + "\n}\n"
		if err := os.WriteFile(filepath.Join(root, "specs", "main.hcl"), []byte(spec), 0o644); err != nil {
			t.Fatal(err)
		}
		_, diags := schema.NewParser(langtest.Language).LoadDir(filepath.Join(root, "specs"), schema.Inputs{})
		if !diags.HasErrors() {
			t.Errorf("%s: no error", tt.expr)
			continue
		}
		d := diags.Errs()[0].Error()
		if !strings.Contains(d, tt.want) || !strings.Contains(d, "main.hcl:4,11") || strings.Contains(d, "s3cr3t") {
			t.Errorf("%s: %s; want %q at main.hcl:4,11, without the file's text", tt.expr, d, tt.want)
		}
	}
}

// TestFileTextNotQuoted: an error in an expression that refers to a
// value holding a file's text does not print that value, as hcl's
// diagnostic writer would ("with local.raw as ...").
func TestFileTextNotQuoted(t *testing.T) {
	root := writeTree(t, map[string]string{
		"main.hcl": "project = \"ft\"\n\nlocals {\n  raw = file(\"s.json\")\n  bad = \"{x\"\n}\n\nkey \"apps/ft/x\" {\n  value = jsondecode(local.raw)\n}\n\nkey \"apps/ft/y\" {\n  value = jsondecode(local.bad)\n}\n",
		"s.json":   `{"password": "s3cr3t-value", oops}`,
	})
	p := schema.NewParser(langtest.Language)
	_, diags := p.LoadDir(root, schema.Inputs{})
	var out strings.Builder
	if err := hcl.NewDiagnosticTextWriter(&out, p.Files(), 100, false).WriteDiagnostics(diags); err != nil {
		t.Fatal(err)
	}
	if len(diags) != 2 || strings.Contains(out.String(), "s3cr3t") || !strings.Contains(out.String(), "s.json:1,30: the JSON does not parse") ||
		!strings.Contains(out.String(), `with local.bad as "{x"`) {
		t.Errorf("%d diagnostics; want two, the file's text not shown, the other's values shown:\n%s", len(diags), out.String())
	}
}

// TestKibana4Export: a Kibana 4 export, one JSON array of {_id, _type,
// _source}, is declared with one document block per type, filtered by
// type, each object's _id its ID and _source its source.
func TestKibana4Export(t *testing.T) {
	root := writeTree(t, map[string]string{
		"main.hcl": `project = "k4"

search "t1" {
  url          = "http://127.0.0.1:9200"
  cluster_name = "t1"
}

index ".kibana" {
  search = "t1"
  mapping "search" {
    properties = { title = "string", "kibanaSavedObjectMeta.searchSourceJSON" = "string" }
  }
  mapping "visualization" {
    properties = { title = "string", visState = "string", savedSearchId = "string" }
  }
}

locals {
  export = jsondecode(file("export.json"))
}

document "search" "k4" {
  for_each = { for o in local.export : o._id => o._source if o._type == "search" }
  id       = each.key
  source   = each.value
}

document "visualization" "k4" {
  for_each = { for o in local.export : o._id => o._source if o._type == "visualization" }
  id       = each.key
  source   = each.value
}
`,
		"export.json": `[
  {"_id": "Errors", "_type": "search", "_source": {"title": "Errors", "kibanaSavedObjectMeta": {"searchSourceJSON": "{\"index\":\"logs-*\",\"query\":{\"query_string\":{\"query\":\"level:error\"}}}"}}},
  {"_id": "Error-rate", "_type": "visualization", "_source": {"title": "Error rate", "savedSearchId": "Errors", "visState": "{\"type\":\"line\"}"}}
]`,
	})
	cfg, diags := schema.NewParser(langtest.Language).LoadDir(root, schema.Inputs{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	var got []string
	for _, d := range search.Documents(cfg) {
		got = append(got, d.Path())
	}
	if want := []string{".kibana/search/Errors", ".kibana/visualization/Error-rate"}; !slices.Equal(got, want) {
		t.Errorf("documents %q, want %q", got, want)
	}
	if v := search.Documents(cfg)[1]; len(v.Needs) != 1 || v.Needs[0].ID != "Errors" {
		t.Errorf("the visualization's savedSearchId does not order it after its search: %v", v.Needs)
	}
}
