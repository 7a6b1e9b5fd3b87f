package consul

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/consul/api"
	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision"
	"github.com/provision-dev/provision/provision/adapter"
	"github.com/provision-dev/provision/provision/consul/client"
	"github.com/provision-dev/provision/provision/plans"
)

// TestExternalConverges: the services of external nodes planned from an
// empty catalog, done in memory (Converge), plan nothing more; a move
// between nodes registers the service on its new node and deregisters
// it from the old one in one change, and the old node, provision's and
// empty then, goes with it.
func TestExternalConverges(t *testing.T) {
	load := func(src string) *External {
		t.Helper()
		cfg := loadSpec(t, src)
		c, err := client.Open(api.DefaultConfig(), adapter.Deadlines{}, "", hcl.Range{})
		if err != nil {
			t.Fatal(err)
		}
		return NewExternal(cfg, c, Options{})
	}
	spec := func(node string) string {
		return `project = "p"

service "db" {
  node    = "` + node + `"
  address = "10.0.0.50"
  port    = 5432
  tags    = ["primary"]

  check "tcp" {
    tcp      = "10.0.0.50:5432"
    interval = "10s"
  }
}
`
	}
	plan := func(e *External, st plans.State) *plans.Plan {
		t.Helper()
		p, diags := provision.PlanFrom("p", plans.Converge, []provision.Backend{e}, &plans.Live{States: map[string]plans.State{"catalog": st}})
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		return p
	}
	converged := func(e *External, p *plans.Plan) plans.State {
		t.Helper()
		live, err := provision.Converged(p, []provision.Backend{e})
		if err != nil {
			t.Fatal(err)
		}
		return live.States["catalog"]
	}
	actions := func(p *plans.Plan) []string {
		var out []string
		for _, c := range p.Changes {
			var paths []string
			for _, r := range c.Requests {
				paths = append(paths, r.Path)
			}
			out = append(out, c.Action.String()+" "+c.Addr.String()+" "+strings.Join(paths, ","))
		}
		return out
	}

	a := load(spec("host-a"))
	p := plan(a, a.Greenfield())
	if diff := cmp.Diff([]string{"create service.db /v1/catalog/register"}, actions(p)); diff != "" {
		t.Errorf("from an empty catalog (-want +got):\n%s", diff)
	}
	st := converged(a, p)
	if diff := cmp.Diff([]string{"no-op service.db "}, actions(plan(a, st))); diff != "" {
		t.Errorf("once done (-want +got):\n%s", diff)
	}

	b := load(spec("host-b"))
	p = plan(b, st)
	if diff := cmp.Diff([]string{"create service.db /v1/catalog/register,/v1/catalog/deregister"}, actions(p)); diff != "" {
		t.Errorf("moved to host-b (-want +got):\n%s", diff)
	}
	if body := string(p.Changes[0].Requests[1].Body); body != `{"Node":"host-a"}` {
		t.Errorf("the move deregisters %s, want the emptied node host-a", body)
	}
	st = converged(b, p)
	if nodes := st.(externalState).Nodes; nodes["host-a"] != nil || nodes["host-b"] == nil {
		t.Errorf("after the move the nodes are %v", nodes)
	}
	if diff := cmp.Diff([]string{"no-op service.db "}, actions(plan(b, st))); diff != "" {
		t.Errorf("once moved (-want +got):\n%s", diff)
	}

	// Two services of one node removed: the last deletes the node too,
	// once the other is deleted.
	two := load(spec("host-b") + strings.ReplaceAll(strings.ReplaceAll(spec("host-b"), `project = "p"`, ""), `service "db"`, `service "cache"`))
	st = converged(two, plan(two, st))
	none := load(`project = "p"` + "\n")
	p = plan(none, st)
	if diff := cmp.Diff([]string{"delete service.cache /v1/catalog/deregister", "delete service.db /v1/catalog/deregister,/v1/catalog/deregister"}, actions(p)); diff != "" {
		t.Errorf("the node emptied (-want +got):\n%s", diff)
	}
	if last := p.Changes[1]; len(last.Needs) != 1 || last.Needs[0].Name != "cache" || string(last.Requests[1].Body) != `{"Node":"host-b"}` {
		t.Errorf("the last delete %s needs %v and sends %s, want it after cache and the node's delete", last.Addr, last.Needs, last.Requests[1].Body)
	}
	if nodes := converged(none, p).(externalState).Nodes; len(nodes) != 0 {
		t.Errorf("once emptied the nodes are %v", nodes)
	}
}
