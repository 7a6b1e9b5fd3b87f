package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/provision-dev/provision/provision/parallel"
	"github.com/provision-dev/provision/provision/servers"
)

// TestRateLimitedServer applies hundreds of keys and services to a real
// Consul 1.15.4 whose global request rate limit is enforcing a low write
// rate (limits.request_limits, "Limit traffic rates for a datacenter",
// developer.hashicorp.com/consul/docs/manage/rate-limit/global): the
// server answers writes over it 503 "rate limit exceeded ... try again
// later". Before apply waited for it, the apply stopped at the first one
// (354 of 900 requests sent with write_rate = 20) and a re-run hit the
// same limit. Now it completes, says that it waits, and the next plan is
// empty. The server's bucket holds ten seconds of its rate
// (requestLimitsBurstMultiplier in Consul's agent/consul/server.go); the
// test spends it first, so that the apply's 300 or so writes come at a
// server that allows 50 a second.
func TestRateLimitedServer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Consul")
	}
	const keys, services = 150, 50
	agent := servers.NewConsul(t, `-hcl=limits { request_limits { mode = "enforcing", write_rate = 50 } }`)
	drain(t, agent.Addr)
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
	env := map[string]string{"CONSUL_HTTP_ADDR": agent.Addr, "NO_COLOR": "1"}

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
	drain(t, agent.Addr)
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
	t.Logf("%d apply_waiting events", waited)

	code, out, errOut = runCLI(t, env, "plan", "-detailed-exitcode", dir)
	if code != 0 {
		t.Fatalf("the plan after the apply exited %d, want 0 (no changes):\n%s\n%s", code, tail(out, 3000), errOut)
	}
	if !strings.Contains(out, "No changes.") {
		t.Errorf("the plan after the apply is not empty:\n%s", tail(out, 3000))
	}
}

// drain spends the write bucket of the agent's rate limit, so that the
// writes that follow are limited from the first: it writes, 20 at a
// time, until Consul answers 503 "rate limit exceeded". A fresh Consul
// 1.15.4 does not hold its limit for its first seconds (seen here: an
// apply 2 s after the agent was ready was not limited at all, one 5 s
// after was), so a burst that gets no 503 is tried again a second later,
// for at most 30 s.
func drain(t *testing.T, addr string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for n := 0; ; n++ {
		var limited atomic.Bool
		parallel.Do(1000, 20, func(i int) {
			if limited.Load() {
				return
			}
			req, _ := http.NewRequest(http.MethodPut, fmt.Sprintf("http://%s/v1/kv/drain/%d", addr, i), strings.NewReader("1"))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return
			}
			resp.Body.Close()
			if resp.StatusCode == http.StatusServiceUnavailable {
				limited.Store(true)
			}
		})
		if limited.Load() {
			t.Logf("the write limit held at burst %d", n+1)
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("Consul never answered 503 to bursts of 1,000 writes: is its request rate limit enforcing?")
		}
		time.Sleep(time.Second)
	}
}
