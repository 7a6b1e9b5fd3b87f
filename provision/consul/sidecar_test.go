package consul

import (
	"fmt"
	"strings"
	"testing"

	"github.com/provision-dev/provision/provision/internal/backendtest"
	"github.com/provision-dev/provision/provision/plans"
	"github.com/provision-dev/provision/provision/servers"
)

// TestSidecarConverges: a service with a declared sidecar, its checks of
// each kind the agent runs here (none declared: the agent's own; one; and
// several, which the agent numbers), is registered on a real Consul
// agent, then plans nothing; and its changes done in memory (Converge,
// what provision test checks) plan nothing either: the two verdicts agree.
func TestSidecarConverges(t *testing.T) {
	agent := servers.NewConsul(t, "-hcl=enable_script_checks=true")
	addr := "http://" + agent.Addr
	for i, checks := range []string{
		``,
		`checks = [{ name = "sidecar-alive", ttl = "10s" }]`,
		`kind = "connect-proxy"`,
		"check \"alive\" {\n        ttl = \"10s\"\n      }\n      check \"ready\" {\n        tcp = \"127.0.0.1:21000\"\n        interval = \"10s\"\n      }",
		`checks = [{ name = "listening", tcp = "127.0.0.1:21000", interval = "10s" }]`,
		`checks = [{ name = "ready", http = "http://127.0.0.1:21000/ready", interval = "10s", timeout = "1s" }, { name = "alive", ttl = "30s" }]`,
		`checks = [{ name = "script", args = ["/bin/true"], interval = "30s" }, { name = "grpc", grpc = "127.0.0.1:21000", interval = "10s" }, { name = "h2", h2ping = "127.0.0.1:21000", interval = "10s" }]`,
	} {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			spec := fmt.Sprintf("project = \"p%d\"\nservice \"web%d\" {\n  port = %d\n  connect {\n    sidecar_service {\n      %s\n    }\n  }\n}\n", i, i, 8080+i, checks)
			b := agentBackend(t, addr, spec)
			st := backendtest.Read(t, b)
			cs := backendtest.Plan(t, b, st)
			if len(cs) != 1 || cs[0].Action != plans.Create {
				t.Fatalf("planned: %v", cs)
			}
			inMemory, err := b.Converge(st, cs)
			if err != nil {
				t.Fatal(err)
			}
			var memory []string
			for _, c := range backendtest.Plan(t, b, inMemory) {
				memory = append(memory, c.Reason)
			}
			backendtest.Send(t, b, cs)
			var real []string
			for _, c := range backendtest.Changes(t, b) {
				real = append(real, c.Reason)
			}
			if len(real) != 0 || len(memory) != 0 {
				t.Errorf("after the apply, the agent plans %q; in memory %q", real, memory)
			}
			if !strings.Contains(checks, `name = "`) && !strings.Contains(checks, `check "`) {
				return
			}
			// Its checks renamed: an update, and then converged again.
			renamed := agentBackend(t, addr, strings.ReplaceAll(strings.ReplaceAll(spec, `name = "`, `name = "new-`), `check "`, `check "new-`))
			cs = backendtest.Changes(t, renamed)
			if len(cs) != 1 || cs[0].Action != plans.Update {
				t.Fatalf("sidecar checks renamed: %v", cs)
			}
			backendtest.Send(t, renamed, cs)
			if cs := backendtest.Changes(t, renamed); len(cs) != 0 {
				t.Errorf("after the renamed checks' apply: %s %s", cs[0].Action, cs[0].Reason)
			}
		})
	}
}

// TestInheritedModeConverges: a proxy's mesh gateway mode, which the agent
// writes into each upstream that names none, converges whether the specs
// leave it out of the upstream or repeat it there (a real agent).
func TestInheritedModeConverges(t *testing.T) {
	agent := servers.NewConsul(t)
	addr := "http://" + agent.Addr
	for i, upstream := range []string{`{ destination_name = "db", local_bind_port = 9191 }`,
		`{ destination_name = "db", local_bind_port = 9191, mesh_gateway = { mode = "local" } }`} {
		spec := fmt.Sprintf("project = \"m%d\"\nservice \"proxy%d\" {\n  kind = \"connect-proxy\"\n  port = %d\n  proxy = {\n    destination_service_name = \"web\"\n    mesh_gateway = { mode = \"local\" }\n    upstreams = [%s]\n  }\n}\n", i, i, 21000+i, upstream)
		b := agentBackend(t, addr, spec)
		backendtest.Send(t, b, backendtest.Changes(t, b))
		if cs := backendtest.Changes(t, b); len(cs) != 0 {
			t.Errorf("%s: after the apply: %s %s", upstream, cs[0].Action, cs[0].Reason)
		}
	}
}
