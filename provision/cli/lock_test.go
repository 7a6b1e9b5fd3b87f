package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/provision-dev/provision/provision/consul"
	"github.com/provision-dev/provision/provision/consul/cluster"
	"github.com/provision-dev/provision/provision/plans"
	"github.com/provision-dev/provision/provision/servers"
	"github.com/provision-dev/provision/schema"
)

// TestConcurrentAppliesSerialize races two real applies of one project
// against one real agent, each registration slowed down at the wire so
// that without the lock they would interleave, and checks that they did
// not: all writes of one run come before all writes of the other.
func TestConcurrentAppliesSerialize(t *testing.T) {
	agent := servers.NewConsul(t)
	target, _ := url.Parse("http://" + agent.Addr)
	proxy := httputil.NewSingleHostReverseProxy(target)
	var (
		mu     sync.Mutex
		writes []int // the port of every registration, in arrival order
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/v1/agent/service/register") {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			var reg struct{ Port int }
			_ = json.Unmarshal(body, &reg)
			mu.Lock()
			writes = append(writes, reg.Port)
			mu.Unlock()
			time.Sleep(50 * time.Millisecond)
		}
		proxy.ServeHTTP(w, r)
	}))
	defer srv.Close()
	t.Setenv("CONSUL_HTTP_ADDR", strings.TrimPrefix(srv.URL, "http://"))

	var wg sync.WaitGroup
	outs := make([]string, 2)
	codes := make([]int, 2)
	for i, base := range []string{"20000", "21000"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var stdout, stderr bytes.Buffer
			c := testCLI(strings.NewReader(""), &stdout, &stderr)
			codes[i] = c.run([]string{"apply", "-auto-approve", "-parallelism", "5", "-lock-timeout", "60s", "-var", "base=" + base, "../../testdata/race"})
			outs[i] = stdout.String() + stderr.String()
		}()
	}
	wg.Wait()
	for i := range codes {
		if codes[i] != exitOK {
			t.Fatalf("apply %d: exit %d\n%s", i, codes[i], outs[i])
		}
	}
	if len(writes) != 10 {
		t.Fatalf("saw %d registrations, want 5 from each run: %v", len(writes), writes)
	}
	switches := 0
	for i := 1; i < len(writes); i++ {
		if writes[i]/1000 != writes[i-1]/1000 {
			switches++
		}
	}
	if switches != 1 {
		t.Errorf("the two applies interleaved: registrations arrived in the order %v", writes)
	}
	// The second run planned after the first had applied: updates, not creates.
	second := outs[0]
	if writes[0]/1000 == 20 {
		second = outs[1]
	}
	if !strings.Contains(second, "Apply complete: 0 created, 5 updated, 0 deleted.") {
		t.Errorf("the run that waited did not plan on the other's result:\n%s", second)
	}
}

// lockHolder is the cluster of the project "race" on the agent
// CONSUL_HTTP_ADDR names, as another run would take its lock.
func lockHolder(t *testing.T) *cluster.Cluster {
	a, diags := consul.ClusterAgent(&schema.Config{Project: "race"}, consul.Options{Getenv: os.Getenv})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	return cluster.New(a)
}

// TestLockHeldNamesHolder holds a project's lock and checks that apply
// gives up after -lock-timeout naming the holder, and that -lock=false
// does not wait.
func TestLockHeldNamesHolder(t *testing.T) {
	agent := servers.NewConsul(t)
	t.Setenv("CONSUL_HTTP_ADDR", agent.Addr)
	holder := lockHolder(t)
	_, unlock, err := holder.Lock(context.Background(), "race", "apply", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()

	start := time.Now()
	var stdout, stderr bytes.Buffer
	code := testCLI(strings.NewReader(""), &stdout, &stderr).run([]string{"apply", "-auto-approve", "-lock-timeout", "1s", "-var", "base=22000", "../../testdata/race"})
	if code != exitError {
		t.Fatalf("apply under a held lock: exit %d, want %d\n%s", code, exitError, stdout.String())
	}
	if !strings.Contains(stderr.String(), "the lock provision/locks/race is held: apply by ") || !strings.Contains(stderr.String(), "(pid ") {
		t.Errorf("the error does not name the holder:\n%s", stderr.String())
	}
	if waited := time.Since(start); waited < time.Second {
		t.Errorf("apply gave up after %s, before -lock-timeout", waited)
	}
	// Under -json the refusal is a diagnostic event on stdout, and stdout
	// is nothing but the JSON stream.
	stdout.Reset()
	stderr.Reset()
	code = testCLI(strings.NewReader(""), &stdout, &stderr).run([]string{"apply", "-json", "-auto-approve", "-var", "base=22000", "../../testdata/race"})
	var event struct {
		Type       string
		Diagnostic plans.Diagnostic
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	if code != exitError || stderr.Len() != 0 || json.Unmarshal([]byte(lines[len(lines)-1]), &event) != nil ||
		event.Type != "diagnostic" || event.Diagnostic.Summary != "Cannot take the lock" || !strings.Contains(event.Diagnostic.Detail, "is held: apply by ") {
		t.Errorf("apply -json under a held lock: exit %d\nstdout: %s\nstderr: %s", code, stdout.String(), stderr.String())
	}
	t.Logf("apply -json under a held lock: %s", lines[len(lines)-1])
	code = testCLI(strings.NewReader(""), &stdout, &stderr).run([]string{"apply", "-auto-approve", "-lock=false", "-var", "base=22000", "../../testdata/race"})
	if code != exitOK {
		t.Fatalf("apply -lock=false: exit %d\n%s", code, stderr.String())
	}
}

// TestLockOfDeadHolderIsReleased invalidates the holder's Consul session,
// as Consul does when a holder dies and its TTL runs out, and checks that
// a waiting apply then takes the lock.
func TestLockOfDeadHolderIsReleased(t *testing.T) {
	agent := servers.NewConsul(t)
	t.Setenv("CONSUL_HTTP_ADDR", agent.Addr)
	holder := lockHolder(t)
	if _, _, err := holder.Lock(context.Background(), "race", "apply", time.Second); err != nil {
		t.Fatal(err)
	}
	// The holder "dies": its session is invalidated, never unlocked.
	resp, err := http.Get("http://" + agent.Addr + "/v1/kv/" + cluster.LockPrefix + "race")
	if err != nil {
		t.Fatal(err)
	}
	var pairs []struct{ Session string }
	json.NewDecoder(resp.Body).Decode(&pairs)
	resp.Body.Close()
	if len(pairs) != 1 || pairs[0].Session == "" {
		t.Fatalf("the lock key holds no session: %+v", pairs)
	}
	req, _ := http.NewRequest("PUT", "http://"+agent.Addr+"/v1/session/destroy/"+pairs[0].Session, nil)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 200 {
		t.Fatalf("destroying the session: %v %v", resp, err)
	}
	var stdout, stderr bytes.Buffer
	code := testCLI(strings.NewReader(""), &stdout, &stderr).run([]string{"apply", "-auto-approve", "-lock-timeout", "10s", "-var", "base=23000", "../../testdata/race"})
	if code != exitOK {
		t.Fatalf("apply after the holder died: exit %d\n%s", code, stderr.String())
	}
}

// TestLongWaitForTheLock: a run that waits longer than its session's TTL
// (10 s) for a held lock keeps its session alive, and takes the lock when
// the holder lets go.
func TestLongWaitForTheLock(t *testing.T) {
	agent := servers.NewConsul(t)
	t.Setenv("CONSUL_HTTP_ADDR", agent.Addr)
	holder := lockHolder(t)
	_, unlock, err := holder.Lock(context.Background(), "race", "apply", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	time.AfterFunc(23*time.Second, unlock) // past twice the TTL, when Consul invalidates a session not renewed
	var stdout, stderr bytes.Buffer
	code := testCLI(strings.NewReader(""), &stdout, &stderr).run([]string{"apply", "-auto-approve", "-lock-timeout", "40s", "-var", "base=24000", "../../testdata/race"})
	if code != exitOK {
		t.Fatalf("apply that waited 23 s for the lock: exit %d\n%s", code, stderr.String())
	}
}
