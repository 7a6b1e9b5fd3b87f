package consul

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/consul/api"
	"github.com/provision-dev/provision/provision"
	"github.com/provision-dev/provision/provision/internal/backendtest"
	"github.com/provision-dev/provision/provision/plans"
	"github.com/provision-dev/provision/provision/servers"
)

// agentBackend is the backend of the specs src on the agent at addr.
func agentBackend(t *testing.T, addr, src string) *Backend {
	t.Helper()
	t.Setenv("CONSUL_HTTP_ADDR", addr)
	t.Setenv("CONSUL_HTTP_TOKEN", "")
	b, diags := New(backendtest.Config(t, testLanguage, src), Options{Getenv: os.Getenv})
	if diags.HasErrors() || len(b) != 1 {
		t.Fatal(diags)
	}
	return b[0]
}

// TestAgentServices: on a real Consul agent, a declared service is
// registered with the project's marks, then left alone; a port changed by
// hand is drift, set back by an update that keeps the weights set by hand
// beside the declaration; another project may not plan over it; and a
// service no longer declared is deregistered.
func TestAgentServices(t *testing.T) {
	agent := servers.NewConsul(t)
	addr := "http://" + agent.Addr
	spec := "project = \"p\"\nservice \"web\" {\n  id = \"web-1\"\n  port = 8080\n  tags = [\"v1\"]\n  meta = { team = \"edge\" }\n}\n"
	b := agentBackend(t, addr, spec)
	cs := backendtest.Changes(t, b)
	if len(cs) != 1 || cs[0].Action != plans.Create || cs[0].Addr.String() != "service.web-1" {
		t.Fatalf("a new service: %v", cs)
	}
	backendtest.Send(t, b, cs)
	if cs := backendtest.Changes(t, b); len(cs) != 0 {
		t.Fatalf("converged: %s %s", cs[0].Action, cs[0].Reason)
	}
	c, err := api.NewClient(&api.Config{Address: agent.Addr})
	if err != nil {
		t.Fatal(err)
	}
	live, _, err := c.Agent().Service("web-1", nil)
	if err != nil || live.Port != 8080 || !slices.Contains(live.Tags, "v1") || live.Meta["team"] != "edge" || live.Meta["provision-project"] != "p" {
		t.Fatalf("registered: %+v %v", live, err)
	}

	// Changed by hand: the port, and weights the block does not declare.
	reg := &api.AgentServiceRegistration{ID: "web-1", Name: "web", Port: 9090, Tags: live.Tags, Meta: live.Meta, Weights: &api.AgentWeights{Passing: 5, Warning: 1}}
	if err := c.Agent().ServiceRegister(reg); err != nil {
		t.Fatal(err)
	}
	cs = backendtest.Changes(t, b)
	if len(cs) != 1 || cs[0].Action != plans.Update || !strings.Contains(cs[0].Reason, "port") {
		t.Fatalf("drifted: %v", cs)
	}
	backendtest.Send(t, b, cs)
	live, _, _ = c.Agent().Service("web-1", nil)
	if live.Port != 8080 || live.Weights.Passing != 5 {
		t.Errorf("set back: port %d (want 8080), weights %+v kept", live.Port, live.Weights)
	}

	// Another project may not take it.
	other := agentBackend(t, addr, strings.Replace(spec, `"p"`, `"q"`, 1))
	st, _ := other.Read(context.Background(), plans.Converge)
	if _, diags := provision.PlanBackend(plans.Converge, other, st); !diags.HasErrors() {
		t.Error("project q plans over project p's service")
	}

	// No longer declared: deregistered.
	gone := agentBackend(t, addr, "project = \"p\"\n")
	cs = backendtest.Changes(t, gone)
	if len(cs) != 1 || cs[0].Action != plans.Delete {
		t.Fatalf("undeclared: %v", cs)
	}
	backendtest.Send(t, gone, cs)
	if services, _ := c.Agent().Services(); services["web-1"] != nil {
		t.Error("web-1 is still registered")
	}
}

// TestRogueRoute: on a real Consul agent, a registration made by hand,
// outside the project, whose tags open the gate (a TCP router, an HTTP
// router in another case) is reported by the plan at the gated service;
// one that routes another host is not.
func TestRogueRoute(t *testing.T) {
	agent := servers.NewConsul(t)
	spec := "project = \"p\"\nservice \"gated-api\" {\n  port = 8080\n  frontend {\n    rule = \"Path:/api\"\n    forward_auth {\n      address = \"http://127.0.0.1:8080/auth\"\n    }\n  }\n}\n"
	b := agentBackend(t, "http://"+agent.Addr, spec)
	c, err := api.NewClient(&api.Config{Address: agent.Addr})
	if err != nil {
		t.Fatal(err)
	}
	for id, tags := range map[string][]string{
		"raw":   {"traefik.tcp.routers.raw.rule=HostSNI(`*`)", "traefik.tcp.routers.raw.entrypoints=web"},
		"open":  {"traefik.HTTP.Routers.open.rule=PathPrefix(`/`)"},
		"other": {"traefik.http.routers.other.rule=Host(`other.example`)"},
		// The declared service's own stale tags: the plan rewrites them.
		"gated-api": {"traefik.http.routers.stale.rule=Path(`/api`)"},
	} {
		if err := c.Agent().ServiceRegister(&api.AgentServiceRegistration{ID: id, Name: id, Port: 9000, Tags: tags}); err != nil {
			t.Fatal(err)
		}
	}
	_, diags := provision.PlanBackend(plans.Converge, b, backendtest.Read(t, b))
	var got []string
	for _, d := range diags {
		if d.Summary == "A registration opens the gate" {
			got = append(got, d.Detail)
		}
	}
	if len(got) != 2 || !strings.Contains(got[0], `tcp router "raw"`) && !strings.Contains(got[1], `tcp router "raw"`) ||
		!strings.Contains(strings.Join(got, "\n"), `http router "open"`) || strings.Contains(strings.Join(got, "\n"), "other") {
		t.Fatalf("the plan's warnings of the hand-made routes: %q", got)
	}
}
