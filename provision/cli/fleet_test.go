package cli

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/provision-dev/provision/provision/servers"
)

// wire sits in front of the agents of a real cluster: it counts every
// request each agent gets, logs the writes of all of them in the order
// they arrive, and can refuse the writes of one agent (403, as an agent
// whose token may not write there).
type wire struct {
	mu     sync.Mutex
	reads  map[string][]string // agent → "GET /path" of each request
	writes []string            // "agent METHOD path", in arrival order
	refuse string              // the agent whose writes are refused
}

// front starts a proxy for the agent named name and returns its address.
func (w *wire) front(t *testing.T, name string, agent *servers.Consul) string {
	target, _ := url.Parse("http://" + agent.Addr)
	proxy := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		w.mu.Lock()
		refused := w.refuse == name && r.Method != http.MethodGet
		if r.Method == http.MethodGet {
			w.reads[name] = append(w.reads[name], r.Method+" "+r.URL.Path)
		} else {
			w.writes = append(w.writes, name+" "+r.Method+" "+r.URL.Path)
		}
		w.mu.Unlock()
		if refused {
			http.Error(rw, "Permission denied: token lacks permission 'service:write'", http.StatusForbidden)
			return
		}
		proxy.ServeHTTP(rw, r)
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

func (w *wire) reset() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.reads, w.writes = map[string][]string{}, nil
}

// containsAll reports each of wants that text, named what, lacks.
func containsAll(t *testing.T, what, text string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(text, want) {
			t.Errorf("%s lacks %q:\n%s", what, want, text)
		}
	}
}

// fleetSpecs writes specs of two services on the agents named (none when
// web is empty), with the cluster (the server) holding the lock.
func fleetSpecs(t *testing.T, dir, server string, agents map[string]string, web, jobs string) {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "project = \"fleet\"\n\nconsul {\n  address = %q\n}\n", server)
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for n := range agents {
			if !yield(n) {
				return
			}
		}
	}) {
		fmt.Fprintf(&b, "\nagent %q {\n  address = %q\n}\n", name, agents[name])
	}
	if web != "" {
		fmt.Fprintf(&b, `
service "web" {
  agent = %q
  port  = 9001

  check "alive" {
    tcp      = "127.0.0.1:9001"
    interval = "30s"
  }
}

service "jobs" {
  agent = %q
  port  = 9002
}
`, web, jobs)
	}
	if err := os.WriteFile(filepath.Join(dir, "main.hcl"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// catalogNodes is the node of each instance of a service, as the
// cluster's catalog (read through the server) has it.
func catalogNodes(t *testing.T, server, service string) []string {
	t.Helper()
	resp, err := http.Get("http://" + server + "/v1/catalog/service/" + service)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var entries []struct{ Node, ServiceID string }
	if err := json.NewDecoder(resp.Body).Decode(&entries); err != nil {
		t.Fatal(err)
	}
	var nodes []string
	for _, e := range entries {
		nodes = append(nodes, e.Node+"/"+e.ServiceID)
	}
	slices.Sort(nodes)
	return nodes
}

// waitCatalog waits until the catalog shows want for the service: an
// agent syncs its services to the servers within a moment.
func waitCatalog(t *testing.T, server, service string, want []string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := catalogNodes(t, server, service)
		if slices.Equal(got, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the catalog has %s on %v, want %v", service, got, want)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestFleet registers services on the agents of two client nodes of a
// real cluster (a server and two clients), reads them back through the
// server's catalog, counts the requests of a converged plan per agent,
// moves a service between agents, and plans with one agent stalled and
// one down.
func TestFleet(t *testing.T) {
	cluster := servers.NewConsulCluster(t, "node-a", "node-b")
	server, nodeA, nodeB := cluster[0], cluster[1], cluster[2]
	w := &wire{}
	w.reset()
	agents := map[string]string{"node-a": w.front(t, "node-a", nodeA), "node-b": w.front(t, "node-b", nodeB)}
	dir := t.TempDir()
	fleetSpecs(t, dir, server.Addr, agents, "node-a", "node-b")
	env := map[string]string{}

	t.Run("apply on two agents", func(t *testing.T) {
		code, out, errOut := runCLI(t, env, "apply", "-auto-approve", dir)
		if code != exitOK {
			t.Fatalf("apply: exit %d\n%s%s", code, out, errOut)
		}
		containsAll(t, "apply output", out, "agent.node-a.service.web: PUT /v1/agent/service/register: ok",
			"agent.node-b.service.jobs: PUT /v1/agent/service/register: ok",
			"Apply complete: 2 created, 0 updated, 0 deleted.")
		waitCatalog(t, server.Addr, "web", []string{"node-a/web"})
		waitCatalog(t, server.Addr, "jobs", []string{"node-b/jobs"})
	})

	t.Run("converged plan reads each agent twice", func(t *testing.T) {
		w.reset()
		code, out, errOut := runCLI(t, env, "plan", "-detailed-exitcode", dir)
		if code != exitOK {
			t.Fatalf("converged plan: exit %d\n%s%s", code, out, errOut)
		}
		want := []string{"GET /v1/agent/checks", "GET /v1/agent/services"}
		for _, agent := range []string{"node-a", "node-b"} {
			got := slices.Sorted(slices.Values(w.reads[agent]))
			if !slices.Equal(got, want) {
				t.Errorf("agent %s got %v, want %v", agent, got, want)
			}
		}
		if len(w.writes) != 0 {
			t.Errorf("a plan wrote: %v", w.writes)
		}
	})

	t.Run("check edited behind provision's back", func(t *testing.T) {
		body := `{"ID":"service:web:alive","Name":"alive","ServiceID":"web","TCP":"127.0.0.1:9001","Interval":"5s"}`
		req, _ := http.NewRequest(http.MethodPut, "http://"+nodeA.Addr+"/v1/agent/check/register", strings.NewReader(body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("editing the check: %v %v", err, resp)
		}
		code, out, _ := runCLI(t, env, "plan", "-detailed-exitcode", dir)
		if code != exitChanges || !strings.Contains(out, `check "service:web:alive": interval is "5s" on the agent, "30s" declared`) {
			t.Fatalf("the edited check is not planned: exit %d\n%s", code, out)
		}
		if code, out, errOut := runCLI(t, env, "apply", "-auto-approve", dir); code != exitOK {
			t.Fatalf("apply: exit %d\n%s%s", code, out, errOut)
		}
	})

	t.Run("move between agents", func(t *testing.T) {
		fleetSpecs(t, dir, server.Addr, agents, "node-b", "node-b")
		code, out, errOut := runCLI(t, env, "plan", "-json", dir)
		if code != exitOK {
			t.Fatalf("plan: exit %d\n%s", code, errOut)
		}
		got := changed(decodePlan(t, out), actionAddr)
		if diff := cmp.Diff([]string{"create agent.node-b.service.web", "delete agent.node-a.service.web"}, got); diff != "" {
			t.Errorf("the move's plan (-want +got):\n%s", diff)
		}
		w.reset()
		if code, out, errOut := runCLI(t, env, "apply", "-auto-approve", dir); code != exitOK {
			t.Fatalf("apply: exit %d\n%s%s", code, out, errOut)
		}
		var services []string
		for _, wr := range w.writes {
			if strings.Contains(wr, "/v1/agent/service/") {
				services = append(services, wr)
			}
		}
		if diff := cmp.Diff([]string{"node-b PUT /v1/agent/service/register", "node-a PUT /v1/agent/service/deregister/web"}, services); diff != "" {
			t.Errorf("the move's writes, in order (-want +got):\n%s", diff)
		}
		waitCatalog(t, server.Addr, "web", []string{"node-b/web"})
		if code, out, _ := runCLI(t, env, "plan", "-detailed-exitcode", dir); code != exitOK {
			t.Fatalf("after the move the plan has changes:\n%s", out)
		}
	})

	t.Run("a failure on one agent stops all", func(t *testing.T) {
		fleetSpecs(t, dir, server.Addr, agents, "node-a", "node-a")
		w.mu.Lock()
		w.refuse = "node-a"
		w.mu.Unlock()
		defer func() { w.mu.Lock(); w.refuse = ""; w.mu.Unlock() }()
		code, out, errOut := runCLI(t, env, "apply", "-auto-approve", "-parallelism", "1", dir)
		if code != exitError {
			t.Fatalf("apply with node-a refusing: exit %d\n%s", code, out)
		}
		containsAll(t, "the failure report", errOut, "agent.node-a (http://"+agents["node-a"]+"):",
			"failed:   agent.node-a.service.jobs (0 of 1 requests sent)",
			"not done: agent.node-a.service.web (0 of 1 requests sent)",
			"agent.node-b (http://"+agents["node-b"]+"):",
			"not done: agent.node-b.service.jobs (0 of 1 requests sent)",
			"not done: agent.node-b.service.web (0 of 1 requests sent)")
		// Nothing was deregistered from node-b: the moves' deletes wait
		// for the registrations.
		waitCatalog(t, server.Addr, "jobs", []string{"node-b/jobs"})
	})

	t.Run("an agent block removed is noticed", func(t *testing.T) {
		fleetSpecs(t, dir, server.Addr, map[string]string{"node-a": agents["node-a"]}, "node-a", "node-a")
		code, _, errOut := runCLI(t, env, "plan", dir)
		if code != exitOK {
			t.Fatalf("plan: exit %d\n%s", code, errOut)
		}
		containsAll(t, "the plan", errOut, "Services on an agent this plan does not read", "had its services on agent.node-b at http://"+agents["node-b"])
	})

	t.Run("no service declared prunes", func(t *testing.T) {
		fleetSpecs(t, dir, server.Addr, agents, "", "")
		code, out, errOut := runCLI(t, env, "apply", "-auto-approve", dir)
		if code != exitOK {
			t.Fatalf("apply: exit %d\n%s%s", code, out, errOut)
		}
		containsAll(t, "apply output", out, "agent.node-b.service.jobs: PUT /v1/agent/service/deregister/jobs: ok", "agent.node-b.service.web: PUT /v1/agent/service/deregister/web: ok", "0 created, 0 updated, 2 deleted.")
		waitCatalog(t, server.Addr, "web", nil)
		waitCatalog(t, server.Addr, "jobs", nil)
	})

	t.Run("one agent stalled, one down", func(t *testing.T) {
		stalled, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer stalled.Close() // accepts (the kernel's backlog) and never answers
		nodeB.Stop()
		fleetSpecs(t, dir, server.Addr, map[string]string{"node-a": stalled.Addr().String(), "node-b": nodeB.Addr}, "node-a", "node-b")
		w.reset()
		start := time.Now()
		code, _, errOut := runCLI(t, env, "plan", "-request-timeout", "1s", dir)
		took := time.Since(start)
		if code != exitError {
			t.Fatalf("plan with node-a stalled and node-b down: exit %d\n%s", code, errOut)
		}
		containsAll(t, "the diagnostics", errOut, `Cannot read the Consul agent "node-a"`, "runs at http://"+stalled.Addr().String(), "main.hcl line 7",
			`Cannot read the Consul agent "node-b"`, "runs at http://"+nodeB.Addr, "main.hcl line 11")
		// Both are read side by side: the stall's 1 s bound, not more.
		if took > 5*time.Second {
			t.Errorf("plan took %s with -request-timeout=1s", took)
		}
		if len(w.writes) != 0 {
			t.Errorf("a failed plan wrote: %v", w.writes)
		}
	})
}
