package cli

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/provision-dev/provision/provision/servers"
)

// TestFleetAsData declares a fleet of real client agents as data: one
// agent block with for_each over a map of nodes, and services placed by
// reference (agent = agent.fleet[each.value]). Adding a node is one line
// of the map, moving a service one value, and each plan touches only
// what changed.
func TestFleetAsData(t *testing.T) {
	cluster := servers.NewConsulCluster(t, "n1", "n2", "n3")
	server := cluster[0]
	dir := t.TempDir()
	write := func(nodes int, services map[string]string) {
		t.Helper()
		var b strings.Builder
		fmt.Fprintf(&b, "project = \"fleet\"\n\nconsul {\n  address = %q\n}\n\nlocals {\n  nodes = {\n", server.Addr)
		for i := range nodes {
			fmt.Fprintf(&b, "    n%d = %q\n", i+1, cluster[i+1].Addr)
		}
		b.WriteString("  }\n  services = {\n")
		for _, id := range slices.Sorted(maps.Keys(services)) {
			fmt.Fprintf(&b, "    %s = %q\n", id, services[id])
		}
		b.WriteString(`  }
}

agent "fleet" {
  for_each = local.nodes
  address  = each.value
}

service "app" {
  for_each = local.services
  id       = each.key
  agent    = agent.fleet[each.value]
  port     = 9000
}
`)
		if err := os.WriteFile(filepath.Join(dir, "main.hcl"), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := map[string]string{}
	plan := func(t *testing.T, args ...string) []string {
		t.Helper()
		code, out, errOut := runCLI(t, env, append(append([]string{"plan", "-json"}, args...), dir)...)
		if code != exitOK {
			t.Fatalf("plan: exit %d\n%s", code, errOut)
		}
		return changed(decodePlan(t, out), actionAddr)
	}

	t.Run("a fleet of two", func(t *testing.T) {
		write(2, map[string]string{"web": "n1", "jobs": "n2"})
		out := applied(t, env, dir)
		containsAll(t, "apply output", out, `agent.fleet["n1"].service.web: PUT /v1/agent/service/register: ok`,
			`agent.fleet["n2"].service.jobs: PUT /v1/agent/service/register: ok`, "Apply complete: 2 created, 0 updated, 0 deleted.")
		waitCatalog(t, server.Addr, "app", []string{"n1/web", "n2/jobs"})
	})

	t.Run("a node added is a line", func(t *testing.T) {
		write(3, map[string]string{"web": "n1", "jobs": "n2", "mail": "n3"})
		if diff := cmp.Diff([]string{`create agent.fleet["n3"].service.mail`}, plan(t)); diff != "" {
			t.Errorf("the new node's plan (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{`create agent.fleet["n3"].service.mail`}, plan(t, `-target=agent.fleet["n3"].service.mail`)); diff != "" {
			t.Errorf("the instance's address as a target (-want +got):\n%s", diff)
		}
		applied(t, env, dir)
		waitCatalog(t, server.Addr, "app", []string{"n1/web", "n2/jobs", "n3/mail"})
	})

	t.Run("a service moved is a value", func(t *testing.T) {
		write(3, map[string]string{"web": "n1", "jobs": "n3", "mail": "n3"})
		if diff := cmp.Diff([]string{`create agent.fleet["n3"].service.jobs`, `delete agent.fleet["n2"].service.jobs`}, plan(t)); diff != "" {
			t.Errorf("the move's plan (-want +got):\n%s", diff)
		}
		applied(t, env, dir)
		waitCatalog(t, server.Addr, "app", []string{"n1/web", "n3/jobs", "n3/mail"})
		if got := plan(t); len(got) != 0 {
			t.Errorf("converged fleet plans %v", got)
		}
	})

	t.Run("a node down is left out", func(t *testing.T) {
		cluster[3].Stop()
		write(3, map[string]string{"web": "n1", "jobs": "n3", "mail": "n3", "api": "n1"})
		code, _, errOut := runCLI(t, env, "plan", dir)
		if code != exitError || !strings.Contains(errOut, `Cannot read the Consul agent agent.fleet["n3"]`) {
			t.Fatalf("plan with n3 down: exit %d\n%s", code, errOut)
		}
		for arg, want := range map[string]string{
			`-exclude=agent.fleet["n9"]`: `-exclude agent.fleet["n9"] names no agent the specs declare (agent.fleet["n1"], agent.fleet["n2"], agent.fleet["n3"])`,
			`-exclude=search.t1`:         "-exclude search.t1: only an agent can be left out whole",
		} {
			if code, _, errOut := runCLI(t, env, "plan", arg, dir); code != exitError || !strings.Contains(errOut, want) {
				t.Errorf("plan %s: exit %d, want an error saying %q:\n%s", arg, code, want, errOut)
			}
		}
		leaveOut := `-exclude=agent.fleet["n3"]`
		code, out, errOut := runCLI(t, env, "plan", "-json", leaveOut, dir)
		if code != exitOK {
			t.Fatalf("plan %s: exit %d\n%s", leaveOut, code, errOut)
		}
		p := decodePlan(t, out)
		if diff := cmp.Diff([]string{`create agent.fleet["n1"].service.api`}, changed(p, actionAddr)); diff != "" {
			t.Errorf("the plan without n3 (-want +got):\n%s", diff)
		}
		var said []string
		for _, d := range p.Diagnostics {
			said = append(said, d.Summary)
		}
		if diff := cmp.Diff([]string{"Agent left out"}, said); diff != "" {
			t.Errorf("what the plan says (-want +got):\n%s", diff)
		}
		saved := filepath.Join(t.TempDir(), "p.plan")
		if code, out, errOut := runCLI(t, env, "plan", leaveOut, "-out", saved, dir); code != exitOK {
			t.Fatalf("plan -out: exit %d\n%s%s", code, out, errOut)
		}
		code, out, errOut = runCLI(t, env, "apply", saved)
		if code != exitOK {
			t.Fatalf("apply of the plan made without n3: exit %d\n%s%s", code, out, errOut)
		}
		containsAll(t, "apply output", out, `agent.fleet["n1"].service.api: PUT /v1/agent/service/register: ok`, "Apply complete: 1 created, 0 updated, 0 deleted.")
		if code, out, errOut := runCLI(t, env, "plan", "-detailed-exitcode", leaveOut, dir); code != exitOK || strings.Contains(errOut, "Services on an agent this plan does not read") {
			t.Errorf("after the apply without n3: exit %d\n%s%s", code, out, errOut)
		}
	})
}
