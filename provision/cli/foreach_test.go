package cli

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/provision-dev/provision/provision/plans"
	"github.com/provision-dev/provision/provision/servers"
)

const forEachSpec = `project = "each"

variable "apps" {
  type = map(number)
}

variable "logs" {
  type = set(string)
}

variable "search_url" {
  type = string
}

locals {
  team = "edge"
}

service "app" {
  for_each = var.apps
  port     = each.value
  meta     = { team = local.team }
}

search "t1" {
  url          = var.search_url
  cluster_name = "each"
}

index "logs" {
  for_each = var.logs
  search   = "t1"
  mapping "doc" {
    properties = { title = "string", key = { type = "string", null_value = each.key } }
  }
}
`

// TestForEachInstances applies a spec whose services (on a real Consul
// agent) and indices (on a real Elasticsearch 2.4.1) come from for_each,
// then removes one key of each and sees exactly those instances deleted.
func TestForEachInstances(t *testing.T) {
	agent := servers.NewConsul(t)
	es := servers.NewCluster(t, "each")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.hcl"), []byte(forEachSpec), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"CONSUL_HTTP_ADDR": agent.Addr, "NO_COLOR": "1"}
	both := []string{"-var", "search_url=" + es.URL, "-var", "apps={ api = 18500, jobs = 18501 }", "-var", `logs=["a", "b"]`}
	one := []string{"-var", "search_url=" + es.URL, "-var", "apps={ api = 18500 }", "-var", `logs=["a"]`}

	changes := func(t *testing.T, args ...string) []string {
		t.Helper()
		code, out, errOut := runCLI(t, env, append(append([]string{"plan", "-json", "-prune-indices"}, args...), dir)...)
		if code != exitOK {
			t.Fatalf("plan: exit %d\n%s%s", code, out, errOut)
		}
		p := decodePlan(t, out)
		var got []string
		for _, c := range p.Changes {
			if c.Action == plans.NoOp {
				continue
			}
			line := c.Action.String() + " " + c.Addr.String()
			if c.EachKey != nil {
				line += " each.key=" + *c.EachKey
			}
			got = append(got, line)
		}
		return got
	}
	apply := func(t *testing.T, args ...string) {
		t.Helper()
		if code, out, errOut := runCLI(t, env, append(append([]string{"apply", "-auto-approve", "-prune-indices"}, args...), dir)...); code != exitOK {
			t.Fatalf("apply: exit %d\n%s%s", code, out, errOut)
		}
	}
	live := func(t *testing.T) []string {
		t.Helper()
		var got []string
		for _, u := range []string{"http://" + agent.Addr + "/v1/agent/service/app-api", "http://" + agent.Addr + "/v1/agent/service/app-jobs",
			es.URL + "/logs-a", es.URL + "/logs-b"} {
			resp, err := http.Get(u)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				got = append(got, filepath.Base(u))
			}
		}
		return got
	}

	want := []string{"create service.app-api each.key=api", "create service.app-jobs each.key=jobs",
		"create index.logs-a each.key=a", "create index.logs-b each.key=b"}
	if diff := cmp.Diff(want, changes(t, both...)); diff != "" {
		t.Errorf("first plan (-want +got):\n%s", diff)
	}
	apply(t, both...)
	if diff := cmp.Diff([]string{"app-api", "app-jobs", "logs-a", "logs-b"}, live(t)); diff != "" {
		t.Errorf("live after the first apply (-want +got):\n%s", diff)
	}
	if got := changes(t, both...); len(got) != 0 {
		t.Errorf("converged plan has changes: %v", got)
	}

	want = []string{"delete service.app-jobs", "delete index.logs-b"}
	if diff := cmp.Diff(want, changes(t, one...)); diff != "" {
		t.Errorf("plan without one key (-want +got):\n%s", diff)
	}
	apply(t, one...)
	if diff := cmp.Diff([]string{"app-api", "logs-a"}, live(t)); diff != "" {
		t.Errorf("live after removing one key (-want +got):\n%s", diff)
	}
}
