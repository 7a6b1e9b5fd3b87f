package servers

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// dashboardsOn is the declaration of specs/project.hcl's dashboards
// variable, whose default AreaA turns off.
const dashboardsOn = "variable \"dashboards\" {\n  type        = bool\n  default     = true"

// AreaA copies the shipped specs of the gated API from the specs
// directory root into dir, as the seed has it: project.hcl, gated-api.hcl
// (with the edge team alone: the seed's gated-api-1 on Path:/api) and the
// modules it calls, with the dashboard objects off (dashboards = false),
// for tests that run no search cluster.
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
	lines := strings.SplitAfter(string(api), "\n")
	edge := slices.DeleteFunc(lines, func(l string) bool { return strings.HasPrefix(l, "    billing ") })
	if len(edge) != len(strings.SplitAfter(string(api), "\n"))-1 {
		t.Fatalf("%s/gated-api.hcl has no billing instance to leave out", root)
	}
	if err := os.WriteFile(filepath.Join(dir, "gated-api.hcl"), []byte(strings.Join(edge, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(filepath.Join(dir, "modules"), os.DirFS(filepath.Join(root, "modules"))); err != nil {
		t.Fatal(err)
	}
}
