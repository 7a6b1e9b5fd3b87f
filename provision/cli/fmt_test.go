package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFmtTree: fmt -check finds a misformatted file of a module the specs
// call (and, with -recursive, one of the tests), -check -diff prints the
// diff and leaves every byte as it was, and fmt rewrites them.
func TestFmtTree(t *testing.T) {
	dir := t.TempDir()
	bad := "variable \"port\" {\n    type = number\n}\n"
	files := map[string]string{
		"main.hcl":                "project = \"f\"\n\nmodule \"m\" {\n  source = \"./modules/m\"\n  port   = 1\n}\n",
		"modules/m/main.hcl":      bad,
		"tests/bad.provtest.hcl":  "run \"x\" {\n      expect_no_changes = true\n}\n",
		"modules/unused/main.hcl": bad,
	}
	for name, src := range files {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, out, errOut := runCLI(t, nil, "fmt", "-check", "-diff", dir)
	if code != exitUnformatted || !strings.Contains(out, filepath.Join(dir, "modules", "m", "main.hcl")) || !strings.Contains(out, "-    type = number") ||
		strings.Contains(out, "unused") || strings.Contains(out, "provtest") {
		t.Errorf("fmt -check -diff: exit %d\n%s%s", code, out, errOut)
	}
	for name, src := range files {
		if b, _ := os.ReadFile(filepath.Join(dir, name)); string(b) != src {
			t.Errorf("fmt -check -diff rewrote %s", name)
		}
	}
	code, out, _ = runCLI(t, nil, "fmt", "-check", "-recursive", dir)
	if code != exitUnformatted || !strings.Contains(out, "bad.provtest.hcl") || !strings.Contains(out, "unused") {
		t.Errorf("fmt -check -recursive: exit %d\n%s", code, out)
	}
	if code, _, _ := runCLI(t, nil, "fmt", dir); code != exitOK {
		t.Fatalf("fmt: exit %d", code)
	}
	if code, out, _ := runCLI(t, nil, "fmt", "-check", dir); code != exitOK {
		t.Errorf("after fmt: exit %d\n%s", code, out)
	}
}
