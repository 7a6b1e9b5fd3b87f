package cli

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/provision-dev/provision/provision/servers"
)

// inFlight counts the writes in flight through the fronts of a fleet:
// each agent's, and all of them together, with their peaks.
type inFlight struct{ now, peak atomic.Int32 }

func (f *inFlight) enter() {
	n := f.now.Add(1)
	for p := f.peak.Load(); n > p && !f.peak.CompareAndSwap(p, n); p = f.peak.Load() {
	}
}

// TestFleetOfTwenty applies 1,000 services over the 20 client agents of a
// real cluster, as an organisation lays a datacenter out (Consul's scale
// guide: many agents, not one holding everything), the fleet declared as
// data (one agent block with for_each), with -parallelism=4:
// no agent ever has more than 4 writes in flight, all of them work at
// once (more than 4 in flight in all), every agent is checked to be in
// the declared datacenter, and the next plan is empty.
func TestFleetOfTwenty(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a cluster of 21 agents")
	}
	const agents, each, parallelism = 20, 50, 4
	var nodes []string
	for i := range agents {
		nodes = append(nodes, fmt.Sprintf("node%02d", i))
	}
	cluster := servers.NewConsulCluster(t, nodes...)
	var all inFlight
	per := make([]inFlight, agents)
	// The fleet is data: one agent block over a map of the nodes, and
	// the services spread over it by reference.
	var b strings.Builder
	fmt.Fprintf(&b, "project = \"fleet20\"\n\nconsul {\n  address    = %q\n  datacenter = \"dc1\"\n}\n\nlocals {\n  nodes = {\n", cluster[0].Addr)
	for i, node := range nodes {
		target, _ := url.Parse("http://" + cluster[i+1].Addr)
		proxy := httputil.NewSingleHostReverseProxy(target)
		f := &per[i]
		front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodGet {
				f.enter()
				all.enter()
				defer f.now.Add(-1)
				defer all.now.Add(-1)
			}
			proxy.ServeHTTP(w, r)
		}))
		t.Cleanup(front.Close)
		fmt.Fprintf(&b, "    %s = %q\n", node, strings.TrimPrefix(front.URL, "http://"))
	}
	fmt.Fprintf(&b, `  }
}

agent "fleet" {
  for_each = local.nodes
  address  = each.value
}

service "web" {
  for_each = merge([for node in keys(local.nodes) : { for j in range(%d) : format("web-%%s-%%02d", node, j) => { node = node, port = 10000 + j } }]...)
  agent    = agent.fleet[each.value.node]
  id       = each.key
  port     = each.value.port
}
`, each)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.hcl"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"NO_COLOR": "1"}
	code, out, errOut := runCLI(t, env, "apply", "-auto-approve", fmt.Sprintf("-parallelism=%d", parallelism), dir)
	if code != 0 {
		t.Fatalf("apply exited %d:\n%s\n%s", code, tail(out, 3000), errOut)
	}
	if want := fmt.Sprintf("Apply complete: %d created, 0 updated, 0 deleted.", agents*each); !strings.Contains(out, want) {
		t.Errorf("the apply lacks %q:\n%s", want, tail(out, 2000))
	}
	for i := range per {
		if p := per[i].peak.Load(); p > parallelism || p == 0 {
			t.Errorf("%s had %d writes in flight at once, want 1 to %d (-parallelism)", nodes[i], p, parallelism)
		}
	}
	if p := all.peak.Load(); p <= parallelism {
		t.Errorf("%d writes in flight at once over %d agents, want more than %d: the agents were written one after another", p, agents, parallelism)
	}
	t.Logf("writes in flight at once: %d over the fleet", all.peak.Load())
	if code, out, errOut = runCLI(t, env, "plan", "-detailed-exitcode", dir); code != 0 {
		t.Errorf("the plan after the apply exited %d, want 0:\n%s\n%s", code, tail(out, 2000), errOut)
	}
}
