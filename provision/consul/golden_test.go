package consul

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"testing"

	"github.com/hashicorp/consul/api"
	"github.com/provision-dev/provision/provision"
	"github.com/provision-dev/provision/provision/adapter"
	"github.com/provision-dev/provision/provision/internal/golden"
	"github.com/provision-dev/provision/provision/plans"
	"github.com/provision-dev/provision/provision/traefik/labels"
	"github.com/provision-dev/provision/schema"
)

// readFixture reads the live state of an agent from testdata/live/consul:
// GET /v1/agent/services and GET /v1/agent/checks answers captured from
// Consul 1.15.4 (<state>.json, <state>-checks.json).
func readFixture(t *testing.T, state string) agentState {
	t.Helper()
	var st agentState
	var checks map[string]liveCheck
	for file, to := range map[string]any{state + ".json": &st.Services, state + "-checks.json": &checks} {
		raw, err := os.ReadFile("../../testdata/live/consul/" + file)
		if errors.Is(err, fs.ErrNotExist) && file != state+".json" {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(raw, to); err != nil {
			t.Fatal(err)
		}
	}
	st.Checks = byService(checks)
	return st
}

// TestGoldenPlans renders the plan of the shipped specs against an empty,
// a converged and a drifted agent (port changed, a hand-made service, an
// owned service no longer declared), and against the seed's registration
// made by hand with the import block of testdata/import, as text and as JSON.
func TestGoldenPlans(t *testing.T) {
	t.Setenv("CONSUL_HTTP_ADDR", "127.0.0.1:8500")
	t.Setenv("CONSUL_HTTP_TOKEN", "")
	files, _ := schema.SpecFiles("../../specs")
	for _, state := range []string{"empty", "converged", "drifted", "handmade"} {
		t.Run(state, func(t *testing.T) {
			if state == "handmade" {
				files = append(files, "../../testdata/import/service.hcl")
			}
			cfg, diags := schema.NewParser(testLanguage).LoadFiles(files, schema.Inputs{})
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			b, diags := New(cfg, Options{})
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			live := &plans.Live{States: map[string]plans.State{"consul": readFixture(t, state)}}
			p, diags := provision.PlanFrom(cfg.Project, plans.Converge, []provision.Backend{b[0]}, live)
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			golden.CheckPlan(t, "../../testdata/golden/consul/"+state, p)
		})
	}
}

// BenchmarkDiff reads, decodes and compares 10,000 and 100,000
// registrations (the cost per service the same at both sizes): the
// agent's answer for them decoded as the plan decodes it (every field of
// the registration kept, reportedService) next to the baseline of the API
// client's own decoding (api.AgentService), a snapshot of them decoded
// (DecodeState) next to json's decode of it whole, and the diff of as many
// declared services against them: the plan's own work should stay of the
// order of reading the agent, and its decoding near the API client's.
func BenchmarkDiff(b *testing.B) {
	for _, n := range []int{10000, 100000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) { benchmarkDiff(b, n) })
	}
}

func benchmarkDiff(b *testing.B, n int) {
	cfg := &schema.Config{Project: "bench"}
	live := map[string]*api.AgentService{}
	rule, _ := labels.ParseRule("Path:/api")
	for i := range n {
		s := &Decl{Service: fmt.Sprintf("svc-%d", i), Declaration: schema.Declaration{Name: fmt.Sprintf("svc-%d", i)}, Address: "127.0.0.1", Port: 8000 + i,
			Frontend: &Frontend{Rule: rule, ForwardAuth: &ForwardAuth{Address: "http://127.0.0.1/auth"}}}
		cfg.Declare(Service, s)
		r := desired(cfg.Project, ProxyOf(cfg), s, false)
		// As a Consul 1.15 agent answers: default weights, the tagged
		// addresses it derives, its datacenter and a content hash.
		derived := api.ServiceAddress{Address: "127.0.0.1", Port: r.Port}
		live[s.Name] = &api.AgentService{ID: r.ID, Service: r.Name, Tags: r.Tags, Port: r.Port, Address: "127.0.0.1", Meta: r.Meta,
			Weights: api.AgentWeights{Passing: 1, Warning: 1}, TaggedAddresses: map[string]api.ServiceAddress{"lan_ipv4": derived, "wan_ipv4": derived},
			Datacenter: "dc1", ContentHash: "313926b520afb35f"}
	}
	answer, _ := json.Marshal(live)
	var reported map[string]*reportedService
	json.Unmarshal(answer, &reported)
	lean, _ := services(reported)
	bk, _ := New(cfg, Options{})
	agent := bk[0]
	b.Run("baseline-decode", func(b *testing.B) {
		for b.Loop() {
			var m map[string]*api.AgentService
			json.Unmarshal(answer, &m)
		}
	})
	b.Run("decode", func(b *testing.B) {
		for b.Loop() {
			m, _ := adapter.DecodeObject[*reportedService](answer)
			services(m)
		}
	})
	// A snapshot of the agent (as provision snapshot writes a state,
	// indented), decoded whole by json next to DecodeState's own decode.
	snap, _ := json.MarshalIndent(agentState{Services: lean}, "", "  ")
	b.Run("baseline-snapshot-decode", func(b *testing.B) {
		for b.Loop() {
			var st agentState
			json.Unmarshal(snap, &st)
		}
	})
	b.Run("snapshot-decode", func(b *testing.B) {
		for b.Loop() {
			agent.DecodeState(json.NewDecoder(bytes.NewReader(snap)))
		}
	})
	// The estate is converged: every change is a no-op.
	if changes, _ := provision.PlanBackend(plans.Converge, agent, agentState{Services: lean}); len(changes.Changes) != len(Services(cfg)) || slices.ContainsFunc(changes.Changes, func(c *plans.Change) bool { return c.Action != plans.NoOp }) {
		b.Fatalf("%d changes of %d services, not all no-ops", len(changes.Changes), len(Services(cfg)))
	}
	b.Run("diff", func(b *testing.B) {
		for b.Loop() {
			provision.PlanBackend(plans.Converge, agent, agentState{Services: lean})
		}
	})
}
