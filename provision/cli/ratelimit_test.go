package cli

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/provision-dev/provision/provision/parallel"
	"github.com/provision-dev/provision/provision/servers"
)

// TestRateLimitedServer applies 150 keys and 50 services to a real
// Consul 1.15.4 whose global request rate limit is enforcing a low write
// rate (limits.request_limits, "Limit traffic rates for a datacenter",
// developer.hashicorp.com/consul/docs/manage/rate-limit/global): the
// server answers writes over it 503 "rate limit exceeded ... try again
// later". Before apply waited for it, the apply stopped at the first one
// (354 of 900 requests sent with write_rate = 20) and a re-run hit the
// same limit. Now it completes, says that it waits, and the next plan is
// empty.
//
// Consul 1.15.4's limiter does not hold steadily: its bucket (ten seconds
// of the rate, requestLimitsBurstMultiplier in agent/consul/server.go) is
// at times made anew (seen here: an apply 2 s after the agent was ready
// not limited at all, one after the bucket was spent limited in most runs
// and not in others). So the writes reach the agent through a front that
// also answers every third of the first 30 with the answer of Consul
// 1.15.4's limiter (rate.ErrRetryLater of agent/consul/rate/handler.go,
// which agent/http.go serves as a 503 with its text): the waits the test
// asserts are the front's and, when it holds, the server's.
func TestRateLimitedServer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Consul")
	}
	const keys, services = 150, 50
	agent := servers.NewConsul(t, `-hcl=limits { request_limits { mode = "enforcing", write_rate = 50 } }`)
	drain(t, agent.Addr, http.MethodPut)
	target, _ := url.Parse("http://" + agent.Addr)
	proxy := httputil.NewSingleHostReverseProxy(target)
	var writes, refused atomic.Int32
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			if n := writes.Add(1); n <= 30 && n%3 == 0 {
				refused.Add(1)
				http.Error(w, "rate limit exceeded for operation that can only be performed by the leader, try again later", http.StatusServiceUnavailable)
				return
			}
		}
		proxy.ServeHTTP(w, r)
	}))
	defer front.Close()
	dir := t.TempDir()
	spec := fmt.Sprintf(`project = "limited"

key "apps/limited" {
  for_each = { for i in range(%d) : format("k%%03d", i) => i }
  value    = { n = each.value }
}

service "web" {
  for_each = { for i in range(%d) : format("w%%03d", i) => 10000 + i }
  id       = "web-${each.key}"
  port     = each.value
}
`, keys, services)
	if err := os.WriteFile(filepath.Join(dir, "main.hcl"), []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"CONSUL_HTTP_ADDR": strings.TrimPrefix(front.URL, "http://"), "NO_COLOR": "1"}

	code, out, errOut := runCLI(t, env, "apply", "-auto-approve", dir)
	if code != 0 {
		t.Fatalf("apply exited %d against a rate-limited server:\n%s\n%s", code, tail(out, 3000), errOut)
	}
	if !strings.Contains(out, "the server says slow down (consul answered 503: rate limit exceeded") {
		t.Errorf("the apply never said it waited for the server (was the limit enforcing?):\n%s", tail(out, 3000))
	}
	if !strings.Contains(out, fmt.Sprintf("Apply complete: %d created, 0 updated, 0 deleted.", keys+services)) {
		t.Errorf("the apply did not create the %d objects:\n%s", keys+services, tail(out, 3000))
	}
	waits := strings.Count(out, "the server says slow down")
	t.Logf("%d wait lines in %d lines of output", waits, strings.Count(out, "\n"))

	// Every key changed, against a spent bucket again: -json says each
	// wait, with its pause.
	if err := os.WriteFile(filepath.Join(dir, "main.hcl"), []byte(strings.Replace(spec, "n = each.value", "n = each.value + 1", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	drain(t, agent.Addr, http.MethodPut)
	writes.Store(0)
	code, out, errOut = runCLI(t, env, "apply", "-auto-approve", "-json", dir)
	if code != 0 {
		t.Fatalf("apply -json exited %d against a rate-limited server:\n%s\n%s", code, tail(out, 3000), errOut)
	}
	var waited int
	for _, line := range strings.Split(out, "\n") {
		var ev struct {
			Type   string `json:"type"`
			Error  string `json:"error"`
			WaitMS *int64 `json:"wait_ms"`
		}
		if json.Unmarshal([]byte(line), &ev) == nil && ev.Type == "apply_waiting" {
			waited++
			if ev.WaitMS == nil || *ev.WaitMS > 10_000 || !strings.Contains(ev.Error, "rate limit exceeded") {
				t.Errorf("an apply_waiting event without its pause or the server's answer: %s", line)
			}
		}
	}
	if waited == 0 {
		t.Errorf("apply -json has no apply_waiting event:\n%s", tail(out, 3000))
	}
	t.Logf("%d apply_waiting events; the front refused %d writes in all", waited, refused.Load())

	code, out, errOut = runCLI(t, env, "plan", "-detailed-exitcode", dir)
	if code != 0 {
		t.Fatalf("the plan after the apply exited %d, want 0 (no changes):\n%s\n%s", code, tail(out, 3000), errOut)
	}
	if !strings.Contains(out, "No changes.") {
		t.Errorf("the plan after the apply is not empty:\n%s", tail(out, 3000))
	}
}

// TestRateLimitedReads: a plan whose reads a Consul enforcing a read
// rate of 1 a second answers 429 waits for each, and says so once, as a
// warning beside the plan: it does not fail.
func TestRateLimitedReads(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Consul")
	}
	agent := servers.NewConsul(t, `-hcl=limits { request_limits { mode = "enforcing", read_rate = 1 } }`)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.hcl"), []byte("project = \"reads\"\n\nkey \"apps/reads/mode\" {\n  value = \"on\"\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	drain(t, agent.Addr, http.MethodGet)
	code, out, errOut := runCLI(t, map[string]string{"CONSUL_HTTP_ADDR": agent.Addr, "NO_COLOR": "1"}, "plan", dir)
	if code != 0 {
		t.Fatalf("plan exited %d against a server limiting reads:\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "Plan: 1 to create") {
		t.Errorf("no plan:\n%s", out)
	}
	if n := strings.Count(out+errOut, "Warning: A server limits its request rate"); n != 1 || !strings.Contains(out+errOut, "consul answered 429: rate limit exceeded") {
		t.Errorf("the plan said %d times that the server limits its rate, want once with its answer:\n%s\n%s", n, out, errOut)
	}
}

// drain spends the bucket of the agent's rate limit for requests of
// method (PUT: writes, GET: reads), so that those that follow are limited
// from the first: it sends them, 20 at a time, until Consul answers that
// the limit is reached (503 to a leader's write, 429 to a read). A fresh
// Consul 1.15.4 does not hold its limit for its first seconds (seen here:
// an apply 2 s after the agent was ready was not limited at all, one 5 s
// after was), so a burst that gets no such answer is tried again a second
// later, for at most 30 s.
func drain(t *testing.T, addr, method string) {
	t.Helper()
	limited := map[string]int{http.MethodPut: http.StatusServiceUnavailable, http.MethodGet: http.StatusTooManyRequests}[method]
	deadline := time.Now().Add(30 * time.Second)
	for n := 0; ; n++ {
		var seen atomic.Bool
		parallel.Do(1000, 20, func(i int) {
			if seen.Load() {
				return
			}
			req, _ := http.NewRequest(method, fmt.Sprintf("http://%s/v1/kv/drain/%d", addr, i), strings.NewReader("1"))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return
			}
			resp.Body.Close()
			if resp.StatusCode == limited {
				seen.Store(true)
			}
		})
		if seen.Load() {
			t.Logf("the %s limit held at burst %d", method, n+1)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("Consul never answered %d to bursts of 1,000 %s requests: is its request rate limit enforcing?", limited, method)
		}
		time.Sleep(time.Second)
	}
}
