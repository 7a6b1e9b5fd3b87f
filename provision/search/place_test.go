package search

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestClustersAsData: a search block with for_each is one cluster per
// element, search.<label>["<key>"], and an index names its cluster by
// reference; a cluster that holds one is a backend of its own, its
// indices addressed after it.
func TestClustersAsData(t *testing.T) {
	path := filepath.Join(t.TempDir(), "main.hcl")
	src := `project = "x"

search "member" {
  for_each     = { t1 = "http://127.0.0.1:9200", t2 = "http://127.0.0.1:9201" }
  url          = each.value
  cluster_name = each.key
}

index "logs" {
  search = search.member["t2"]
  mapping "doc" {
    properties = {
      message = "string"
    }
  }
}
`
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := loadFiles(t, []string{path})
	var clusters, declared, backends []string
	for _, s := range Searches(cfg) {
		clusters = append(clusters, s.Name+" "+s.ClusterName+" "+s.URLs[0])
	}
	for _, a := range cfg.Declared() {
		declared = append(declared, a.String())
	}
	bs, diags := New(cfg, Options{Env: noEnv})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	for _, b := range bs {
		backends = append(backends, b.Info().Name)
	}
	for _, c := range []struct {
		what      string
		want, got []string
	}{
		{"clusters", []string{`member["t1"] t1 http://127.0.0.1:9200`, `member["t2"] t2 http://127.0.0.1:9201`}, clusters},
		{"declared addresses", []string{`search.member["t2"].index.logs`}, declared},
		{"backends (of the clusters that hold an index)", []string{`search.member["t2"]`}, backends},
	} {
		if diff := cmp.Diff(c.want, c.got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", c.what, diff)
		}
	}
}
