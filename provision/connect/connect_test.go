package connect

import (
	"testing"

	"github.com/provision-dev/provision/provision/consul"
	"github.com/provision-dev/provision/provision/internal/backendtest"
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
