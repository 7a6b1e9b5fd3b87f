package cli

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/Shopify/toxiproxy/v2/toxics"
	"github.com/provision-dev/provision/provision/servers"
	"github.com/rs/zerolog"
)

// nthWrite is a Toxiproxy toxic of this test's own (Toxiproxy has none
// that counts requests): on the upstream stream, it lets the first After
// service writes (PUT /v1/agent/service/...) through and then stalls or
// resets the connection that carries the next one. Everything else (reads,
// the lock's session and KV calls) passes. It counts across connections.
type nthWrite struct {
	After int64  `json:"after"`
	Mode  string `json:"mode"` // "stall" or "reset"
	seen  atomic.Int64
}

type nthState struct{ tripped bool }

func (t *nthWrite) NewState() any { return new(nthState) }

func (t *nthWrite) Pipe(stub *toxics.ToxicStub) {
	st := stub.State.(*nthState)
	for {
		select {
		case <-stub.Interrupt:
			return
		case c := <-stub.Input:
			if c == nil {
				stub.Close()
				return
			}
			if !st.tripped && bytes.HasPrefix(c.Data, []byte("PUT /v1/agent/service/")) && t.seen.Add(1) > t.After {
				st.tripped = true
			}
			switch {
			case !st.tripped:
				stub.Output <- c
			case t.Mode == "reset":
				stub.Close()
				return
			}
		}
	}
}

func init() { toxics.Register("nth_write", new(nthWrite)) }

// faulty is a Toxiproxy proxy in front of a real server.
type faulty struct {
	t     *testing.T
	proxy *toxiproxy.Proxy
}

func newFaulty(t *testing.T, upstream string) *faulty {
	srv := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(nil), zerolog.Nop())
	p := toxiproxy.NewProxy(srv, "consul", "127.0.0.1:0", upstream)
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Stop)
	return &faulty{t: t, proxy: p}
}

func (f *faulty) add(toxic string) {
	f.t.Helper()
	if _, err := f.proxy.Toxics.AddToxicJson(strings.NewReader(toxic)); err != nil {
		f.t.Fatal(err)
	}
}

func (f *faulty) clear() { f.proxy.Toxics.ResetToxics(context.Background()) }

// TestFaults injects faults with Toxiproxy in front of a real Consul agent,
// in each phase of a command, and checks that every command ends in
// bounded time with exit 1, an honest report, nothing written outside the
// plan, and that a re-run without the fault converges. The request
// timeout is 2 s here to keep the test short; the default is 10 s.
func TestFaults(t *testing.T) {
	agent := servers.NewConsul(t)
	const rt = "-request-timeout=2s"
	fiveHundred := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "rpc error making call: No cluster leader", http.StatusInternalServerError)
	}))
	defer fiveHundred.Close()

	type result struct {
		code    int
		out     string
		elapsed time.Duration
	}
	run := func(addr string, args ...string) result {
		start := time.Now()
		code, out, errOut := runCLI(t, map[string]string{"CONSUL_HTTP_ADDR": addr}, args...)
		return result{code, out + errOut, time.Since(start)}
	}
	check := func(name string, r result, max time.Duration, wants ...string) {
		t.Helper()
		if r.code != exitError || r.elapsed > max {
			t.Errorf("%s: exit %d after %s; want exit 1 within %s\n%s", name, r.code, r.elapsed.Round(time.Millisecond), max, r.out)
		}
		for _, w := range wants {
			if !strings.Contains(r.out, w) {
				t.Errorf("%s: the output lacks %q:\n%s", name, w, r.out)
			}
		}
		t.Logf("%-40s exit %d in %s", name, r.code, r.elapsed.Round(10*time.Millisecond))
	}

	// Before the plan's read.
	f := newFaulty(t, agent.Addr)
	f.add(`{"name":"stall","type":"timeout","stream":"downstream","attributes":{"timeout":0}}`)
	check("stall x plan read", run(f.proxy.Listen, "plan", rt, "../../testdata/three"), 5*time.Second,
		"Cannot read the Consul agent", "http://"+f.proxy.Listen+"/v1/agent/services", "no answer within 2s")
	f.clear()
	f.add(`{"name":"reset","type":"reset_peer","stream":"downstream","attributes":{"timeout":0}}`)
	check("reset x plan read", run(f.proxy.Listen, "plan", rt, "../../testdata/three"), 5*time.Second,
		"Cannot read the Consul agent", "connection reset by peer")
	f.clear()
	check("5xx x plan read", run(strings.TrimPrefix(fiveHundred.URL, "http://"), "plan", rt, "../../testdata/three"), 5*time.Second,
		"Cannot read the Consul agent", "consul answered 500: rpc error making call: No cluster leader")
	f.proxy.Stop()
	check("refused x plan read", run(f.proxy.Listen, "plan", rt, "../../testdata/three"), 5*time.Second,
		"Cannot read the Consul agent", "connection refused")

	// Latency and a narrow pipe slow a command down but do not fail it.
	f = newFaulty(t, agent.Addr)
	f.add(`{"name":"slow","type":"latency","stream":"downstream","attributes":{"latency":300}}`)
	f.add(`{"name":"narrow","type":"bandwidth","stream":"upstream","attributes":{"rate":16}}`)
	if r := run(f.proxy.Listen, "plan", "-detailed-exitcode", rt, "../../testdata/three"); r.code != exitChanges {
		t.Errorf("latency and bandwidth x plan: exit %d, want 2\n%s", r.code, r.out)
	}
	f.clear()

	// On the k-th write: the second registration stalls, or its connection
	// is reset (a register is idempotent, so it is retried first).
	for _, mode := range []string{"stall", "reset"} {
		f.add(fmt.Sprintf(`{"name":"second","type":"nth_write","stream":"upstream","attributes":{"after":1,"mode":%q}}`, mode))
		r := run(f.proxy.Listen, "apply", "-auto-approve", "-parallelism=1", rt, "../../testdata/three")
		check(mode+" x 2nd write", r, 12*time.Second,
			"Error: Request failed", "This may converge on a re-run", "done:     service.a-1 (1 of 1 requests sent)",
			"failed:   service.b-1 (0 of 1 requests sent)", "not done: service.c-1 (0 of 1 requests sent)")
		f.clear()
		if code, out, _ := runCLI(t, map[string]string{"CONSUL_HTTP_ADDR": agent.Addr}, "plan", "-detailed-exitcode", "../../testdata/three"); code != exitChanges ||
			!strings.Contains(out, "Plan: 2 to create, 0 to update, 0 to delete.") {
			t.Errorf("%s: after the failed apply, the plan should hold the two services not done:\n%s", mode, out)
		}
		if r := run(agent.Addr, "apply", "-auto-approve", "../../testdata/three"); r.code != exitOK {
			t.Fatalf("%s: re-run: exit %d\n%s", mode, r.code, r.out)
		}
		if r := run(agent.Addr, "destroy", "-auto-approve", "../../testdata/three"); r.code != exitOK {
			t.Fatalf("%s: destroy: exit %d\n%s", mode, r.code, r.out)
		}
	}

	// Between plan and apply: the saved plan's check reads a stalled agent.
	plan := t.TempDir() + "/three.plan"
	if code, _, errOut := runCLI(t, map[string]string{"CONSUL_HTTP_ADDR": f.proxy.Listen}, "plan", "-out", plan, "../../testdata/three"); code != exitOK {
		t.Fatalf("plan -out: %d %s", code, errOut)
	}
	f.add(`{"name":"stall","type":"timeout","stream":"downstream","attributes":{"timeout":0}}`)
	check("stall x saved plan's check", run(f.proxy.Listen, "apply", "-lock=false", rt, plan), 5*time.Second, "no answer within 2s")
	f.clear()
	if code, out, _ := runCLI(t, map[string]string{"CONSUL_HTTP_ADDR": agent.Addr}, "plan", "-detailed-exitcode", "../../testdata/three"); code != exitChanges ||
		!strings.Contains(out, "Plan: 3 to create") {
		t.Errorf("a refused saved plan wrote something:\n%s", out)
	}
	if r := run(f.proxy.Listen, "apply", plan); r.code != exitOK {
		t.Errorf("the saved plan, without the fault: exit %d\n%s", r.code, r.out)
	}
}

// TestInterrupt sends SIGINT to a real provision process in the middle of
// an apply slowed down by Toxiproxy: no new request starts, the one under
// way finishes, the report says what was done and what was not, the exit
// code is 1, and a re-run converges.
func TestInterrupt(t *testing.T) {
	agent := servers.NewConsul(t)
	f := newFaulty(t, agent.Addr)
	bin := filepath.Join(t.TempDir(), "provision")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/provision").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	f.add(`{"name":"slow","type":"latency","stream":"downstream","attributes":{"latency":700}}`)
	cmd := exec.Command(bin, "apply", "-auto-approve", "-lock=false", "-parallelism=1", "../../testdata/three")
	cmd.Env = append(os.Environ(), "CONSUL_HTTP_ADDR="+f.proxy.Listen, "NO_COLOR=1")
	var stdout, stderr servers.LogBuffer // written by exec's copying goroutines
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(stdout.Tail(1<<20), "[1/3]") && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	start := time.Now()
	cmd.Process.Signal(os.Interrupt)
	err := cmd.Wait()
	took := time.Since(start)
	code := cmd.ProcessState.ExitCode()
	out := stdout.Tail(1<<20) + stderr.Tail(1<<20)
	if err == nil || code != 1 || took > 5*time.Second {
		t.Fatalf("interrupted apply: exit %d after %s\n%s", code, took, out)
	}
	for _, want := range []string{"Error: Apply interrupted", "done:     service.a-1 (1 of 1 requests sent)", "not done: service.c-1 (0 of 1 requests sent)"} {
		if !strings.Contains(out, want) {
			t.Errorf("the report lacks %q:\n%s", want, out)
		}
	}
	t.Logf("SIGINT during apply: exit %d in %s", code, took.Round(10*time.Millisecond))
	f.clear()
	if code, out, _ := runCLI(t, map[string]string{"CONSUL_HTTP_ADDR": agent.Addr}, "apply", "-auto-approve", "../../testdata/three"); code != exitOK {
		t.Fatalf("re-run: exit %d\n%s", code, out)
	}
	if code, out, _ := runCLI(t, map[string]string{"CONSUL_HTTP_ADDR": agent.Addr}, "plan", "-detailed-exitcode", "../../testdata/three"); code != exitOK {
		t.Fatalf("not converged:\n%s", out)
	}
}
