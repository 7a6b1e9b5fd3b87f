// Package golden compares test output with golden files under testdata,
// and rewrites them when the tests run with -update. Read the diff of a
// rewritten golden file before committing it.
package golden

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/provision-dev/provision/provision/cli/render"
	"github.com/provision-dev/provision/provision/plans"
)

var update = flag.Bool("update", false, "rewrite the golden files with the output of this run")

// Check compares got with the golden file at path, or writes it with -update.
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%s: %v (run the test with -update to create it)", path, err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s differs (-want +got):\n%s", path, diff)
	}
}

// CheckPlan compares the text and the JSON views of a plan with
// <base>.txt and <base>.json.
func CheckPlan(t testing.TB, base string, p *plans.Plan) {
	t.Helper()
	var text bytes.Buffer
	if err := render.Text(&text, p.Redacted(), render.TextOptions{}); err != nil {
		t.Fatal(err)
	}
	Check(t, base+".txt", text.Bytes())
	js, err := json.MarshalIndent(p.Redacted(), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	Check(t, base+".json", append(js, '\n'))
}
