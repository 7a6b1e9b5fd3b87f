package consul

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/provision-dev/provision/schema"
)

// TestFleetAsData: an agent block with for_each is one agent per element,
// named agent.<label>["<key>"], and a service names its agent by
// reference, computed from its own for_each: a fleet is a map.
func TestFleetAsData(t *testing.T) {
	cfg := loadSpec(t, `project = "x"

locals {
  nodes    = { n1 = "10.0.0.1:8500", "rack.2/n2" = "10.0.0.2:8500" }
  services = { web = "n1", jobs = "rack.2/n2" }
}

agent "fleet" {
  for_each = local.nodes
  address  = each.value
}

agent "edge" {
  address = "10.0.0.9:8500"
}

service "app" {
  for_each = local.services
  agent    = agent.fleet[each.value]
  port     = 9000
}

service "gate" {
  agent = agent.edge
  port  = 9001
}
`)
	var agents, services, declared []string
	for _, a := range Agents(cfg) {
		agents = append(agents, a.Name+" "+a.Address)
	}
	for _, s := range Services(cfg) {
		services = append(services, s.Name+" on "+s.Agent)
	}
	for _, a := range cfg.Declared() {
		declared = append(declared, a.String())
	}
	want := []string{`fleet["n1"] 10.0.0.1:8500`, `fleet["rack.2/n2"] 10.0.0.2:8500`, "edge 10.0.0.9:8500"}
	if diff := cmp.Diff(want, agents); diff != "" {
		t.Errorf("agents (-want +got):\n%s", diff)
	}
	want = []string{`app-jobs on fleet["rack.2/n2"]`, `app-web on fleet["n1"]`, "gate on edge"}
	if diff := cmp.Diff(want, services); diff != "" {
		t.Errorf("services (-want +got):\n%s", diff)
	}
	want = []string{`agent.fleet["rack.2/n2"].service.app-jobs`, `agent.fleet["n1"].service.app-web`, "agent.edge.service.gate"}
	if diff := cmp.Diff(want, declared); diff != "" {
		t.Errorf("declared addresses (-want +got):\n%s", diff)
	}
}

// TestAgentReferencesDecodedSideBySide: services decoded side by side
// (a spec of many) see the agent blocks as one decoded alone does.
func TestAgentReferencesDecodedSideBySide(t *testing.T) {
	var b strings.Builder
	b.WriteString("project = \"x\"\n\nagent \"a\" {\n  address = \"10.0.0.1:8500\"\n}\n\nagent \"b\" {\n  address = \"10.0.0.2:8500\"\n}\n")
	for i := range 600 {
		fmt.Fprintf(&b, "\nservice \"s%d\" {\n  agent = agent.b\n  port  = 1\n}\n", i)
	}
	for _, s := range Services(loadSpec(t, b.String())) {
		if s.Agent != "b" {
			t.Fatalf("service %s on agent %q, want b", s.Name, s.Agent)
		}
	}
}

// loadSpec loads src as the one spec file of a directory, failing the
// test on an error.
func loadSpec(t *testing.T, src string) *schema.Config {
	t.Helper()
	path := filepath.Join(t.TempDir(), "main.hcl")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, diags := schema.NewParser(testLanguage).LoadFiles([]string{path}, schema.Inputs{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	return cfg
}

// TestFleetCounted: an agent block with count is one agent per index,
// agent.<label>[<index>], count.index in its block.
func TestFleetCounted(t *testing.T) {
	cfg := loadSpec(t, `project = "x"

agent "pool" {
  count   = 2
  address = "10.0.0.${count.index + 1}:8500"
}

service "web" {
  agent = agent.pool[1]
  port  = 9000
}
`)
	var agents, declared []string
	for _, a := range Agents(cfg) {
		agents = append(agents, a.Name+" "+a.Address)
	}
	for _, a := range cfg.Declared() {
		declared = append(declared, a.String())
	}
	if diff := cmp.Diff([]string{"pool[0] 10.0.0.1:8500", "pool[1] 10.0.0.2:8500"}, agents); diff != "" {
		t.Errorf("agents (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"agent.pool[1].service.web"}, declared); diff != "" {
		t.Errorf("declared addresses (-want +got):\n%s", diff)
	}
}
