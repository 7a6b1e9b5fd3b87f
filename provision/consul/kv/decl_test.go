package kv

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/provision-dev/provision/schema"
)

// TestKeyForEach: key blocks take for_each as the other kinds do: each
// instance's path is "<label>/<each.key>", or its path attribute; an
// instance whose path is not a key's is refused at its attribute, and two
// instances of one path are one duplicate.
func TestKeyForEach(t *testing.T) {
	for _, tt := range []struct {
		name, src string
		paths     []string
		diags     []string
	}{
		{"label and key", `key "apps/edge" {
  for_each = { limits = { rate = 100 }, mode = "on" }
  value    = each.value
}`, []string{"apps/edge/limits", "apps/edge/mode"}, nil},
		{"path attribute", `key "flags" {
  for_each = toset(["a", "b"])
  path     = "apps/${each.key}/flag"
  value    = true
}`, []string{"apps/a/flag", "apps/b/flag"}, nil},
		{"bad path", `key "k" {
  for_each = toset(["a"])
  path     = "/abs/${each.key}"
  value    = 1
}`, nil, []string{"main.hcl:5,14-32: Invalid key path"}},
		{"one path twice", `key "k" {
  for_each = toset(["a", "b"])
  path     = "apps/same"
  value    = 1
}`, nil, []string{"main.hcl:5,14-25: Duplicate key block"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "main.hcl")
			if err := os.WriteFile(path, []byte("project = \"x\"\n\n"+tt.src+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			cfg, diags := schema.NewParser(schema.NewLanguage([]*schema.KindSchema{KeyBlock}, nil)).LoadFiles([]string{path}, schema.Inputs{})
			var got []string
			for _, d := range diags {
				got = append(got, filepath.Base(d.Subject.String())+": "+d.Summary)
			}
			if diff := cmp.Diff(tt.diags, got); diff != "" {
				t.Fatalf("diagnostics (-want +got):\n%s", diff)
			}
			if tt.diags != nil {
				return
			}
			var paths []string
			for _, k := range Keys(cfg) {
				paths = append(paths, k.Name)
			}
			if diff := cmp.Diff(tt.paths, paths); diff != "" {
				t.Errorf("paths (-want +got):\n%s", diff)
			}
		})
	}
}
