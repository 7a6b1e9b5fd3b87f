package cli

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/provision-dev/provision/provision/servers"
)

// TestLeaderElection runs provision against three real Consul servers
// (raft_multiplier 1) and a client agent, and kills the leading server
// with SIGKILL: during an apply that holds the lock, and during a healing
// watch.
func TestLeaderElection(t *testing.T) {
	q := servers.NewQuorum(t, "node-a")
	agent := q.Clients[0]
	bin := buildBinary(t)
	env := append(os.Environ(), "CONSUL_HTTP_ADDR="+agent.Addr, "NO_COLOR=1")
	services := func() int {
		var m map[string]json.RawMessage
		json.Unmarshal([]byte(consulDo(t, agent.Addr, "GET", "/v1/agent/services", "")), &m)
		return len(m)
	}

	// The apply sends one registration at a time (-parallelism 1), so
	// that it lasts longer than an election; the leader dies once a tenth
	// is sent. The lock's session is renewed through the new leader, the
	// registrations (on the agent) go on, and the apply completes; the
	// re-run plans nothing.
	t.Run("apply", func(t *testing.T) {
		const n = 1500
		specs := t.TempDir()
		// range makes at most 1,024 values: hundreds times a hundred.
		spec := fmt.Sprintf("project = \"turbulence\"\n\nservice \"svc\" {\n  for_each = toset(flatten([for h in range(%d) : [for i in range(100) : format(\"%%04d\", h * 100 + i)]]))\n  port     = 9000\n}\n", n/100)
		if err := os.WriteFile(filepath.Join(specs, "main.hcl"), []byte(spec), 0o644); err != nil {
			t.Fatal(err)
		}
		var out servers.LogBuffer
		cmd := exec.Command(bin, "apply", "-auto-approve", "-parallelism", "1", specs)
		cmd.Env, cmd.Stdout, cmd.Stderr = env, &out, &out
		start := time.Now()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		waitFor(t, "a tenth of the services registered", 120*time.Second, func() bool {
			select {
			case err := <-done:
				t.Fatalf("the apply ended before the leader was killed: %v\n%s", err, tail(out.Tail(1<<20), 3000))
			default:
			}
			return services() >= n/10
		})
		killed := time.Now()
		dead := q.KillLeader(t)
		defer q.Restart(t, dead)
		err := <-done
		t.Logf("apply of %d services: the leader %s killed %s in, with %d registered; exit %v after %s",
			n, dead.Node, killed.Sub(start).Round(time.Millisecond), n/10, err, time.Since(start).Round(time.Millisecond))
		if err != nil || !strings.Contains(out.Tail(1<<20), fmt.Sprintf("Apply complete: %d created, 0 updated, 0 deleted.", n)) {
			t.Fatalf("the apply across the election: %v\n%s", err, tail(out.Tail(1<<20), 3000))
		}
		plan := exec.Command(bin, "plan", "-detailed-exitcode", specs)
		plan.Env = env
		if b, err := plan.CombinedOutput(); err != nil {
			t.Fatalf("the re-run's plan: %v\n%s", err, tail(string(b), 3000))
		}
	})

	// A deregistration on the agent made while the servers elect a new
	// leader is seen on the agent itself and repaired; /healthz answers
	// 200 throughout, and the log says once why the agent is watched
	// directly.
	t.Run("watch", func(t *testing.T) {
		specs := t.TempDir()
		spec := "project = \"watched\"\n\nservice \"web\" {\n  for_each = toset([\"a\", \"b\", \"c\"])\n  port     = 9100\n}\n"
		if err := os.WriteFile(filepath.Join(specs, "main.hcl"), []byte(spec), 0o644); err != nil {
			t.Fatal(err)
		}
		ports, err := servers.FreePorts(1)
		if err != nil {
			t.Fatal(err)
		}
		listen := fmt.Sprintf("127.0.0.1:%d", ports[0])
		w := startWatch(t, bin, env, "-heal", "-interval", "2s", "-buffer", "100ms,1s", "-listen", listen, specs)
		waitFor(t, "the first run", 30*time.Second, func() bool { return registered(t, agent.Addr, "web-c") == 9100 })
		w.waitLog(t, "3 done, 0 failed, 0 not done", 1, 10*time.Second)
		w.waitLog(t, "this watcher leads project watched", 1, 10*time.Second)
		// A second healer of the same project, which only reports while
		// the first leads: across the election, one of them repairs.
		second := startWatch(t, bin, env, "-heal", "-interval", "2s", "-buffer", "100ms,1s", specs)
		second.waitLog(t, "this watcher does not lead project watched", 1, 20*time.Second)

		var mu sync.Mutex
		health := map[int]int{}
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				case <-time.After(100 * time.Millisecond):
				}
				code := 0
				if resp, err := http.Get("http://" + listen + "/healthz"); err == nil {
					code = resp.StatusCode
					resp.Body.Close()
				}
				mu.Lock()
				health[code]++
				mu.Unlock()
			}
		}()

		dead := q.KillLeader(t)
		defer q.Restart(t, dead)
		killed := time.Now()
		consulDo(t, agent.Addr, "PUT", "/v1/agent/service/deregister/web-b", "")
		gone := time.Since(killed)
		took := waitFor(t, "web-b registered again", 20*time.Second, func() bool { return registered(t, agent.Addr, "web-b") == 9100 })
		leader := ""
		waitFor(t, "a new leader", 30*time.Second, func() bool { leader = agent.Leader(); return leader != "" })
		time.Sleep(time.Second)
		close(stop)
		wg.Wait()
		t.Logf("leader %s killed; web-b deregistered %s later, registered again %s after that; /healthz answers %v",
			dead.Node, gone.Round(time.Millisecond), took.Round(time.Millisecond), health)
		if health[200] == 0 || len(health) != 1 {
			t.Errorf("/healthz during the election: %v, want 200 only", health)
		}
		log := w.out.Tail(1 << 20)
		_, during, _ := strings.Cut(log, "3 done, 0 failed, 0 not done")
		t.Logf("the watcher's log across the election:%s", during)
		repairs := strings.Count(log, "repairing service.web-b") + strings.Count(second.out.Tail(1<<20), "repairing service.web-b")
		if repairs != 1 {
			t.Errorf("web-b repaired %d times by the two watchers, want once:\n%s\nthe second:\n%s", repairs, tail(log, 3000), tail(second.out.Tail(1<<20), 3000))
		}
		// Once per time the catalog stops answering: once, unless it
		// answered for a moment during the election.
		if n := strings.Count(log, "watching the agent's own services"); n < 1 || n > 2 {
			t.Errorf("the log says %d times that it watches the agent:\n%s", n, tail(log, 4000))
		}
	})
}

// brief is an apply's output without its lines of one document each
// (sent, or listed as not done), counted instead.
func brief(s string) string {
	var out []string
	n := 0
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, `document["`) && (strings.Contains(l, "requests sent)") || strings.HasPrefix(l, "[") && strings.Contains(l, ": ok (")) {
			n++
			continue
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n") + fmt.Sprintf("\n(%d lines of single documents left out)", n)
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// TestMasterFailover runs provision against a member cluster of three
// master-eligible Elasticsearch 2.4.1 nodes (minimum_master_nodes 2),
// named by all three in urls: the elected master is killed with SIGKILL
// once the apply has created the index, while the mappings and 1,000
// documents are on their way. Whatever the apply reports, a re-run
// converges with every document written once (_version 1). Then the dead
// node, first in urls, is only a warning: the others serve.
func TestMasterFailover(t *testing.T) {
	nodes := servers.NewMasters(t, "t1", 3)
	bin := buildBinary(t)
	env := append(os.Environ(), "CONSUL_HTTP_ADDR=", "ELASTICSEARCH_URL=", "NO_COLOR=1")
	specs := t.TempDir()
	write := func(urls []string, docs int) {
		var quoted []string
		for _, u := range urls {
			quoted = append(quoted, fmt.Sprintf("%q", u))
		}
		spec := fmt.Sprintf(`project = "failover"

search "t1" {
  urls         = [%s]
  cluster_name = "t1"
}

index "docs" {
  search = "t1"
  mapping "doc" {
    properties = { title = "string" }
  }
}
`, strings.Join(quoted, ", "))
		if docs > 0 {
			spec += fmt.Sprintf(`
document "doc" "d" {
  for_each = toset([for i in range(%d) : format("%%04d", i)])
  index    = "docs"
  source   = { title = each.key }
}
`, docs)
		}
		if err := os.WriteFile(filepath.Join(specs, "main.hcl"), []byte(spec), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run := func(args ...string) (string, error) {
		cmd := exec.Command(bin, args...)
		cmd.Env = env
		b, err := cmd.CombinedOutput()
		return string(b), err
	}
	var urls []string
	for _, n := range nodes {
		urls = append(urls, n.URL)
	}
	master := servers.Master(nodes)
	if master == nil {
		t.Fatal("no elected master")
	}
	var live *servers.Elasticsearch
	for _, n := range nodes {
		if n != master {
			live = n
		}
	}
	get := func(path string, v any) {
		t.Helper()
		resp, err := http.Get(live.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
	}

	t.Run("master killed", func(t *testing.T) {
		// The index first, green (each primary with a replica on another
		// node); then the documents, the master killed as their apply
		// starts sending.
		write(urls, 0)
		if out, err := run("apply", "-auto-approve", specs); err != nil {
			t.Fatalf("the index: %v\n%s", err, tail(out, 3000))
		}
		var green struct{ Status string }
		get("/_cluster/health/docs?wait_for_status=green&timeout=60s", &green)
		if green.Status != "green" {
			t.Fatalf("the index is %s, not green", green.Status)
		}
		const n = 1000
		write(urls, n)
		var out servers.LogBuffer
		cmd := exec.Command(bin, "apply", "-auto-approve", specs)
		cmd.Env, cmd.Stdout, cmd.Stderr = env, &out, &out
		start := time.Now()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the plan of the documents", 60*time.Second, func() bool { return strings.Contains(out.Tail(1<<20), "Plan: 1000 to create") })
		master.Kill()
		killed := time.Since(start)
		err := cmd.Wait()
		first := brief(out.Tail(1 << 20))
		summary := first[strings.LastIndex(first, "\n[")+1:]
		t.Logf("apply of %d documents: master %s killed %s in, as the apply started; exit %v after %s; its end:\n%s", n, master.Name, killed.Round(time.Millisecond), err, time.Since(start).Round(time.Millisecond), tail(summary, 1500))
		again, err := run("apply", "-auto-approve", specs)
		if err != nil {
			t.Fatalf("the re-run: %v\n%s", err, tail(brief(again), 4000))
		}
		t.Logf("the re-run: %s", again[strings.LastIndex(strings.TrimSpace(again), "\n")+1:])
		if plan, err := run("plan", "-detailed-exitcode", specs); err != nil {
			t.Fatalf("the plan after the re-run: %v\n%s", err, tail(plan, 3000))
		}
		var hits struct {
			Hits struct {
				Total int
				Hits  []struct {
					ID      string `json:"_id"`
					Version int    `json:"_version"`
				}
			}
		}
		get("/docs/_search?size=2000&version=true&_source=false", &hits)
		twice := 0
		for _, h := range hits.Hits.Hits {
			if h.Version != 1 {
				twice++
			}
		}
		t.Logf("%d documents in docs, %d of them written more than once", hits.Hits.Total, twice)
		if hits.Hits.Total != n || twice != 0 {
			t.Errorf("docs holds %d documents (%d written more than once), want %d, each written once", hits.Hits.Total, twice, n)
		}
	})

	t.Run("first node dead", func(t *testing.T) {
		write(append([]string{master.URL}, slices.DeleteFunc(slices.Clone(urls), func(u string) bool { return u == master.URL })...), 1001)
		out, err := run("apply", "-auto-approve", specs)
		if err != nil || !strings.Contains(out, "1 created, 0 updated, 0 deleted") {
			t.Fatalf("apply with the first node of urls dead: %v\n%s", err, tail(out, 3000))
		}
		if !strings.Contains(out, "A search node does not answer") || !strings.Contains(out, master.URL) {
			t.Errorf("no warning names the dead node %s:\n%s", master.URL, tail(out, 3000))
		}
	})
}

// TestRedIndexNodeStopped: on three master-eligible Elasticsearch 2.4.1
// nodes, an index whose only copy of a primary is on a node that is then
// stopped is red, and the plan says so at its index block, naming the
// primary: an error when the plan writes into it (nothing is sent), a
// warning when it does not. With a document declared in it, the search
// of the project's documents leaves the red index out (it failed whole,
// a 503 that made the cluster unreadable and never said why).
func TestRedIndexNodeStopped(t *testing.T) {
	nodes := servers.NewMasters(t, "t1", 3)
	master := servers.Master(nodes)
	if master == nil {
		t.Fatal("no elected master")
	}
	var holder *servers.Elasticsearch
	var urls []string
	for _, n := range nodes {
		if n != master {
			holder = n
		}
		urls = append(urls, fmt.Sprintf("%q", n.URL))
	}
	esDo(t, master.URL, "PUT", "/reds", fmt.Sprintf(`{"settings":{"number_of_shards":2,"number_of_replicas":0,"index.routing.allocation.require._name":%q}}`, holder.Name))
	esDo(t, master.URL, "GET", "/_cluster/health/reds?wait_for_status=green&timeout=60s", "")
	specs := t.TempDir()
	write := func(doc string) {
		spec := fmt.Sprintf(`project = "red"

search "t1" {
  urls         = [%s]
  cluster_name = "t1"
}

import {
  to = index.reds
}

index "reds" {
  search = "t1"
  mapping "doc" {
    properties = { title = "string" }
  }
}
`, strings.Join(urls, ", "))
		if err := os.WriteFile(filepath.Join(specs, "main.hcl"), []byte(spec+doc), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("")
	env := map[string]string{"CONSUL_HTTP_ADDR": "", "ELASTICSEARCH_URL": "", "NO_COLOR": "1"}
	if code, out, errOut := runCLI(t, env, "apply", "-auto-approve", specs); code != exitOK {
		t.Fatalf("taking the index over: exit %d\n%s%s", code, out, errOut)
	}
	if err := holder.Stop(); err != nil {
		t.Fatal(err)
	}
	t.Logf("stopped %s, which holds both primaries of reds", holder.Name)
	var out, errOut string
	code := 0
	waitFor(t, "the index red", 60*time.Second, func() bool {
		code, out, errOut = runCLI(t, env, "plan", specs)
		return strings.Contains(out+errOut, "Index is red")
	})
	if code != exitOK || !strings.Contains(errOut, "Warning: Index is red") || !strings.Contains(errOut, `The index "reds" on cluster t1 is red: its primary shards 0, 1 have no copy allocated`) {
		t.Errorf("a plan that does not write into the red index: exit %d\n%s%s", code, out, errOut)
	}
	t.Logf("the plan that does not write into it:\n%s%s", out, errOut)
	write(`
document "doc" "one" {
  index  = "reds"
  source = { title = "one" }
}
`)
	code, out, errOut = runCLI(t, env, "apply", "-auto-approve", specs)
	if code != exitError || !strings.Contains(errOut, "Error: Index is red") || !strings.Contains(errOut, "This plan writes into it (2 changes), so it is refused") || strings.Contains(out, "POST /_bulk") {
		t.Errorf("an apply that writes into the red index: exit %d\n%s%s", code, out, errOut)
	}
	t.Logf("the apply that writes into it:\n%s%s", out, errOut)
}
