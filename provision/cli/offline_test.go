package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestOffline: with no server at all (every address refuses), graph,
// plan, list and output run from a snapshot and from nothing live
// (-greenfield); the greenfield plan is the one provision test's runs
// without a snapshot make (the shipped greenfield golden file).
func TestOffline(t *testing.T) {
	env := map[string]string{"NO_COLOR": "1", "CONSUL_HTTP_ADDR": "127.0.0.1:1", "ELASTICSEARCH_URL": "http://127.0.0.1:1",
		"PROVISION_VAR_search_url": "http://127.0.0.1:1", "PROVISION_VAR_tribe_url": "http://127.0.0.1:1"}
	snap := "../../specs/tests/snapshots/converged.json"
	for _, from := range [][]string{{"-greenfield"}, {"-snapshot", snap}} {
		code, out, errOut := runCLI(t, env, append(append([]string{"graph"}, from...), "../../specs")...)
		if code != exitOK || !strings.HasPrefix(out, "digraph") {
			t.Errorf("graph %v: exit %d\n%s%s", from, code, out, errOut)
		}
		code, out, errOut = runCLI(t, env, append(append([]string{"output", "-json"}, from...), "../../specs")...)
		var outputs map[string]struct{ Value json.RawMessage }
		if code != exitOK || json.Unmarshal([]byte(out), &outputs) != nil || string(outputs["services"].Value) != `["billing-api-1","gated-api-1"]` {
			t.Errorf("output -json %v: exit %d\n%s%s", from, code, out, errOut)
		}
		code, out, _ = runCLI(t, env, append(append([]string{"output", "-raw"}, from...), "../../specs", "services")...)
		if code != exitOK || strings.TrimSpace(out) != `["billing-api-1","gated-api-1"]` {
			t.Errorf("output services %v: exit %d %q", from, code, out)
		}
	}
	code, out, errOut := runCLI(t, env, "list", "-greenfield", "../../specs")
	if code != exitOK || out != "" || !strings.Contains(errOut, `The project "edge" owns no object yet: the plan creates 13`) {
		t.Errorf("list -greenfield: exit %d, %q%s", code, out, errOut)
	}
	code, out, errOut = runCLI(t, env, "list", "-snapshot", snap, "../../specs")
	if code != exitOK || !strings.Contains(out, "module.gated_api[\"edge\"].service.gated-api-1\n") || !strings.Contains(out, "index[\".dashboard\"]\n") {
		t.Errorf("list -snapshot: exit %d\n%s%s", code, out, errOut)
	}
	// Every line is an address -target takes.
	for _, addr := range strings.Split(strings.TrimSpace(out), "\n") {
		if code, _, errOut := runCLI(t, env, "plan", "-snapshot", snap, "-target", addr, "../../specs"); code != exitOK {
			t.Errorf("plan -target %s: exit %d\n%s", addr, code, errOut)
		}
	}
	code, out, errOut = runCLI(t, env, "plan", "-greenfield", "-json", "../../specs")
	var p struct{ Summary struct{ Create int } }
	if code != exitOK || json.Unmarshal([]byte(out), &p) != nil || p.Summary.Create == 0 {
		t.Errorf("plan -greenfield: exit %d\n%s", code, errOut)
	}
	if code, _, errOut := runCLI(t, env, "plan", "-greenfield", "-snapshot", snap, "../../specs"); code != exitError || !strings.Contains(errOut, "give one of them") {
		t.Errorf("plan -greenfield -snapshot: exit %d\n%s", code, errOut)
	}
}
