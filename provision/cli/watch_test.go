package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/consul/api"
	"github.com/prometheus/common/expfmt"
	"github.com/provision-dev/provision/provision/servers"
)

// watcher is a provision watch process of a test.
type watcher struct {
	cmd *exec.Cmd
	out *servers.LogBuffer
}

func startWatch(t *testing.T, bin string, env []string, args ...string) *watcher {
	t.Helper()
	w := &watcher{cmd: exec.Command(bin, append([]string{"watch"}, args...)...), out: &servers.LogBuffer{}}
	w.cmd.Env, w.cmd.Stdout, w.cmd.Stderr = env, w.out, w.out
	if err := w.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if w.cmd.ProcessState == nil {
			w.cmd.Process.Kill()
			w.cmd.Wait()
		}
		if t.Failed() {
			t.Logf("watch log:\n%s", w.out.Tail(8000))
		}
	})
	return w
}

// startWatchMetrics is startWatch with /metrics served on a free port,
// whose address it returns beside the watcher.
func startWatchMetrics(t *testing.T, bin string, env []string, args ...string) (*watcher, string) {
	t.Helper()
	ports, err := servers.FreePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	listen := fmt.Sprintf("127.0.0.1:%d", ports[0])
	return startWatch(t, bin, env, append([]string{"-listen", listen}, args...)...), listen
}

// metrics reads the watcher's /metrics at listen: a metric's value by
// name (the first series of its family), and the text as served.
func metrics(t *testing.T, listen string) (func(name string) float64, string) {
	t.Helper()
	resp, err := http.Get("http://" + listen + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	text, _ := io.ReadAll(resp.Body)
	families, err := new(expfmt.TextParser).TextToMetricFamilies(bytes.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	return func(name string) float64 {
		f := families[name]
		if f == nil || len(f.Metric) == 0 {
			t.Fatalf("no %s in /metrics", name)
		}
		m := f.Metric[0]
		if m.Counter != nil {
			return m.Counter.GetValue()
		}
		return m.Gauge.GetValue()
	}, string(text)
}

// waitMetric waits until the watcher's metric name reaches at least want.
func waitMetric(t *testing.T, listen, name string, want float64, limit time.Duration) {
	t.Helper()
	waitFor(t, fmt.Sprintf("%s at %v", name, want), limit, func() bool {
		value, _ := metrics(t, listen)
		return value(name) >= want
	})
}

// waitLog waits until the watcher's log has want, n times.
func (w *watcher) waitLog(t *testing.T, want string, n int, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for strings.Count(w.out.Tail(1<<20), want) < n {
		if time.Now().After(deadline) {
			t.Fatalf("the watch log lacks %d× %q after %s:\n%s", n, want, limit, w.out.Tail(6000))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func consulDo(t *testing.T, addr, method, path, body string) string {
	t.Helper()
	return consulAs(t, addr, "", method, path, body)
}

// consulAs is consulDo with an ACL token.
func consulAs(t *testing.T, addr, token, method, path, body string) string {
	t.Helper()
	_, answer := consulCall(t, addr, token, method, path, body)
	return answer
}

// consulCall sends a request to the agent, with an ACL token unless it is
// empty, and returns the answer's status and body, whatever they are.
func consulCall(t *testing.T, addr, token, method, path, body string) (int, string) {
	t.Helper()
	return servers.Curl(t, method, "http://"+addr+path, body, "X-Consul-Token", token)
}

// registered is the port of the agent's service id, 0 when it is not
// registered.
func registered(t *testing.T, addr, id string) int {
	return registeredAs(t, addr, "", id)
}

// registeredAs is registered, read with an ACL token.
func registeredAs(t *testing.T, addr, token, id string) int {
	var s struct{ Port int }
	if json.Unmarshal([]byte(consulAs(t, addr, token, "GET", "/v1/agent/service/"+id, "")), &s) != nil {
		return 0
	}
	return s.Port
}

func waitFor(t *testing.T, what string, limit time.Duration, ok func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !ok() {
		if time.Since(start) > limit {
			t.Fatalf("%s: not after %s", what, limit)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return time.Since(start)
}

// TestWatch runs provision watch -heal against a real agent: the first
// run applies; a deregistered service and a registration edited by hand
// are repaired within seconds; a fight (a loop that edits a service back
// every 200 ms) is repaired up to -max-repairs times and then left alone, loudly; a repair waits for the lock a pipeline holds; /metrics
// parses as Prometheus text; an agent restarted empty is healed whole; a
// second watcher only reports while the
// first leads, and takes over within the session's TTL when the first is
// killed with SIGKILL; SIGTERM ends a watcher within 5 s with its leader
// lock released.
func TestWatch(t *testing.T) {
	// The restarted agent's data: removed after the agent stops (cleanups
	// run last first), not at the end of the subtest that restarts it,
	// while the agent still writes there.
	restartDir := t.TempDir()
	agent := servers.NewConsul(t)
	bin := buildBinary(t)
	specs := t.TempDir()
	copyTree(t, "../../testdata/three", specs)
	env := append(os.Environ(), "CONSUL_HTTP_ADDR="+agent.Addr, "NO_COLOR=1")
	ports, err := servers.FreePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	listen := fmt.Sprintf("127.0.0.1:%d", ports[0])
	first := startWatch(t, bin, env, "-heal", "-interval", "5s", "-buffer", "200ms,2s", "-max-repairs", "3", "-listen", listen, specs)
	first.waitLog(t, "this watcher leads project three", 1, 20*time.Second)
	// All three: the first run sends them side by side, in any order (a
	// deregistration made before the first run's own register of a-1
	// was no drift at all).
	waitFor(t, "the first run registers the services", 20*time.Second, func() bool {
		return registered(t, agent.Addr, "a-1") == 19001 && registered(t, agent.Addr, "b-1") == 19002 && registered(t, agent.Addr, "c-1") == 19003
	})
	first.waitLog(t, "3 done, 0 failed, 0 not done", 1, 10*time.Second)

	t.Run("deregistered", func(t *testing.T) {
		consulDo(t, agent.Addr, "PUT", "/v1/agent/service/deregister/a-1", "")
		took := waitFor(t, "a-1 registered again", 10*time.Second, func() bool { return registered(t, agent.Addr, "a-1") == 19001 })
		first.waitLog(t, "service.a-1: consul: create, drifted since", 2, time.Second)
		t.Logf("a deregistered service was registered again in %s", took.Round(10*time.Millisecond))
	})

	t.Run("edited by hand", func(t *testing.T) {
		var svc map[string]any
		json.Unmarshal([]byte(consulDo(t, agent.Addr, "GET", "/v1/agent/service/b-1", "")), &svc)
		body := fmt.Sprintf(`{"ID":"b-1","Name":"b","Port":29002,"Meta":%s}`, mustJSON(svc["Meta"]))
		consulDo(t, agent.Addr, "PUT", "/v1/agent/service/register", body)
		took := waitFor(t, "b-1 repaired", 10*time.Second, func() bool { return registered(t, agent.Addr, "b-1") == 19002 })
		t.Logf("an edited registration was repaired in %s", took.Round(10*time.Millisecond))
	})

	t.Run("specs half-written", func(t *testing.T) {
		// An editor saves a broken file: the last good specs stay in
		// force and still heal.
		broken := filepath.Join(specs, "zz-editing.hcl")
		if err := os.WriteFile(broken, []byte("service \"d\" {\n  port = \n"), 0o644); err != nil {
			t.Fatal(err)
		}
		first.waitLog(t, "do not load; the last good ones stay in force", 1, 10*time.Second)
		consulDo(t, agent.Addr, "PUT", "/v1/agent/service/deregister/a-1", "")
		waitFor(t, "a-1 registered again under the last good specs", 10*time.Second, func() bool { return registered(t, agent.Addr, "a-1") == 19001 })
		if err := os.Remove(broken); err != nil {
			t.Fatal(err)
		}
		first.waitLog(t, "changed and load", 1, 10*time.Second)
	})

	t.Run("lock held by a pipeline", func(t *testing.T) {
		// A pipeline's apply holds the project's lock: the repair waits
		// for it and runs once it is released, never beside it.
		client, err := api.NewClient(&api.Config{Address: agent.Addr})
		if err != nil {
			t.Fatal(err)
		}
		lock, err := client.LockOpts(&api.LockOptions{Key: "provision/locks/three", Value: []byte(`{"operation":"apply","host":"pipeline"}`)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := lock.Lock(nil); err != nil {
			t.Fatal(err)
		}
		consulDo(t, agent.Addr, "PUT", "/v1/agent/service/deregister/b-1", "")
		time.Sleep(2 * time.Second)
		if registered(t, agent.Addr, "b-1") != 0 {
			t.Fatal("b-1 was registered while another run held the lock")
		}
		if err := lock.Unlock(); err != nil {
			t.Fatal(err)
		}
		took := waitFor(t, "b-1 registered once the lock is free", 10*time.Second, func() bool { return registered(t, agent.Addr, "b-1") == 19002 })
		t.Logf("repaired %s after the pipeline released the lock", took.Round(10*time.Millisecond))
	})

	t.Run("fight", func(t *testing.T) {
		var svc map[string]any
		json.Unmarshal([]byte(consulDo(t, agent.Addr, "GET", "/v1/agent/service/c-1", "")), &svc)
		body := fmt.Sprintf(`{"ID":"c-1","Name":"c","Port":29003,"Meta":%s}`, mustJSON(svc["Meta"]))
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			for {
				select {
				case <-stop:
					return
				case <-time.After(200 * time.Millisecond):
					if registered(t, agent.Addr, "c-1") != 29003 {
						consulDo(t, agent.Addr, "PUT", "/v1/agent/service/register", body)
					}
				}
			}
		}()
		first.waitLog(t, "service.c-1: left alone: repaired 3 times", 1, 30*time.Second)
		close(stop)
		<-done
		// Left alone: the fighter's state stays.
		time.Sleep(time.Second)
		if port := registered(t, agent.Addr, "c-1"); port != 29003 {
			t.Errorf("c-1 port %d after it was left alone, want the fighter's 29003", port)
		}
	})

	t.Run("metrics", func(t *testing.T) {
		value, text := metrics(t, listen)
		var own []string
		for _, line := range strings.Split(text, "\n") {
			if strings.HasPrefix(line, "provision_") {
				own = append(own, line)
			}
		}
		t.Logf("/metrics, provision's own:\n%s", strings.Join(own, "\n"))
		if value("provision_repairs_total") < 3 || value("provision_leader") != 1 || value("provision_fights_total") != 1 ||
			value("provision_last_reconcile_timestamp_seconds") < float64(time.Now().Add(-time.Minute).Unix()) {
			t.Errorf("metrics: repairs %v, leader %v, fights %v, last reconcile %v", value("provision_repairs_total"), value("provision_leader"),
				value("provision_fights_total"), value("provision_last_reconcile_timestamp_seconds"))
		}
		if h, err := http.Get("http://" + listen + "/healthz"); err != nil || h.StatusCode != 200 {
			t.Errorf("/healthz: %v %v", h, err)
		}
	})

	t.Run("agent restarted", func(t *testing.T) {
		// The node is rebuilt: its agent comes back on the same address
		// without its registrations, keys and sessions (the leader lock
		// too). The watcher reconnects, leads again and registers all.
		restarted := time.Now()
		if err := agent.Restart(context.Background(), restartDir); err != nil {
			t.Fatal(err)
		}
		up := time.Since(restarted)
		took := waitFor(t, "a-1, b-1 and c-1 registered on the restarted agent", 60*time.Second, func() bool {
			return registered(t, agent.Addr, "a-1") == 19001 && registered(t, agent.Addr, "b-1") == 19002 && registered(t, agent.Addr, "c-1") == 19003
		})
		first.waitLog(t, "this watcher leads project three", 2, 10*time.Second)
		_, heal, _ := strings.Cut(first.out.Tail(1<<20), "does not answer")
		t.Logf("the agent came back in %s; its services were registered again %s after:\n...does not answer%s", up.Round(100*time.Millisecond), took.Round(100*time.Millisecond), heal)
	})

	t.Run("leader killed", func(t *testing.T) {
		second := startWatch(t, bin, env, "-heal", "-interval", "5s", "-buffer", "200ms,2s", specs)
		second.waitLog(t, "this watcher does not lead project three", 1, 20*time.Second)
		first.cmd.Process.Signal(syscall.SIGKILL)
		first.cmd.Wait()
		killed := time.Now()
		second.waitLog(t, "this watcher leads project three", 1, 40*time.Second)
		t.Logf("the second watcher took over %s after the leader was killed", time.Since(killed).Round(100*time.Millisecond))
		consulDo(t, agent.Addr, "PUT", "/v1/agent/service/deregister/a-1", "")
		waitFor(t, "a-1 registered again by the new leader", 10*time.Second, func() bool { return registered(t, agent.Addr, "a-1") == 19001 })

		start := time.Now()
		second.cmd.Process.Signal(syscall.SIGTERM)
		err := second.cmd.Wait()
		if err != nil || time.Since(start) > 5*time.Second {
			t.Errorf("SIGTERM: %v after %s", err, time.Since(start))
		}
		if kv := consulDo(t, agent.Addr, "GET", "/v1/kv/provision/watch/three", ""); strings.Contains(kv, `"Session"`) {
			t.Errorf("the leader lock is still held after SIGTERM: %s", kv)
		}
	})
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func copyTree(t *testing.T, from, to string) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(from, "*.hcl"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, filepath.Base(f)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The modules the specs call, whole.
	if _, err := os.Stat(filepath.Join(from, "modules")); err == nil {
		if err := os.CopyFS(filepath.Join(to, "modules"), os.DirFS(filepath.Join(from, "modules"))); err != nil {
			t.Fatal(err)
		}
	}
}

// TestWatchPermission: on an agent with ACLs (default deny), a watcher
// whose token may not write one of the services stops at its first run,
// as plan does, naming the permission: the plan checks them, so no
// repair is ever tried with it. One that cannot take the leader's key
// reports without healing; one whose token may not write a service
// added later says so once and heals the rest.
func TestWatchPermission(t *testing.T) {
	agent := servers.NewACLConsul(t)
	bin := buildBinary(t)
	specs := t.TempDir()
	copyTree(t, "../../testdata/three", specs)
	base := append(os.Environ(), "CONSUL_HTTP_ADDR="+agent.Addr, "NO_COLOR=1")
	policy := exec.Command(bin, "policy", "-watch", specs)
	policy.Env = append(base, "CONSUL_HTTP_TOKEN="+agent.Token)
	rules, err := policy.Output()
	if err != nil {
		t.Fatalf("policy: %v", err)
	}
	full := string(rules)
	if !strings.Contains(full, "key \"provision/watch/three\" {\n  policy = \"write\"\n}") {
		t.Fatalf("policy -watch lacks the leader's key:\n%s", rules)
	}
	// Everything but service "c".
	limited := strings.Replace(string(rules), "service \"c\" {\n  policy = \"write\"\n}", "", 1)
	env := append(base, "CONSUL_HTTP_TOKEN="+agent.NewToken(t, "limited", limited))
	w := startWatch(t, bin, env, "-heal", "-interval", "1s", specs)
	err = w.cmd.Wait()
	out := w.out.Tail(1 << 20)
	if err == nil || w.cmd.ProcessState.ExitCode() != 1 || !strings.Contains(out, `The Consul token lacks service:write on "c" (for create service.c-1)`) ||
		strings.Contains(out, "repairing") || registeredAs(t, agent.Addr, agent.Token, "a-1") != 0 {
		t.Errorf("watch with a token that may not write c: %v\n%s", err, out)
	}

	// An apply's policy, without -watch: the watcher cannot lead, says so
	// once however often it tries, and reports without healing.
	policy = exec.Command(bin, "policy", specs)
	policy.Env = append(base, "CONSUL_HTTP_TOKEN="+agent.Token)
	if rules, err = policy.Output(); err != nil || strings.Contains(string(rules), "provision/watch/") {
		t.Fatalf("policy without -watch: %v\n%s", err, rules)
	}
	env = append(base, "CONSUL_HTTP_TOKEN="+agent.NewToken(t, "apply-only", string(rules)))
	w = startWatch(t, bin, env, "-heal", "-interval", "1s", specs)
	// It never says that a leader heals: none can, with this token.
	w.waitLog(t, "this watcher cannot take part in the election of project three's healer", 2, 30*time.Second)
	out = w.out.Tail(1 << 20)
	if n := strings.Count(out, "taking the leader lock provision/watch/three failed"); n != 1 || !strings.Contains(out, "403") || strings.Contains(out, "the leader heals") || registeredAs(t, agent.Addr, agent.Token, "a-1") != 0 {
		t.Errorf("watch with an apply's token: %d lock failures logged, a-1 on port %d\n%s", n, registeredAs(t, agent.Addr, agent.Token, "a-1"), out)
	}
	w.cmd.Process.Kill()
	w.cmd.Wait()

	// The whole policy; then a service the token may not write is added
	// to the specs: it is said once, however many reconciles follow,
	// never tried, and the rest is still healed.
	env = append(base, "CONSUL_HTTP_TOKEN="+agent.NewToken(t, "watch", full))
	w, listen := startWatchMetrics(t, bin, env, "-heal", "-interval", "1s", "-buffer", "100ms,1s", specs)
	waitFor(t, "the first run registers a-1, b-1 and c-1", 20*time.Second, func() bool { return registeredAs(t, agent.Addr, agent.Token, "c-1") == 19003 })
	if err := os.WriteFile(filepath.Join(specs, "d.hcl"), []byte("service \"d\" {\n  id   = \"d-1\"\n  port = 19004\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w.waitLog(t, `The Consul token lacks service:write on "d" (for create service.d-1)`, 1, 10*time.Second)
	consulAs(t, agent.Addr, agent.Token, "PUT", "/v1/agent/service/deregister/a-1", "")
	took := waitFor(t, "a-1 registered again beside the denied d-1", 10*time.Second, func() bool { return registeredAs(t, agent.Addr, agent.Token, "a-1") == 19001 })
	value, _ := metrics(t, listen)
	waitMetric(t, listen, "provision_last_reconcile_timestamp_seconds", value("provision_last_reconcile_timestamp_seconds")+3, 20*time.Second) // more reconciles
	out = w.out.Tail(1 << 20)
	if n := strings.Count(out, `lacks service:write on "d"`); n != 1 || registeredAs(t, agent.Addr, agent.Token, "d-1") != 0 || strings.Contains(out, "repairing service.d-1") {
		t.Errorf("a service the token may not write: said %d times, d-1 on port %d\n%s", n, registeredAs(t, agent.Addr, agent.Token, "d-1"), out)
	}
	t.Logf("a-1 healed in %s beside a service the token may not write", took.Round(10*time.Millisecond))
}

// TestWatchStalledAgent: through Toxiproxy, the agent stalls every
// answer. The watcher stays up, says once that it cannot read the agent,
// plans nothing from the failed read, and heals what drifted meanwhile
// once the agent answers again.
func TestWatchStalledAgent(t *testing.T) {
	agent := servers.NewConsul(t)
	faults := newFaulty(t, agent.Addr)
	bin := buildBinary(t)
	specs := t.TempDir()
	copyTree(t, "../../testdata/three", specs)
	env := append(os.Environ(), "CONSUL_HTTP_ADDR="+faults.proxy.Listen, "NO_COLOR=1")
	w, listen := startWatchMetrics(t, bin, env, "-heal", "-interval", "1s", "-buffer", "100ms,1s", "-request-timeout", "1s", specs)
	w.waitLog(t, "3 done, 0 failed, 0 not done", 1, 20*time.Second) // the first run, its answers all in

	faults.add(`{"name":"stall","type":"timeout","stream":"downstream","attributes":{"timeout":0}}`)
	consulDo(t, agent.Addr, "PUT", "/v1/agent/service/deregister/a-1", "") // around the proxy
	w.waitLog(t, "Cannot read the Consul agent", 1, 30*time.Second)
	waitMetric(t, listen, "provision_reconcile_failures_total", 4, 60*time.Second) // more polls, each stalling
	out := w.out.Tail(1 << 20)
	if n := strings.Count(out, "Cannot read the Consul agent"); n != 1 || registered(t, agent.Addr, "a-1") != 0 {
		t.Errorf("a stalled agent: said %d times, a-1 on port %d\n%s", n, registered(t, agent.Addr, "a-1"), out)
	}
	faults.clear()
	took := waitFor(t, "a-1 registered again once the agent answers", 30*time.Second, func() bool { return registered(t, agent.Addr, "a-1") == 19001 })
	t.Logf("a-1 registered again %s after the agent answered again", took.Round(100*time.Millisecond))
}

// TestWatchIndex: an index deleted on the member cluster (a cleanup job)
// is created again at the next poll, with its mapping. Through Toxiproxy,
// a master that resets every connection is a failed reconcile, said once
// however many polls fail, with the watcher up and nothing sent; once it
// answers again, the watcher heals again.
func TestWatchIndex(t *testing.T) {
	es := servers.NewCluster(t, "watch")
	bin := buildBinary(t)
	specs := t.TempDir()
	faults := newFaulty(t, strings.TrimPrefix(es.URL, "http://"))
	spec := fmt.Sprintf("project = \"watched\"\n\nsearch \"t1\" {\n  url          = %q\n  cluster_name = \"watch\"\n}\n\nindex \"logs\" {\n  search = \"t1\"\n  mapping \"doc\" {\n    properties = { title = \"string\" }\n  }\n}\n", "http://"+faults.proxy.Listen)
	if err := os.WriteFile(filepath.Join(specs, "main.hcl"), []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "CONSUL_HTTP_ADDR=", "NO_COLOR=1")
	w, listen := startWatchMetrics(t, bin, env, "-heal", "-interval", "1s", "-buffer", "100ms,1s", specs)
	exists := func() bool {
		resp, err := http.Get(es.URL + "/logs/_mapping/doc")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	}
	waitFor(t, "the index created by the first run", 30*time.Second, exists)
	req, _ := http.NewRequest("DELETE", es.URL+"/logs", nil)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 200 {
		t.Fatalf("deleting the index: %v %v", resp, err)
	}
	took := waitFor(t, "the deleted index created again", 20*time.Second, exists)
	w.waitLog(t, `index.logs: search.t1: create`, 2, time.Second)
	t.Logf("a deleted index was created again in %s", took.Round(10*time.Millisecond))

	faults.add(`{"name":"reset","type":"reset_peer","stream":"downstream","attributes":{"timeout":0}}`)
	w.waitLog(t, "Cannot read the search cluster", 1, 10*time.Second)
	waitMetric(t, listen, "provision_reconcile_failures_total", 4, 30*time.Second) // more polls, each failing
	out := w.out.Tail(1 << 20)
	if n := strings.Count(out, "Cannot read the search cluster"); n != 1 {
		t.Errorf("a master that resets, said %d times:\n%s", n, out)
	}
	if _, after, _ := strings.Cut(out, "Cannot read the search cluster"); strings.Contains(after, " sent ") || strings.Contains(after, "delete") {
		t.Errorf("something was planned or sent from a failed read:\n%s", after)
	}
	faults.clear()
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 200 {
		t.Fatalf("deleting the index: %v %v", resp, err)
	}
	// The watcher is still up: it heals again.
	waitFor(t, "the index created again once the master answers", 20*time.Second, exists)
}

// buildBinary builds provision for a test that runs it as a process.
func buildBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "provision")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/provision").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// TestWatchKeys: a watcher follows the folder of the declared keys with a
// blocking query, so a key edited or deleted by hand is repaired within
// seconds, though the poll is an hour away. The edit is a plain PUT, as
// consul kv put and most clients send it: without flags, so without the
// mark in them; the key's record keeps it the project's. A value under
// ignore_changes edited so is left as it is (only its mark goes back),
// and a key made by hand beside them is never touched.
func TestWatchKeys(t *testing.T) {
	agent := servers.NewConsul(t)
	bin := buildBinary(t)
	specs := t.TempDir()
	// A key whose value another hand owns (ignore_changes), and a key
	// made by hand beside them.
	spec := "project = \"keys\"\n\nkey \"apps/keys/limits\" {\n  value = { rate = 100 }\n  flags = 3\n}\n\n" +
		"key \"apps/keys/tuned\" {\n  value = \"declared\"\n  lifecycle {\n    ignore_changes = [value]\n  }\n}\n"
	consulDo(t, agent.Addr, "PUT", "/v1/kv/apps/keys/hand", "made-by-hand")
	if err := os.WriteFile(filepath.Join(specs, "main.hcl"), []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "CONSUL_HTTP_ADDR="+agent.Addr, "NO_COLOR=1")
	w := startWatch(t, bin, env, "-heal", "-interval", "1h", "-buffer", "100ms,1s", specs)
	w.waitLog(t, "this watcher leads project keys", 1, 20*time.Second)
	valueOf := func(key string) (string, uint64) {
		var pairs []struct {
			Value []byte
			Flags uint64
		}
		if json.Unmarshal([]byte(consulDo(t, agent.Addr, "GET", "/v1/kv/"+key, "")), &pairs) != nil || len(pairs) == 0 {
			return "", 0
		}
		return string(pairs[0].Value), pairs[0].Flags
	}
	value := func() (string, uint64) { return valueOf("apps/keys/limits") }
	waitFor(t, "the first run writes the key", 20*time.Second, func() bool { v, _ := value(); return v == `{"rate":100}` })
	_, flags := value()
	if flags&0xffffffff != 3 || flags>>48 == 0 {
		t.Fatalf("flags %x: want the declared 3 and the mark", flags)
	}

	consulDo(t, agent.Addr, "PUT", "/v1/kv/apps/keys/limits", `{"rate": 1}`)
	took := waitFor(t, "the edited key written back with its mark", 10*time.Second, func() bool { v, f := value(); return v == `{"rate":100}` && f == flags })
	t.Logf("a key edited by hand was written back in %s", took.Round(10*time.Millisecond))

	consulDo(t, agent.Addr, "DELETE", "/v1/kv/apps/keys/limits", "")
	took = waitFor(t, "the deleted key written again", 10*time.Second, func() bool { v, _ := value(); return v == `{"rate":100}` })
	t.Logf("a key deleted by hand was written again in %s", took.Round(10*time.Millisecond))
	w.waitLog(t, `key["apps/keys/limits"]: kv: create, drifted since`, 1, time.Second)

	// The ignored value edited by hand with a plain PUT: the mark its
	// flags lost is written back, the value is left as the hand wrote it.
	_, tunedFlags := valueOf("apps/keys/tuned")
	consulDo(t, agent.Addr, "PUT", "/v1/kv/apps/keys/tuned", "by-hand")
	took = waitFor(t, "the mark of the tuned key written back", 10*time.Second, func() bool { _, f := valueOf("apps/keys/tuned"); return f == tunedFlags })
	t.Logf("a key whose value is ignored got its mark back in %s", took.Round(10*time.Millisecond))
	time.Sleep(2 * time.Second) // more runs of the watcher
	if v, _ := valueOf("apps/keys/tuned"); v != "by-hand" {
		t.Errorf("the watcher wrote the ignored value back: %q", v)
	}
	if v, f := valueOf("apps/keys/hand"); v != "made-by-hand" || f != 0 {
		t.Errorf("the key made by hand was changed: %q, flags %x", v, f)
	}
}
