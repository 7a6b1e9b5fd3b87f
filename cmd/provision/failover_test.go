package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
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
		const n = 600
		specs := t.TempDir()
		spec := fmt.Sprintf("project = \"turbulence\"\n\nservice \"svc\" {\n  for_each = toset([for i in range(%d) : format(\"%%04d\", i)])\n  port     = 9000\n}\n", n)
		if err := os.WriteFile(filepath.Join(specs, "main.hcl"), []byte(spec), 0o644); err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		cmd := exec.Command(bin, "apply", "-auto-approve", "-parallelism", "1", specs)
		cmd.Env, cmd.Stdout, cmd.Stderr = env, &out, &out
		start := time.Now()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "a tenth of the services registered", 60*time.Second, func() bool { return services() >= n/10 })
		killed := time.Now()
		dead := q.KillLeader(t)
		err := cmd.Wait()
		t.Logf("apply of %d services: the leader %s killed %s in, with %d registered; exit %v after %s",
			n, dead.Node, killed.Sub(start).Round(time.Millisecond), n/10, err, time.Since(start).Round(time.Millisecond))
		if err != nil || !strings.Contains(out.String(), fmt.Sprintf("Apply complete: %d created, 0 updated, 0 deleted.", n)) {
			t.Fatalf("the apply across the election: %v\n%s", err, tail(out.String(), 3000))
		}
		plan := exec.Command(bin, "plan", "-detailed-exitcode", specs)
		plan.Env = env
		if b, err := plan.CombinedOutput(); err != nil {
			t.Fatalf("the re-run's plan: %v\n%s", err, tail(string(b), 3000))
		}
		q.Restart(t, dead)
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
		if n := strings.Count(log, "watching the agent's own services"); n != 1 {
			t.Errorf("the log says %d times that it watches the agent:\n%s", n, tail(log, 4000))
		}
		q.Restart(t, dead)
	})
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
