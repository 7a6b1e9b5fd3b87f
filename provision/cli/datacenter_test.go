package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/consul/api"
	"github.com/provision-dev/provision/provision/servers"
)

// TestDatacenter plans against real agents of two datacenters (two
// Consul 1.15.4 servers, dc1 and dc2). A consul block that declares dc2
// with the address of a dc1 agent was an internal error at the lock
// ("consul answered 500: No path to datacenter ... Try again later");
// with dc2 joined over the WAN, the service went to dc1's agent while the
// lock was asked of dc2. Now the plan refuses it at once, naming both
// datacenters, and sends nothing; an agent block in another datacenter is
// refused at its block; an agent of the declared datacenter applies.
func TestDatacenter(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Consul")
	}
	dc1 := servers.NewConsul(t)
	dc2 := servers.NewConsul(t, "-datacenter=dc2")
	env := map[string]string{"NO_COLOR": "1"}
	specs := func(consul, datacenter string, agents ...string) string {
		dir := t.TempDir()
		var b strings.Builder
		fmt.Fprintf(&b, "project = \"dcs\"\n\nconsul {\n  address    = %q\n  datacenter = %q\n}\n", consul, datacenter)
		for i, a := range agents {
			fmt.Fprintf(&b, "\nagent \"node-%d\" {\n  address = %q\n}\n", i, a)
		}
		agent := ""
		if len(agents) > 0 {
			agent = "\n  agent = \"node-0\""
		}
		fmt.Fprintf(&b, "\nservice \"db\" {\n  id   = \"db-1\"%s\n  port = 5432\n}\n\nkey \"apps/dcs/mode\" {\n  value = \"on\"\n}\n", agent)
		if err := os.WriteFile(filepath.Join(dir, "main.hcl"), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}

	elsewhere := specs(dc1.Addr, "dc2")
	code, out, errOut := runCLI(t, env, "plan", elsewhere)
	if code != 1 {
		t.Fatalf("a plan of dc2 through a dc1 agent exited %d, want 1:\n%s\n%s", code, out, errOut)
	}
	said := fmt.Sprintf(`The Consul agent at http://%s is in datacenter "dc1", and the consul block declares "dc2"`, dc1.Addr)
	containsAll(t, "the plan's refusal", errOut, "Error: Agent in another datacenter", "main.hcl line 3, in consul:", said, "nothing is sent")
	// apply takes the lock first: refused there, before its session.
	code, out, errOut = runCLI(t, env, "apply", "-auto-approve", elsewhere)
	if code != 1 {
		t.Fatalf("apply of dc2 through a dc1 agent exited %d, want 1:\n%s\n%s", code, out, errOut)
	}
	containsAll(t, "the apply's refusal", errOut, "Error: Cannot take the lock", said, "Nothing was sent.", `Point the address at an agent of "dc2"`)
	for _, path := range []string{"/v1/agent/service/db-1", "/v1/kv/provision/locks/dcs", "/v1/kv/apps/dcs/mode"} {
		if resp, err := http.Get("http://" + dc1.Addr + path); err != nil || resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s on dc1 after the refusal: %v %v, want 404 (nothing sent)", path, resp.Status, err)
		}
	}

	code, out, errOut = runCLI(t, env, "plan", specs(dc1.Addr, "dc1", dc1.Addr, dc2.Addr))
	if code != 1 {
		t.Fatalf("a plan with an agent of dc2 in a dc1 project exited %d, want 1:\n%s\n%s", code, out, errOut)
	}
	containsAll(t, "the refusal", errOut, "Error: Agent in another datacenter", `in agent "node-1":`,
		fmt.Sprintf(`The Consul agent "node-1" at http://%s is in datacenter "dc2", and the consul block declares "dc1"`, dc2.Addr))
	if strings.Contains(errOut, `"node-0"`) {
		t.Errorf("the agent of dc1 is named in the refusal:\n%s", errOut)
	}

	dir := specs(dc2.Addr, "dc2")
	if code, out, errOut = runCLI(t, env, "apply", "-auto-approve", dir); code != 0 {
		t.Fatalf("apply of dc2 through a dc2 agent exited %d:\n%s\n%s", code, out, errOut)
	}
	if code, out, errOut = runCLI(t, env, "plan", "-detailed-exitcode", dir); code != 0 {
		t.Errorf("the plan after the apply in dc2 exited %d, want 0:\n%s\n%s", code, out, errOut)
	}
}

// TestDatacentersAsPlaces applies one project across two real
// datacenters: a dc1 server with two client agents, and a dc2 server,
// joined to dc1 over the WAN, with one. Each datacenter is a consul
// block (dc2's labelled, as a Terraform provider alias), its fleet an
// agent block with for_each, and one module is called once per
// datacenter with its key and services. The lock is taken in each,
// dc1's first, before anything is sent: with dc2's held by another run,
// the apply sends nothing and leaves dc1's free. An agent of dc2 left in
// dc1's block, and a dc2 block that points at a dc1 server, are refused
// at plan, naming both datacenters.
func TestDatacentersAsPlaces(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Consul")
	}
	dc1 := servers.NewConsulCluster(t, "east1", "east2")
	dc2 := servers.NewConsul(t, "-datacenter=dc2", "-retry-join-wan="+dc1[0].WAN())
	west := dc2.Clients(t, "west1")[0]
	waitFor(t, "dc2 joined over the WAN", 30*time.Second, func() bool {
		body, _ := get(t, "http://"+dc1[0].Addr+"/v1/catalog/datacenters")
		return strings.Contains(body, `"dc2"`)
	})
	env := map[string]string{"NO_COLOR": "1"}
	specs := func(dc2Address, westConsul string) string {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "main.hcl"), []byte(fmt.Sprintf(`project = "span"

consul {
  address    = %q
  datacenter = "dc1"
}

consul "dc2" {
  address = %q
}

locals {
  east = { east1 = %q, east2 = %q }
  west = { west1 = %q }
}

agent "east" {
  for_each = local.east
  address  = each.value
}

agent "west" {
  for_each = local.west
  address  = each.value
  %s
}

module "dc1" {
  source = "./site"
  mode   = "east"
  agents = { for node, _ in local.east : node => agent.east[node] }
}

module "dc2" {
  source = "./site"
  consul = consul.dc2
  mode   = "west"
  agents = { for node, _ in local.west : node => agent.west[node] }
}

key "apps/span/root" {
  value = "own"
}

key "root-in-dc2" {
  path   = "apps/span/root"
  consul = consul.dc2
  value  = "dc2"
}
`, dc1[0].Addr, dc2Address, dc1[1].Addr, dc1[2].Addr, west.Addr, westConsul)), 0o644); err != nil {
			t.Fatal(err)
		}
		// The module is the docs' (an organisation's Consul).
		if err := os.CopyFS(filepath.Join(dir, "site"), os.DirFS("../../testdata/datacenters/site")); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	// dc2's block names the client agent west1: the lock's session there
	// is on its node.
	dir := specs(west.Addr, "consul = consul.dc2")

	// Another run holds the lock in dc2: the apply takes dc1's, fails at
	// dc2's, releases dc1's and sends nothing.
	other, err := api.NewClient(&api.Config{Address: dc2.Addr})
	if err != nil {
		t.Fatal(err)
	}
	held, err := other.LockKey("provision/locks/span")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := held.Lock(nil); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, env, "apply", "-auto-approve", "-lock-timeout=1s", dir)
	if code != 1 {
		t.Fatalf("apply with dc2's lock held exited %d, want 1:\n%s\n%s", code, out, errOut)
	}
	containsAll(t, "the refusal", errOut, "Error: Cannot take the lock", `in datacenter "dc2" (the lock in "dc1" was taken and released)`, "the lock provision/locks/span is held")
	for _, c := range []*servers.Consul{dc1[1], dc1[2], west} {
		if body, _ := get(t, "http://"+c.Addr+"/v1/agent/services"); strings.Contains(body, "web-") {
			t.Errorf("%s has a service after the refused apply: %s", c.Node, body)
		}
	}
	for _, c := range []*servers.Consul{dc1[0], dc2} {
		if _, status := get(t, "http://"+c.Addr+"/v1/kv/apps/span/mode"); status != http.StatusNotFound {
			t.Errorf("the key on %s after the refused apply: %d, want 404", c.Addr, status)
		}
	}
	if body, status := get(t, "http://"+dc1[0].Addr+"/v1/kv/provision/locks/span"); status == http.StatusOK && strings.Contains(body, `"Session"`) {
		t.Errorf("dc1's lock is still held after the refused apply: %s", body)
	}
	if err := held.Unlock(); err != nil {
		t.Fatal(err)
	}

	// One path in each datacenter, in one module (the root): key["..."]
	// is the project's own datacenter's, consul.dc2.key["..."] dc2's, for
	// -target and for a saved plan alike.
	code, out, errOut = runCLI(t, env, "plan", "-target", `key["apps/span/root"]`, dir)
	if code != 0 {
		t.Fatalf("plan -target of dc1's root key exited %d:\n%s\n%s", code, out, errOut)
	}
	containsAll(t, "the targeted plan", out, "Plan: 1 to create, 0 to update, 0 to delete.", `+ key["apps/span/root"]`)
	plan := filepath.Join(t.TempDir(), "span.plan")
	if code, out, errOut = runCLI(t, env, "plan", "-out", plan, dir); code != 0 {
		t.Fatalf("plan -out across dc1 and dc2 exited %d:\n%s\n%s", code, out, errOut)
	}
	code, out, errOut = runCLI(t, env, "apply", plan)
	if code != 0 {
		t.Fatalf("apply of the saved plan across dc1 and dc2 exited %d:\n%s\n%s", code, out, errOut)
	}
	containsAll(t, "the apply", out, "Apply complete: 7 created, 0 updated, 0 deleted.",
		`module.dc2.consul.dc2.key["apps/span/mode"]`, `module.dc1.key["apps/span/mode"]`, `module.dc2.agent.west["west1"].service.web-west1`,
		`consul.dc2.key["apps/span/root"]`)
	for c, want := range map[*servers.Consul]string{dc1[0]: "east", dc2: "west"} {
		if body, _ := get(t, "http://"+c.Addr+"/v1/kv/apps/span/mode?raw"); body != want {
			t.Errorf("the key on %s: %q, want %q", c.Addr, body, want)
		}
	}
	for c, want := range map[*servers.Consul]string{dc1[0]: "own", dc2: "dc2"} {
		if body, _ := get(t, "http://"+c.Addr+"/v1/kv/apps/span/root?raw"); body != want {
			t.Errorf("the root key on %s: %q, want %q", c.Addr, body, want)
		}
	}
	for c, ids := range map[*servers.Consul][]string{dc1[1]: {"web-east1"}, dc1[2]: {"web-east2"}, west: {"web-west1"}} {
		body, _ := get(t, "http://"+c.Addr+"/v1/agent/services")
		for _, id := range ids {
			if !strings.Contains(body, `"`+id+`"`) {
				t.Errorf("%s lacks %s: %s", c.Node, id, body)
			}
		}
	}
	waitFor(t, "web-west1 in dc2's catalog, on west1", 30*time.Second, func() bool {
		body, _ := get(t, "http://"+dc2.Addr+"/v1/catalog/service/web")
		var entries []struct{ ServiceID, Node, Datacenter string }
		return json.Unmarshal([]byte(body), &entries) == nil && len(entries) == 1 &&
			entries[0] == struct{ ServiceID, Node, Datacenter string }{"web-west1", "west1", "dc2"}
	})
	if code, out, errOut = runCLI(t, env, "plan", "-detailed-exitcode", dir); code != 0 {
		t.Errorf("the plan after the apply exited %d, want 0:\n%s\n%s", code, out, errOut)
	}
	// The policy lets the token take the lock in each datacenter.
	if code, out, errOut = runCLI(t, env, "policy", dir); code != 0 {
		t.Fatalf("policy exited %d:\n%s\n%s", code, out, errOut)
	}
	containsAll(t, "the policy", out, `session "provision-test" {`, `session "west1" {`)

	// dc2's agent declared in dc1 (its block without consul), then dc2's
	// block pointing at a dc1 server: each refused at plan.
	code, out, errOut = runCLI(t, env, "plan", specs(dc2.Addr, ""))
	if code != 1 {
		t.Fatalf("a plan with dc2's agent in dc1's block exited %d, want 1:\n%s\n%s", code, out, errOut)
	}
	containsAll(t, "the agent's refusal", errOut, "Error: Agent in another datacenter",
		fmt.Sprintf(`The Consul agent agent.west["west1"] at http://%s is in datacenter "dc2", and the consul block declares "dc1"`, west.Addr))
	code, out, errOut = runCLI(t, env, "plan", specs(dc1[0].Addr, "consul = consul.dc2"))
	if code != 1 {
		t.Fatalf("a plan with dc2's block at a dc1 server exited %d, want 1:\n%s\n%s", code, out, errOut)
	}
	containsAll(t, "the block's refusal", errOut, "Error: Agent in another datacenter", `in consul "dc2":`,
		fmt.Sprintf(`The Consul agent at http://%s is in datacenter "dc1", and the consul "dc2" block declares "dc2"`, dc1[0].Addr))
}

// get reads url: its body and status (0 when it cannot be read).
func get(t *testing.T, url string) (string, int) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		return err.Error(), 0
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return string(body), resp.StatusCode
}
