package cli

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/provision-dev/provision/provision/servers"
)

var update = flag.Bool("update", false, "rewrite the shipped specs' snapshots with those of this run")

// TestShippedSnapshots makes, on a real Consul agent and a real
// Elasticsearch cluster t1, the live states that the shipped specs' own
// tests (specs/tests) plan from, and holds a fresh snapshot of each
// against the one committed there (go test -run TestShippedSnapshots
// -update rewrites them; read the diff): the seed's system made by hand,
// that system taken over and converged, and then drifted (a port and a
// saved object edited by hand). The server addresses, which the test's
// ports make random, are written as the defaults (Consul's client's, the specs'). Then provision
// test specs passes against the committed goldens.
func TestShippedSnapshots(t *testing.T) {
	agent := servers.NewConsul(t)
	es := servers.NewCluster(t, "t1")
	env := map[string]string{"CONSUL_HTTP_ADDR": agent.Addr, "SOURCE_DATE_EPOCH": "1764028800", "NO_COLOR": "1"}
	url := "search_url=" + es.URL
	specs := "../../specs"
	// The specs with the import blocks of the seed's hand-made objects.
	taking := t.TempDir()
	copyTree(t, specs, taking)
	copyTree(t, "../../testdata/import", taking)
	snapshot := func(name string) {
		t.Helper()
		path := filepath.Join(t.TempDir(), name+".json")
		if code, out, errOut := runCLI(t, env, "snapshot", "-var", url, "-out", path, specs); code != exitOK {
			t.Fatalf("snapshot %s: exit %d\n%s%s", name, code, out, errOut)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		b = []byte(strings.NewReplacer("http://"+agent.Addr, "http://localhost:8500", es.URL, "http://127.0.0.1:9200").Replace(string(b)))
		b = renumberIndexes(b)
		committed := filepath.Join(specs, "tests", "snapshots", name+".json")
		if *update {
			if err := os.WriteFile(committed, b, 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		want, err := os.ReadFile(committed)
		if err != nil {
			t.Fatalf("%v (go test -run TestShippedSnapshots -update writes it)", err)
		}
		if diff := cmp.Diff(string(want), string(b)); diff != "" {
			t.Errorf("%s differs from a fresh snapshot of the same state (-committed +fresh):\n%s", committed, diff)
		}
	}

	// The seed's system, made by hand: the registration with its three
	// traefik.frontend tags, and .dashboard with its four types.
	_, plan, _ := runCLI(t, env, "plan", "-json", "-var", url, specs)
	var p struct {
		Changes []struct {
			Address  string
			Requests []struct {
				Method, Path string
				Body         json.RawMessage
			}
		}
	}
	if err := json.Unmarshal([]byte(plan), &p); err != nil {
		t.Fatalf("%v\n%s", err, plan)
	}
	meta := regexp.MustCompile(`"_meta":\{[^}]*\},?`)
	for _, c := range p.Changes {
		if c.Address != `index[".dashboard"]` {
			continue
		}
		for _, r := range c.Requests {
			esDo(t, es.URL, r.Method, r.Path, strings.Replace(meta.ReplaceAllString(string(r.Body), ""), ",}", "}", -1))
		}
	}
	consulDo(t, agent.Addr, "PUT", "/v1/agent/service/register", `{"ID":"gated-api-1","Name":"gated-api","Address":"127.0.0.1","Port":8080,"Tags":[`+
		`"traefik.enable=true","traefik.frontend.rule=Path:/api","traefik.frontend.auth.forward.address=http://127.0.0.1:8080/auth",`+
		`"traefik.frontend.auth.forward.authResponseHeaders=X-Auth-User"]}`)
	snapshot("handmade")

	// One object at a time: the keys' indexes are then written in the
	// plan's order, which renumberIndexes keeps, on every run.
	if code, out, errOut := runCLI(t, env, "apply", "-auto-approve", "-parallelism", "1", "-var", url, taking); code != exitOK {
		t.Fatalf("taking over: exit %d\n%s%s", code, out, errOut)
	}
	snapshot("converged")

	var svc map[string]any
	json.Unmarshal([]byte(consulDo(t, agent.Addr, "GET", "/v1/agent/service/gated-api-1", "")), &svc)
	consulDo(t, agent.Addr, "PUT", "/v1/agent/service/register", `{"ID":"gated-api-1","Name":"gated-api","Address":"127.0.0.1","Port":8081,"Tags":`+
		mustJSON(svc["Tags"])+`,"Meta":`+mustJSON(svc["Meta"])+`}`)
	esDo(t, es.URL, "POST", "/.dashboard/search/errors/_update?refresh=true", `{"doc":{"title":"Errors, by hand"}}`)
	snapshot("drifted")

	env = map[string]string{"NO_COLOR": "1"}
	if code, out, errOut := runCLI(t, env, "test", specs); code != exitOK {
		t.Errorf("provision test specs: exit %d\n%s%s", code, out, errOut)
	}
}

// kvIndex is a Consul index in a snapshot of the keys.
var kvIndex = regexp.MustCompile(`"(create|modify)_index": (\d+)`)

// renumberIndexes numbers the Consul indexes of a snapshot's keys and
// records 1, 2, ... in their order: which writes Consul's log holds
// between them (sessions, the agent's syncs) varies from run to run, and
// only their order means anything to a plan (a record is newer than its
// key, a check-and-set names the index read).
func renumberIndexes(b []byte) []byte {
	var seen []int
	for _, m := range kvIndex.FindAllSubmatch(b, -1) {
		n, _ := strconv.Atoi(string(m[2]))
		seen = append(seen, n)
	}
	slices.Sort(seen)
	seen = slices.Compact(seen)
	return kvIndex.ReplaceAllFunc(b, func(m []byte) []byte {
		sub := kvIndex.FindSubmatch(m)
		n, _ := strconv.Atoi(string(sub[2]))
		i, _ := slices.BinarySearch(seen, n)
		return []byte(fmt.Sprintf(`"%s_index": %d`, sub[1], i+1))
	})
}

// esDo sends one request to Elasticsearch and fails the test on an answer
// outside 2xx.
func esDo(t *testing.T, base, method, path, body string) {
	t.Helper()
	esCall(t, method, base+path, body, nil)
}
