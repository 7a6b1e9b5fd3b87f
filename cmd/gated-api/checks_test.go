package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/provision-dev/provision/provision/servers"
)

// TestNewCheckKeepsRoute adds the shipped health check to a live gated
// service while a client with a valid token asks each proxy for /api
// without pause. Consul would start the new check critical until its first
// run, up to its interval (10 s) later, and every Traefik would drop the
// route meanwhile (answering 404); provision registers it in warning
// instead. Traefik 2.11 and 3.6 serve a warning service by default, Traefik
// 1.7 with --consulcatalog.strictChecks=false: every answer must be 200.
// Traefik 1.7 with its default (passing only) is measured and logged: it
// drops the route until the check first passes, as the docs say.
func TestNewCheckKeepsRoute(t *testing.T) {
	agent := servers.NewConsul(t)
	type proxy struct {
		name   string
		strict bool // the route may drop: measured, not asserted
		*servers.Traefik
	}
	proxies := []proxy{
		{"traefik1/strictChecks=false", false, servers.NewTraefik(t, agent.Addr, servers.TraefikOptions{Generation: 1, ServeWarning: true})},
		{"traefik1/default", true, servers.NewTraefik(t, agent.Addr, servers.TraefikOptions{Generation: 1})},
		{"traefik2/default", false, servers.NewTraefik(t, agent.Addr, servers.TraefikOptions{Generation: 2})},
		{"traefik3/default", false, servers.NewTraefik(t, agent.Addr, servers.TraefikOptions{Generation: 3})},
	}
	port := serveApp(t)

	bin := buildProvision(t)
	specs := t.TempDir()
	copyAreaA(t, specs)
	module := filepath.Join(specs, "modules", "gated-api", "main.hcl")
	withCheck, err := os.ReadFile(module)
	if err != nil {
		t.Fatal(err)
	}
	noCheck := regexp.MustCompile(`(?s)\n  check "health" \{.*?\n  \}\n`).ReplaceAll(withCheck, []byte("\n"))
	if len(noCheck) == len(withCheck) {
		t.Fatal("specs/modules/gated-api/main.hcl has no check \"health\" block to add")
	}
	write := func(b []byte) {
		if err := os.WriteFile(module, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := append(os.Environ(), "CONSUL_HTTP_ADDR="+agent.Addr, "NO_COLOR=1")
	apply := func(want string) {
		out := runProvision(t, bin, env, "apply", "-auto-approve", "-var", fmt.Sprintf("api_port=%d", port), specs)
		if !strings.Contains(out, want) {
			t.Fatalf("apply, want %q:\n%s", want, out)
		}
	}
	client := &http.Client{Timeout: 5 * time.Second}
	status := func(p proxy) int {
		req, _ := http.NewRequest("GET", p.URL+"/api", nil)
		req.Header.Set("X-Auth-Token", testToken)
		resp, err := client.Do(req)
		if err != nil {
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}

	write(noCheck)
	apply("Apply complete: 2 created, 0 updated, 0 deleted.") // the service and its KV entry
	for _, p := range proxies {
		waitStatus(t, func() int { return status(p) }, 200)
	}
	// Longer than a Traefik waits between two configurations (2 s).
	time.Sleep(3 * time.Second)

	// The probers: each proxy asked every 20 ms until the check has passed
	// and the proxies have had a configuration's time to follow.
	ctx, stop := context.WithCancel(context.Background())
	counts := make([]map[int]int, len(proxies))
	var wg sync.WaitGroup
	t.Cleanup(func() { stop(); wg.Wait() }) // also after a t.Fatal
	for i, p := range proxies {
		counts[i] = map[int]int{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				counts[i][status(p)]++
				time.Sleep(20 * time.Millisecond)
			}
		}()
	}
	write(withCheck)
	apply("Apply complete: 0 created, 1 updated, 0 deleted.")
	checkStatus := func() string {
		resp, err := http.Get("http://" + agent.Addr + "/v1/agent/checks")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var checks map[string]struct{ Status string }
		if err := json.NewDecoder(resp.Body).Decode(&checks); err != nil {
			t.Fatal(err)
		}
		return checks["service:gated-api-1:health"].Status
	}
	// Never reported as passed before it ran: warning until its first run.
	if s := checkStatus(); s != "warning" && s != "passing" {
		t.Errorf("the new check right after the apply: %q, want warning (or passing once it ran)", s)
	}
	deadline := time.Now().Add(20 * time.Second)
	for checkStatus() != "passing" && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if s := checkStatus(); s != "passing" {
		t.Fatalf("the new check after 20 s: %q, want passing", s)
	}
	time.Sleep(3 * time.Second)
	stop()
	wg.Wait()

	for i, p := range proxies {
		total := 0
		for _, n := range counts[i] {
			total += n
		}
		t.Logf("%-28s while the check was added: %d requests, by status %v", p.name, total, counts[i])
		if p.strict {
			continue
		}
		if total < 100 || counts[i][200] != total {
			t.Errorf("%s: %v of %d requests with a valid token (statuses %v), want every one 200", p.name, counts[i], total, slices.Sorted(maps.Keys(counts[i])))
		}
	}
}
