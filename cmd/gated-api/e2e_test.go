package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
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

// moreRules are two more gated services with the rule forms whose syntax
// differs between Traefik 2 and 3: several values of one matcher, and two
// matchers. They reach the same application.
const moreRules = `service "two-paths" {
  address = var.api_host
  port    = var.api_port
  frontend {
    rule        = "Path:/two,/v2/two"
    entrypoints = ["web"]
    forward_auth {
      address               = "http://${var.api_host}:${var.api_port}/auth"
      auth_response_headers = ["X-Auth-User"]
    }
  }
}

service "host-prefix" {
  address = var.api_host
  port    = var.api_port
  frontend {
    rule = "Host:a.example.com;PathPrefix:/hp"
    forward_auth {
      address               = "http://${var.api_host}:${var.api_port}/auth"
      auth_response_headers = ["X-Auth-User"]
    }
  }
}
`

// TestThroughTraefik is the seed's area A end to end: a real Consul, this
// application, and six real Traefiks reading the catalog side by side
// (Traefik 1.7, the seed's own generation, 2.11 and 3.6, each with
// exposedByDefault true, Traefik's own default, and false), with the
// specs applied by the provision binary: one registration of each
// service, read and gated by all three generations at once. Every request
// goes through Traefik. It starts where users start: the registration
// made by hand with the seed's curl call (Traefik 1 tags only, which
// Traefik 1.7 gates and Traefik 2 and 3 serve ungated on their default
// router), taken over with an import block.
func TestThroughTraefik(t *testing.T) {
	agent := servers.NewConsul(t)
	type proxy struct {
		name string
		*servers.Traefik
	}
	var proxies []proxy
	for _, gen := range []int{1, 2, 3} {
		for _, exposed := range []bool{true, false} {
			name := fmt.Sprintf("traefik%d/exposedByDefault=%t", gen, exposed)
			proxies = append(proxies, proxy{name, servers.NewTraefik(t, agent.Addr, servers.TraefikOptions{Generation: gen, ExposedByDefault: exposed})})
		}
	}

	// The application, with a window on the X-Auth-User that /api receives;
	// every gated path of the test reaches its /api handler.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var seenUser []string
	app := newHandler(testTokens(t), io.Discard)
	srv := newServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/auth" && r.URL.Path != "/healthz" {
			r.URL.Path = "/api"
			mu.Lock()
			seenUser = append(seenUser, r.Header.Get("X-Auth-User"))
			mu.Unlock()
		}
		app.ServeHTTP(w, r)
	}))
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Shutdown(context.Background()) })
	port := ln.Addr().(*net.TCPAddr).Port

	provision := buildProvision(t)
	specs := t.TempDir()
	copyAreaA(t, specs)
	copyFile(t, "../../testdata/import/service.hcl", filepath.Join(specs, "import.hcl"))
	if err := os.WriteFile(filepath.Join(specs, "more.hcl"), []byte(moreRules), 0o644); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "CONSUL_HTTP_ADDR="+agent.Addr, "NO_COLOR=1")

	get := func(base, path, host, token, user string) (int, string) {
		return servers.Curl(t, "GET", base+path, "", "Host", host, "X-Auth-Token", token, "X-Auth-User", user)
	}

	// The seed's own call, made by hand: Traefik 1.7 gates /api with its
	// tags, as the seed intends; Traefik 2 and 3 ignore them and serve the
	// whole service, ungated, on the default Host(`gated-api`) router
	// (/api itself checks the token again, so /healthz shows it).
	seed := fmt.Sprintf(`{"ID":"gated-api-1","Name":"gated-api","Address":"127.0.0.1","Port":%d,"Tags":["traefik.enable=true",
		"traefik.frontend.rule=Path:/api","traefik.frontend.auth.forward.address=http://127.0.0.1:%d/auth",
		"traefik.frontend.auth.forward.authResponseHeaders=X-Auth-User"]}`, port, port)
	req, _ := http.NewRequest("PUT", "http://"+agent.Addr+"/v1/agent/service/register", strings.NewReader(seed))
	req.Header.Set("Content-Type", "application/json")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 200 {
		t.Fatalf("the seed's registration: %v %v", resp, err)
	}
	for _, p := range proxies {
		if strings.HasPrefix(p.name, "traefik1/") {
			waitStatus(t, func() int { code, _ := get(p.URL, "/api", "", "", ""); return code }, 401)
			if code, _ := get(p.URL, "/api", "", testToken, ""); code != 200 {
				t.Errorf("%s, the seed's own registration: /api with the token: %d, want 200", p.name, code)
			}
			continue
		}
		waitStatus(t, func() int { code, _ := get(p.URL, "/healthz", "gated-api", "", ""); return code }, 200)
	}

	out := runProvision(t, provision, env, "apply", "-auto-approve", "-var", fmt.Sprintf("api_port=%d", port), specs)
	if !strings.Contains(out, "Apply complete: 1 imported, 3 created, 0 updated, 0 deleted.") {
		t.Fatalf("the import:\n%s", out)
	}

	forms := []struct{ name, host, path string }{
		{"Path:/api", "", "/api"},
		{"Path:/two,/v2/two (first)", "", "/two"},
		{"Path:/two,/v2/two (second)", "", "/v2/two"},
		{"Host:a.example.com;PathPrefix:/hp", "a.example.com", "/hp/x"},
	}
	// Wait until every proxy serves what was applied. Consul starts the
	// imported service's new check critical and runs it first within its
	// interval; the Traefiks drop the service meanwhile, and the seed's
	// registration they served before answers like the applied one. So:
	// the check passes, then every path opens with the token and stays
	// open for longer than a Traefik waits between two configurations
	// (providersThrottleDuration, 2 s in 1.7, 2.11 and 3.6).
	waitStatus(t, func() int {
		var critical []json.RawMessage
		resp, err := http.Get("http://" + agent.Addr + "/v1/health/state/critical")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if json.NewDecoder(resp.Body).Decode(&critical) != nil || len(critical) > 0 {
			return 0
		}
		return 200
	}, 200)
	served := func() int {
		for _, p := range proxies {
			for _, f := range forms {
				if code, _ := get(p.URL, f.path, f.host, testToken, ""); code != 200 {
					return code
				}
			}
		}
		return 200
	}
	for steady := time.Now(); time.Since(steady) < 3*time.Second; time.Sleep(200 * time.Millisecond) {
		if served() != 200 {
			waitStatus(t, served, 200)
			steady = time.Now()
		}
	}
	for _, p := range proxies {
		for _, f := range forms {
			noToken, _ := get(p.URL, f.path, f.host, "", "")
			wrong, body := get(p.URL, f.path, f.host, "wrong-token", "")
			if wrong != 401 || strings.Contains(body, "wrong-token") {
				t.Errorf("%s %s, wrong token: %d %q, want 401 without the token", p.name, f.name, wrong, body)
			}
			right, body := get(p.URL, f.path, f.host, testToken, "")
			if right != 200 || body != "Hello, you are authenticated as alice.\n" {
				t.Errorf("%s %s, right token: %d %q, want 200 naming alice", p.name, f.name, right, body)
			}
			mu.Lock()
			seenUser = nil
			mu.Unlock()
			if code, _ := get(p.URL, f.path, f.host, testToken, "mallory"); code != 200 {
				t.Errorf("%s %s, right token with a forged X-Auth-User: %d", p.name, f.name, code)
			}
			mu.Lock()
			if len(seenUser) != 1 || seenUser[0] != "alice" {
				t.Errorf("%s %s: the application saw X-Auth-User %q; Traefik must replace the client's value with /auth's", p.name, f.name, seenUser)
			}
			mu.Unlock()
			t.Logf("%-34s %-36s no token %d, wrong token %d, right token %d", p.name, f.name, noToken, wrong, right)
		}
		// No route Traefik builds serves a service ungated: not the
		// default Host(`<service name>`) router either.
		for _, host := range []string{"gated-api", "gated-api-1", "two-paths", "host-prefix", "localhost"} {
			if code, _ := get(p.URL, "/api", host, "", ""); code == 200 {
				t.Errorf("%s Host %s without a token: 200, the service is reachable ungated", p.name, host)
			}
			if code, _ := get(p.URL, "/healthz", host, "", ""); code != 404 {
				t.Errorf("%s Host %s /healthz: %d, want 404: a route other than the gated ones serves the service", p.name, host, code)
			}
		}
	}

	// Remove the declarations: the paths are gone.
	for _, name := range []string{"gated-api.hcl", "import.hcl", "more.hcl"} {
		os.Remove(filepath.Join(specs, name))
	}
	runProvision(t, provision, env, "apply", "-auto-approve", specs)
	for _, p := range proxies {
		waitStatus(t, func() int { code, _ := get(p.URL, "/api", "", testToken, ""); return code }, 404)
	}
}

func waitStatus(t *testing.T, status func() int, want int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	got := status()
	for got != want && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
		got = status()
	}
	if got != want {
		t.Fatalf("status %d after 20s, want %d", got, want)
	}
}

func buildProvision(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "provision")
	out, err := exec.Command("go", "build", "-o", bin, "../provision").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func runProvision(t *testing.T, bin string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("provision %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// copyAreaA copies the shipped specs of the gated APIs into dir, without
// the dashboard objects (servers.AreaA).
func copyAreaA(t *testing.T, dir string) { servers.AreaA(t, "../../specs", dir) }

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestFleetThroughTraefik registers the shipped gated API on the agent of
// a client node of a real cluster (an agent block), while Traefik 2 and 3
// read the catalog through the server: the service is gated there too.
func TestFleetThroughTraefik(t *testing.T) {
	cluster := servers.NewConsulCluster(t, "node-a")
	server, nodeA := cluster[0], cluster[1]
	proxies := map[string]*servers.Traefik{}
	for _, gen := range []int{2, 3} {
		proxies[fmt.Sprintf("traefik%d", gen)] = servers.NewTraefik(t, server.Addr, servers.TraefikOptions{Generation: gen, ExposedByDefault: true})
	}
	port := serveApp(t)

	specs := t.TempDir()
	copyAreaA(t, specs)
	agent := fmt.Sprintf("agent \"node-a\" {\n  address = %q\n}\n", nodeA.Addr)
	if err := os.WriteFile(filepath.Join(specs, "agents.hcl"), []byte(agent), 0o644); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "CONSUL_HTTP_ADDR=", "NO_COLOR=1")
	out := runProvision(t, buildProvision(t), env, "apply", "-auto-approve", "-var", fmt.Sprintf("api_port=%d", port), specs)
	if !strings.Contains(out, "Apply complete: 2 created, 0 updated, 0 deleted.") { // the service and its KV entry
		t.Fatalf("apply:\n%s", out)
	}
	var nodes []struct{ Node string }
	waitStatus(t, func() int {
		resp, err := http.Get("http://" + server.Addr + "/v1/catalog/service/gated-api")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		nodes = nil
		if json.NewDecoder(resp.Body).Decode(&nodes) != nil || len(nodes) != 1 || nodes[0].Node != "node-a" {
			return 0
		}
		return 200
	}, 200)
	for name, p := range proxies {
		status := func(token string) int { return apiStatus(t, p.URL, token) }
		waitStatus(t, func() int { return status("") }, 401)
		if code := status(testToken); code != 200 {
			t.Errorf("%s: /api with the token: %d, want 200", name, code)
		}
		t.Logf("%s, service on node-a, catalog read through the server: no token %d, token %d", name, status(""), status(testToken))
	}
}

// apiStatus is the status of GET /api through the proxy at base, with the
// token in X-Auth-Token unless it is empty.
func apiStatus(t *testing.T, base, token string) int {
	t.Helper()
	status, _ := servers.Curl(t, "GET", base+"/api", "", "X-Auth-Token", token)
	return status
}

// serveApp serves the application with the test's tokens on a free
// loopback port until the test ends, and returns the port.
func serveApp(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := newServer(newHandler(testTokens(t), io.Discard))
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Shutdown(context.Background()) })
	return ln.Addr().(*net.TCPAddr).Port
}
