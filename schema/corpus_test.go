package schema_test

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision/langtest"
	"github.com/provision-dev/provision/schema"
)

// marker is an expected diagnostic written inline in a bad spec: the
// diagnostic's subject starts on the marker's line (which may hold
// several, in the order they are reported).
var marker = regexp.MustCompile(`# (ERROR|WARNING): ([^#]+)`)

// TestInvalidCorpus loads every spec of testdata/invalid (a file, or a
// directory of files) and compares its diagnostics, as "file:line: severity:
// summary", with the markers in the files.
func TestInvalidCorpus(t *testing.T) {
	entries, err := os.ReadDir("../testdata/invalid")
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) < 60 {
		t.Fatalf("the corpus holds %d cases; it must hold at least 60", len(entries))
	}
	for _, e := range entries {
		path := filepath.Join("../testdata/invalid", e.Name())
		t.Run(e.Name(), func(t *testing.T) {
			files := []string{path}
			if e.IsDir() {
				files, _ = schema.SpecFiles(path)
			}
			var want []string
			for _, f := range files {
				want = append(want, markers(t, f)...)
			}
			if len(want) == 0 {
				t.Fatalf("%s has no # ERROR: or # WARNING: marker; every bad spec says what it must produce", path)
			}
			_, diags := schema.NewParser(langtest.Language).LoadFiles(files, schema.Inputs{})
			got := describe(diags)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("diagnostics (-want +got):\n%s\nall diagnostics:\n%s", diff, diags)
			}
			for _, d := range diags {
				if d.Detail == "" {
					t.Errorf("%q has no detail: every diagnostic says what was found and what to do", d.Summary)
				}
			}
		})
	}
}

func markers(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		for _, m := range marker.FindAllStringSubmatch(sc.Text(), -1) {
			out = append(out, fmt.Sprintf("%s:%d: %s: %s", filepath.Base(path), line, severity(m[1]), strings.TrimSpace(m[2])))
		}
	}
	return out
}

func severity(s string) string {
	if s == "WARNING" {
		return "warning"
	}
	return "error"
}

func describe(diags hcl.Diagnostics) []string {
	var out []string
	for _, d := range diags {
		sev := "error"
		if d.Severity == hcl.DiagWarning {
			sev = "warning"
		}
		where := "?:0"
		if d.Subject != nil {
			where = fmt.Sprintf("%s:%d", filepath.Base(d.Subject.Filename), d.Subject.Start.Line)
		}
		out = append(out, fmt.Sprintf("%s: %s: %s", where, sev, d.Summary))
	}
	return out
}
