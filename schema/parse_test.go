package schema

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// write writes src as the file name in a new directory, and returns its
// path.
func write(t *testing.T, name, src string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestLargeFileIsHCLs: a file of any size gets hcl's own diagnostics,
// exactly as the same mistakes in a small file do (an attribute set
// twice, an attribute no schema knows), and a syntax error in a
// -var-file is reported once beside one in the specs.
func TestLargeFileIsHCLs(t *testing.T) {
	var large strings.Builder
	for i := 0; large.Len() < 70<<10; i++ {
		fmt.Fprintf(&large, "service \"svc-%d\" {\n  port = 8080\n}\n", i)
	}
	for _, tt := range []struct{ name, tail string }{
		{"project set twice", "project = \"y\"\n"},
		{"unknown attribute", "projekt = \"y\"\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			load := func(body string) []string {
				path := filepath.Join(dir, "main.hcl")
				if err := os.WriteFile(path, []byte("project = \"x\"\n"+body+tt.tail), 0o644); err != nil {
					t.Fatal(err)
				}
				_, diags := NewParser(Everything).LoadFiles([]string{path}, Inputs{})
				var out []string
				for _, d := range diags {
					out = append(out, d.Summary+": "+d.Detail)
				}
				return out
			}
			small, big := load(""), load(large.String())
			if len(small) == 0 {
				t.Fatal("the small file loads without error")
			}
			if diff := cmp.Diff(small, big); diff != "" {
				t.Errorf("diagnostics of the small file (-) and the large one (+):\n%s", diff)
			}
		})
	}
	t.Run("var file", func(t *testing.T) {
		vars := write(t, "bad.vars", "port = \n")
		spec := write(t, "main.hcl", "project = \"x\"\nvariable \"port\" {\n  default = 1\n}\n"+large.String()+"service \"last\" {\n  port = \n}\n")
		_, diags := NewParser(Everything).LoadFiles([]string{spec}, Inputs{VarFiles: []string{vars}})
		var got []string
		for _, d := range diags {
			got = append(got, filepath.Base(d.Subject.Filename)+": "+d.Summary)
		}
		want := []string{"bad.vars: Invalid expression", "main.hcl: Invalid expression"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
}

// TestEndless: a file whose comment or heredoc never ends is refused at
// its opener without being lexed (hcl's scanner takes minutes over
// 200 KB of them), also after a heredoc that does end; a comment opener
// inside a string or a heredoc is no comment.
func TestEndless(t *testing.T) {
	for _, tt := range []struct {
		name, src, want string
	}{
		{"comment openers", strings.Repeat("/*\n}\n", 40<<10), "main.hcl:1,1-3: Unterminated comment"},
		{"heredoc openers", strings.Repeat("x = <<EOT\n", 20<<10), "main.hcl:1,5-7: Unterminated template string"},
		{"after a heredoc", "project = \"x\"\nnote = <<EOT\n}\nEOT\n" + strings.Repeat("/*\n}\n", 40<<10), "main.hcl:5,1-3: Unterminated comment"},
		{"in a string and a heredoc", "project = \"x\"\nnote = \"/*\"\nmore = <<EOT\n/*\nEOT\n", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, diags := NewParser(Everything).LoadFiles([]string{write(t, "main.hcl", tt.src)}, Inputs{})
			var got []string
			for _, d := range diags {
				if d.Summary != "Unsupported argument" {
					got = append(got, filepath.Base(d.Subject.String())+": "+d.Summary)
				}
			}
			var want []string
			if tt.want != "" {
				want = []string{tt.want}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestPiecesParseAsTheWhole loads the shipped specs, every case of the
// bad-input corpus and files with heredocs, comments, nested blocks and
// an argument set twice around the cuts, once parsed whole and once cut
// at every top-level line, and requires the same config and the same
// diagnostics, positions included. Cut, the pieces that hold only object
// blocks are parsed when their blocks are decoded (parseFiles).
func TestPiecesParseAsTheWhole(t *testing.T) {
	var cases [][]string
	if files, _ := SpecFiles("../specs"); len(files) > 0 {
		cases = append(cases, files)
	}
	entries, _ := os.ReadDir("../testdata/invalid")
	for _, e := range entries {
		path := filepath.Join("../testdata/invalid", e.Name())
		files := []string{path}
		if e.IsDir() {
			files, _ = SpecFiles(path)
		}
		cases = append(cases, files)
	}
	for _, src := range []string{
		"project = \"x\"\n\nservice \"a\" {\n  port = 1\n  meta = {\n    note = <<EOT\n}\nservice \"b\" {\n}\nEOT\n  }\n}\n\nservice \"c\" {\n  port = 3\n}\n",
		"project = \"x\"\n/*\n}\nservice \"b\" {\n*/\nservice \"a\" {\n  port = 1\n}\n# }\nservice \"c\" {\n  port = 2\n  frontend {\n    rule = \"Path:/c\"\n}\n}\n",
		"project = \"x\"\n\nservice \"a\" {\n  port = 1\n  meta = {\n    team = \"edge\"\n}\n}\n\nservice \"b\" {\n  port = 2\n}\n",
		"project = \"x\"\n\nservice \"a\" {\n  port = 1\n}\n\nproject = \"y\"\n",
		"project = \"x\"\nservice \"a\" {\n  port = \n}\nservice \"b\" {\n  port = 2\n}\n",
		"project = \"x\"\nservice \"a\" {\n  port = 1\n}\nservice = 1\nservice \"b\" {\n  port = 2\n}\n",
	} {
		cases = append(cases, []string{write(t, "main.hcl", src)})
	}
	// Two files whose object blocks (parsed as they are decoded, a piece
	// at a time) come before and after the rest, in both: a service
	// declared in both, Consul's label-less form, a variable after the
	// blocks that read it, an index and a key.
	two := t.TempDir()
	for name, src := range map[string]string{
		"a.hcl": "service \"a\" {\n  port = var.p\n}\n\nproject = \"x\"\n\nsearch \"t1\" {\n  url          = \"http://127.0.0.1:9200\"\n  cluster_name = \"t1\"\n}\n\nindex \"i\" {\n  search = \"t1\"\n}\n\nkey \"apps/a\" {\n  value = \"1\"\n}\n\nservice \"b\" {\n  port = 2\n}\n",
		"b.hcl": "service \"c\" {\n  port = 3\n}\n\nservice {\n  name = \"d\"\n  port = 4\n}\n\nvariable \"p\" {\n  default = 1\n}\n\nservice \"a\" {\n  port = 5\n}\n\nindex \"j\" {\n  search = \"t1\"\n}\n",
	} {
		if err := os.WriteFile(filepath.Join(two, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cases = append(cases, []string{filepath.Join(two, "a.hcl"), filepath.Join(two, "b.hcl")}, []string{filepath.Join(two, "b.hcl"), filepath.Join(two, "a.hcl")})
	load := func(files []string, every int) (*Config, []string) {
		defer func(old int) { pieceBytes = old }(pieceBytes)
		pieceBytes = every
		p := NewParser(Everything)
		cfg, diags := p.LoadFiles(files, Inputs{})
		var out []string
		for _, d := range diags {
			in := ""
			if d.Subject != nil && p.Files()[d.Subject.Filename] != nil {
				in = p.Files()[d.Subject.Filename].Nav.(*outline).ContextString(d.Subject.Start.Byte)
			}
			out = append(out, fmt.Sprintf("%s (in %s): %s: %s", d.Subject, in, d.Summary, d.Detail))
		}
		return cfg, out
	}
	opts := cmp.Options{
		cmp.Comparer(func(a, b cty.Value) bool { return a.RawEquals(b) }),
		cmp.Comparer(func(a, b cty.Type) bool { return a.Equals(b) }),
		cmp.Comparer(func(a, b hcl.Expression) bool { return a.Range() == b.Range() }),
		cmpopts.IgnoreFields(Config{}, "Scope"), // the scope's values are the config's own
		cmp.AllowUnexported(Config{}),           // the objects of the kinds their packages decode
		cmp.Comparer(func(a, b *Language) bool { return a == b }),
		cmp.Comparer(func(a, b *PlaceSchema) bool { return a == b }),
	}
	for _, files := range cases {
		wholeCfg, wholeDiags := load(files, 0)
		cutCfg, cutDiags := load(files, 1)
		if diff := cmp.Diff(wholeDiags, cutDiags); diff != "" {
			t.Errorf("%v: diagnostics (-whole +pieces):\n%s", files, diff)
		}
		if diff := cmp.Diff(wholeCfg, cutCfg, opts); diff != "" {
			t.Errorf("%v: config (-whole +pieces):\n%s", files, diff)
		}
	}
}
