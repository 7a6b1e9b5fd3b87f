package servers

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// dashboardsOn is the declaration of specs/project.hcl's dashboards
// variable, whose default AreaA turns off.
const dashboardsOn = "variable \"dashboards\" {\n  type        = bool\n  default     = true"

// AreaA copies the shipped specs of the gated APIs from the specs
// directory root into dir: project.hcl, gated-api.hcl and the modules it
// calls, with the teams' dashboard objects off (dashboards = false), for
// tests that run no search cluster.
func AreaA(t testing.TB, root, dir string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "project.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), dashboardsOn) {
		t.Fatalf("%s/project.hcl has no variable \"dashboards\" whose default is true", root)
	}
	off := strings.Replace(string(b), dashboardsOn, strings.TrimSuffix(dashboardsOn, "true")+"false", 1)
	if err := os.WriteFile(filepath.Join(dir, "project.hcl"), []byte(off), 0o644); err != nil {
		t.Fatal(err)
	}
	api, err := os.ReadFile(filepath.Join(root, "gated-api.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "gated-api.hcl"), api, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(filepath.Join(dir, "modules"), os.DirFS(filepath.Join(root, "modules"))); err != nil {
		t.Fatal(err)
	}
}
