package search

import (
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision/plans"
)

// TestRedIndex: on a real Elasticsearch 2.4.1, an index whose primary
// cannot be allocated (its allocation requires a node that is not there:
// what a stopped node leaves) is red, and the plan says so once, at the
// index block: an error when the plan writes into it, a warning when it
// does not.
func TestRedIndex(t *testing.T) {
	es := cluster(t).T1
	esDo(t, es.URL, "PUT", "/red-docs", `{"settings":{"number_of_shards":1,"number_of_replicas":0,"index.routing.allocation.require._name":"a-node-that-is-down"}}`)
	t.Cleanup(func() { esDo(t, es.URL, "DELETE", "/red-docs", "") })
	spec := `project = "red"

variable "search_url" {
  type = string
}

search "t1" {
  url          = var.search_url
  cluster_name = "t1"
}

index "red-docs" {
  search = "t1"
  mapping "doc" {
    properties = { title = "string" }
  }
}
`
	red := func(files map[string]string) []string {
		t.Helper()
		_, changes, diags := plan(t, load(t, files, "search_url="+es.URL), plans.Converge)
		var out []string
		for _, d := range diags {
			if d.Summary == "Index is red" {
				sev := "warning"
				if d.Severity == hcl.DiagError {
					sev = "error"
				}
				out = append(out, sev+": "+d.Detail)
			}
		}
		t.Logf("%d changes", len(changes))
		return out
	}
	// The import writes the marks into the red index: refused.
	got := red(map[string]string{"main.hcl": spec, "import.hcl": "import {\n  to = index.red-docs\n}\n"})
	if len(got) != 1 || !strings.HasPrefix(got[0], "error: ") || !strings.Contains(got[0], `The index "red-docs" on cluster t1 is red: its primary shard 0 has no copy allocated`) || !strings.Contains(got[0], "This plan writes into it (1 change)") {
		t.Errorf("an import into a red index: %q", got)
	}
}
