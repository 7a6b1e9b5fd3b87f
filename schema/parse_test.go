package schema

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// TestPiecesParseAsTheWhole loads the shipped specs, every case of the
// bad-input corpus and files with heredocs, comments and nested blocks
// around the cuts, once in one piece and twice cut after every lone "}"
// (the second time with the heads decoded first, as a plan loads), and
// requires the same config and the same diagnostics, positions included.
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
	dir := t.TempDir()
	for name, src := range map[string]string{
		"heredoc.hcl": "project = \"x\"\n\nservice \"a\" {\n  port = 1\n  meta = {\n    note = <<EOT\n}\nservice \"b\" {\n}\nEOT\n  }\n}\n\nservice \"c\" {\n  port = 3\n}\n",
		"comment.hcl": "project = \"x\"\n/*\n}\nservice \"b\" {\n*/\nservice \"a\" {\n  port = 1\n}\n# }\nservice \"c\" {\n  port = 2\n  frontend {\n    rule = \"Path:/c\"\n}\n}\n",
		"object.hcl":  "project = \"x\"\n\nservice \"a\" {\n  port = 1\n  meta = {\n    team = \"edge\"\n}\n}\n\nservice \"b\" {\n  port = 2\n}\n",
	} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		cases = append(cases, []string{path})
	}
	load := func(files []string, min int, in Inputs) (*Config, []string) {
		defer func(old int) { chunkMin = old }(chunkMin)
		chunkMin = min
		p := NewParser()
		cfg, diags := p.LoadFiles(files, in)
		var out []string
		for _, d := range diags {
			in := ""
			if d.Subject != nil && p.Files()[d.Subject.Filename] != nil {
				in = p.Files()[d.Subject.Filename].Nav.(outline).ContextString(d.Subject.Start.Byte)
			}
			out = append(out, fmt.Sprintf("%s (in %s): %s: %s", d.Subject, in, d.Summary, d.Detail))
		}
		return cfg, out
	}
	opts := cmp.Options{
		cmp.Comparer(func(a, b cty.Value) bool { return a.RawEquals(b) }),
		cmp.Comparer(func(a, b cty.Type) bool { return a.Equals(b) }),
		cmp.Comparer(func(a, b hcl.Expression) bool { return a.Range() == b.Range() }),
	}
	for _, files := range cases {
		wholeCfg, wholeDiags := load(files, 1<<30, Inputs{})
		for name, in := range map[string]Inputs{"pieces": {}, "heads first": {Connected: func(*Config) {}}} {
			cutCfg, cutDiags := load(files, 1, in)
			if diff := cmp.Diff(wholeDiags, cutDiags); diff != "" {
				t.Errorf("%v: diagnostics (-whole +%s):\n%s", files, name, diff)
			}
			if diff := cmp.Diff(wholeCfg, cutCfg, opts); diff != "" {
				t.Errorf("%v: config (-whole +%s):\n%s", files, name, diff)
			}
		}
	}
}

// TestConnected: the load hands over where the live systems are before
// it decodes the services, and not at all when that is in error. In a
// file in pieces, that is before the pieces of services only are parsed:
// one that does not parse does not hold it back.
func TestConnected(t *testing.T) {
	valid := "project = \"x\"\n\nconsul {\n  address = \"127.0.0.1:8500\"\n}\n\nservice \"api\" {\n  port = 8080\n}\n"
	for _, tt := range []struct {
		name, src string
		chunk     int
		called    bool
	}{
		{"valid", valid, 0, true},
		{"bad consul block", "project = \"x\"\n\nconsul {\n  address = 1 +\n}\n\nservice \"api\" {\n  port = 8080\n}\n", 0, false},
		{"bad service", "project = \"x\"\n\nconsul {\n  address = \"127.0.0.1:8500\"\n}\n\nservice \"api\" {\n  port = \"eighty\"\n}\n", 0, true},
		{"service that does not parse, in one piece", valid + "\nservice \"web\" {\n  port = \n}\n", 0, false},
		{"service that does not parse, in its own piece", valid + "\nservice \"web\" {\n  port = \n}\n", 1, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.chunk > 0 {
				defer func(old int) { chunkMin = old }(chunkMin)
				chunkMin = tt.chunk
			}
			path := filepath.Join(t.TempDir(), "main.hcl")
			if err := os.WriteFile(path, []byte(tt.src), 0o644); err != nil {
				t.Fatal(err)
			}
			var seen *Config
			cfg, _ := NewParser().LoadFiles([]string{path}, Inputs{Connected: func(c *Config) { seen = c }})
			if (seen != nil) != tt.called {
				t.Fatalf("called: %v, want %v", seen != nil, tt.called)
			}
			if seen == nil {
				return
			}
			if seen.Project != "x" || seen.Consul == nil || seen.Consul.Address != "127.0.0.1:8500" || len(seen.Services) != 0 {
				t.Errorf("handed %+v, want the project and the consul block, no service yet", seen)
			}
			if seen == cfg {
				t.Error("handed the Config the load goes on decoding, not a copy")
			}
		})
	}
}
