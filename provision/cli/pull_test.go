package cli

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/provision-dev/provision/provision/servers"
	"github.com/rogpeppe/go-internal/testscript"
)

// TestPull runs the scripts of testdata/pull against a real Consul agent
// and a real Elasticsearch 2.4.1 cluster: objects applied, edited where
// people edit them (the dashboard tool's documents, the agent's
// registrations, KV), then pulled back into the specs, live and from a
// snapshot, and compared with the rewritten specs the scripts hold.
func TestPull(t *testing.T) { liveScripts(t, "../../testdata/pull", "pull") }

// liveScripts runs the scripts of dir against a real Consul agent and a
// real Elasticsearch 2.4.1 cluster (of that name): CONSUL_HTTP_ADDR and
// SEARCH_URL name them, and the consul and es commands edit them as
// people do.
func liveScripts(t *testing.T, dir, cluster string) {
	agent := servers.NewConsul(t)
	es := servers.NewCluster(t, cluster)
	testscript.Run(t, testscript.Params{
		Dir: dir,
		Setup: func(env *testscript.Env) error {
			env.Setenv("CONSUL_HTTP_ADDR", agent.Addr)
			env.Setenv("SEARCH_URL", es.URL)
			env.Setenv("NO_COLOR", "1")
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"consul": consulCmd,
			"es":     esCmd,
		},
	})
}

// esCmd edits a search cluster as the dashboard tool does: es METHOD
// PATH [FILE] sends FILE's text (or nothing) and fails on an answer that
// is not 2xx.
func esCmd(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 2 || len(args) > 3 {
		ts.Fatalf("usage: es METHOD PATH [FILE]")
	}
	var body io.Reader
	if len(args) == 3 {
		body = strings.NewReader(ts.ReadFile(args[2]))
	}
	req, err := http.NewRequest(args[0], ts.Getenv("SEARCH_URL")+args[1], body)
	ts.Check(err)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	ts.Check(err)
	defer resp.Body.Close()
	text, _ := io.ReadAll(resp.Body)
	if (resp.StatusCode/100 != 2) != neg {
		ts.Fatalf("es %s %s: %s %s", args[0], args[1], resp.Status, text)
	}
}

// TestPolicies runs the scripts of testdata/policies against a real
// Consul agent and a real Elasticsearch 2.4.1 cluster: policies as code
// (-policies) judging the plans of services, keys, indices and
// documents as they are created, updated, deleted and left alone.
func TestPolicies(t *testing.T) { liveScripts(t, "../../testdata/policies", "policies") }
