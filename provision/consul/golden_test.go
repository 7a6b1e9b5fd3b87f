package consul

import (
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/hashicorp/consul/api"
	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision"
	"github.com/provision-dev/provision/provision/internal/golden"
	"github.com/provision-dev/provision/schema"
)

// fixture is the agent backend with its one read replaced by a live-state
// fixture: a GET /v1/agent/services answer captured from Consul 1.15.4.
type fixture struct {
	*Backend
	services map[string]*api.AgentService
}

func (f fixture) Plan(_ context.Context, mode provision.Mode) ([]*provision.Change, string, hcl.Diagnostics) {
	return f.planFrom(f.services, mode)
}

// TestGoldenPlans renders the plan of the shipped specs against an empty,
// a converged and a drifted agent (port changed, a hand-made service, an
// owned service no longer declared), as text and as JSON.
func TestGoldenPlans(t *testing.T) {
	t.Setenv("CONSUL_HTTP_ADDR", "127.0.0.1:8500")
	t.Setenv("CONSUL_HTTP_TOKEN", "")
	cfg, diags := schema.NewParser().LoadDir("../../specs", schema.Inputs{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	for _, state := range []string{"empty", "converged", "drifted"} {
		t.Run(state, func(t *testing.T) {
			raw, err := os.ReadFile("../../testdata/live/consul/" + state + ".json")
			if err != nil {
				t.Fatal(err)
			}
			var services map[string]*api.AgentService
			if err := json.Unmarshal(raw, &services); err != nil {
				t.Fatal(err)
			}
			b, diags := New(cfg)
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			p, diags := provision.MakePlan(context.Background(), cfg.Project, provision.Converge, []provision.Backend{fixture{b, services}})
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			golden.CheckPlan(t, "../../testdata/golden/consul/"+state, p)
		})
	}
}
