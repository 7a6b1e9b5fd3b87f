package connect

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/provision-dev/provision/provision"
	"github.com/provision-dev/provision/provision/consul"
	"github.com/provision-dev/provision/provision/internal/backendtest"
	"github.com/provision-dev/provision/provision/plans"
	"github.com/provision-dev/provision/schema"
)

func load(t *testing.T, src string) *schema.Config {
	t.Helper()
	t.Setenv("CONSUL_HTTP_ADDR", "")
	return backendtest.Config(t, schema.NewLanguage(Kinds(), Places()), src)
}

// TestOneClientPerAgent: the agent that holds the lock and the record is
// the backend of that agent when it is one, not a second client of it
// (an apply opened four before); opening connects to nothing.
func TestOneClientPerAgent(t *testing.T) {
	for _, tt := range []struct {
		name, src string
		backend   int // index of the backend that is the cluster; -1: none is
		cluster   string
	}{
		{"one agent", "project = \"p\"\nconsul {\n  address = \"127.0.0.1:1\"\n}\nservice \"a\" {\n  port = 1\n}\n", 0, "http://127.0.0.1:1"},
		{"agent blocks", "project = \"p\"\nagent \"a\" {\n  address = \"127.0.0.1:1\"\n}\nagent \"b\" {\n  address = \"127.0.0.1:2\"\n}\nservice \"s\" {\n  agent = \"b\"\n  port = 1\n}\n", 0, "http://127.0.0.1:1"},
		{"agent blocks and the cluster's own address", "project = \"p\"\nconsul {\n  address = \"127.0.0.1:3\"\n}\nagent \"a\" {\n  address = \"127.0.0.1:1\"\n}\nservice \"s\" {\n  port = 1\n}\n", -1, "http://127.0.0.1:3"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			opened, diags := Open(load(t, tt.src), Options{Env: func(string) string { return "" }})
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			if opened.Cluster == nil {
				t.Fatal("no cluster agent")
			}
			if got := opened.Cluster.Address(); got != tt.cluster {
				t.Errorf("cluster at %s, want %s", got, tt.cluster)
			}
			for i, b := range opened.Backends {
				k, isAgent := b.(*consul.Backend)
				if same := isAgent && k.HoldsLock() && k.Agent().Address() == opened.Cluster.Address(); same != (i == tt.backend) {
					t.Errorf("backend %d (%s) is the cluster: %v", i, b.Info().Name, same)
				}
			}
		})
	}
	opened, _ := Open(load(t, "project = \"p\"\n"), Options{Env: func(string) string { return "" }})
	if opened.Cluster != nil || len(opened.Backends) != 0 {
		t.Errorf("specs without Consul opened %v and the cluster %v", opened.Backends, opened.Cluster)
	}
}

// TestSearchOpens: the search clusters are opened for a plan that
// converges, for a destroy only when the run removes their indices
// (destroy -indices), and never for what plans nothing (a policy, the
// watcher's change feeds).
func TestSearchOpens(t *testing.T) {
	cfg := load(t, "project = \"p\"\nsearch \"t1\" {\n  url          = \"http://127.0.0.1:1\"\n  cluster_name = \"t1\"\n}\nindex \"logs\" {\n  search = \"t1\"\n  mapping \"doc\" {\n    properties = {}\n  }\n}\n")
	for _, tt := range []struct {
		name string
		o    Options
		want bool
	}{
		{"converge", Options{}, true},
		{"converge, pruned", Options{Remove: plans.Removal{RemoveIndices: true}}, true},
		{"destroy", Options{Mode: plans.Destroy}, false},
		{"destroy, indices kept", Options{Mode: plans.Destroy, Remove: plans.Removal{RemoveIndices: false}}, false},
		{"destroy -indices", Options{Mode: plans.Destroy, Remove: plans.Removal{RemoveIndices: true}}, true},
		{"unplanned", Options{Unplanned: true, Remove: plans.Removal{RemoveIndices: true}}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.o.Env = func(string) string { return "" }
			opened, diags := Open(cfg, tt.o)
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			got := slices.ContainsFunc(opened.Backends, func(b provision.Backend) bool { return b.Info().Name == "search.t1" })
			if got != tt.want {
				t.Errorf("search.t1 opened: %v, want %v", got, tt.want)
			}
		})
	}
}

// TestRemoval: what a destroy plan records of the backends' options is
// every option Open knows, false unless given, whatever a saved plan's
// "destroy" held ({} from a plan made by hand, a key no backend has).
func TestRemoval(t *testing.T) {
	for _, tt := range []struct{ saved, want string }{
		{`{}`, `{"indices":false}`},
		{`{"indices":true}`, `{"indices":true}`},
		{`{"indices":false,"other":true}`, `{"indices":false}`},
	} {
		var r plans.Removal
		if err := json.Unmarshal([]byte(tt.saved), &r); err != nil {
			t.Fatal(err)
		}
		if got, _ := json.Marshal(Removal(r)); string(got) != tt.want {
			t.Errorf("Removal(%s) = %s, want %s", tt.saved, got, tt.want)
		}
	}
	if got, _ := json.Marshal(Removal(nil)); string(got) != `{"indices":false}` {
		t.Errorf("Removal(nil) = %s", got)
	}
}
