package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/provision-dev/provision/provision/servers"
)

// TestOneCauseOnRealServers: 300 document writes that a real
// Elasticsearch 2.4.1 refuses for one reason (a write block on their
// index) are one error and one progress line with a count, and the
// report of what was done and what was not still names each.
func TestOneCauseOnRealServers(t *testing.T) {
	es := servers.NewCluster(t, "cause")
	dir := t.TempDir()
	spec := `project = "cause"

variable "search_url" {
  type = string
}

variable "title" {
  type = string
}

search "t1" {
  url          = var.search_url
  cluster_name = "cause"
}

index "blocked-docs" {
  search = "t1"
  mapping "search" {
    properties = { title = "string" }
  }
}

document "search" "s" {
  for_each = toset([for i in range(300) : tostring(i)])
  source   = { title = "${var.title} ${each.key}" }
}
`
	if err := os.WriteFile(filepath.Join(dir, "main.hcl"), []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"NO_COLOR": "1"}
	apply := func(title string) (int, string, string) {
		return runCLI(t, env, "apply", "-auto-approve", "-var", "search_url="+es.URL, "-var", "title="+title, dir)
	}
	if code, out, errOut := apply("first"); code != exitOK {
		t.Fatalf("apply: exit %d\n%s%s", code, out, errOut)
	}
	esDo(t, es.URL, "PUT", "/blocked-docs/_settings", `{"index.blocks.write": true}`)
	code, out, errOut := apply("second")
	if code != exitError {
		t.Fatalf("apply into a write-blocked index: exit %d\n%s%s", code, out, errOut)
	}
	if n := strings.Count(errOut, "Error: "); n != 1 || !strings.Contains(errOut, "300 changes (") {
		t.Errorf("%d errors, want one naming the 300 changes:\n%s", n, errOut)
	}
	if n := strings.Count(out, "FAILED"); n != 2 || !strings.Contains(out, "... and 299 more changes FAILED the same way") {
		t.Errorf("%d progress lines say FAILED, want the first and the count:\n%s", n, out)
	}
	if n := strings.Count(errOut, "failed:   document[\"blocked-docs/search/s-"); n < 300 {
		t.Errorf("the report of what was done names %d documents, want each of the 300", n)
	}
	t.Logf("%s%s", out[strings.Index(out, "[1/"):], errOut[:min(len(errOut), 900)])
}
