package main

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
