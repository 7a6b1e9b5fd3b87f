package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/provision-dev/provision/provision/servers"
)

// TestProveTheGate: every apply ends with the proof, through real
// Traefik 1.7, 2.11 and 3.6 (exposedByDefault true, their default), that
// each gated path is served through its forward auth (a Traefik 1
// frontend's own, a later router's middleware) and refuses a request
// without a token and with a wrong one; an open gate, a rogue router or
// frontend and a proxy that is down each fail the apply; provision watch
// reports a rogue router once while it stays and never touches it.
func TestProveTheGate(t *testing.T) {
	agent := servers.NewConsul(t)
	v1 := servers.NewTraefik(t, agent.Addr, servers.TraefikOptions{Generation: 1, ExposedByDefault: true})
	v2 := servers.NewTraefik(t, agent.Addr, servers.TraefikOptions{Generation: 2, ExposedByDefault: true})
	v3 := servers.NewTraefik(t, agent.Addr, servers.TraefikOptions{Generation: 3, ExposedByDefault: true})
	// gatedBy is how the proof names the forward auth of a service's
	// frontend on each generation.
	gatedBy := func(proxy, service string) string {
		if proxy == "traefik.v1" {
			return "frontend-" + service + "'s auth.forward"
		}
		return service + "-auth"
	}

	// The application: every gated path of the test reaches its /api.
	app := newHandler(testTokens(t), io.Discard)
	port := listen(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/auth" && r.URL.Path != "/healthz" {
			r.URL.Path = "/api"
		}
		app.ServeHTTP(w, r)
	}))
	// An auth endpoint that lets everybody in: a misconfigured gate.
	open := listen(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) }))

	specs := t.TempDir()
	copyAreaA(t, specs)
	var proxies string
	for name, p := range map[string]*servers.Traefik{"v1": v1, "v2": v2, "v3": v3} {
		proxies += fmt.Sprintf("traefik %q {\n  api = %q\n  url = %q\n}\n\n", name, p.API, p.URL)
	}
	for name, src := range map[string]string{"more.hcl": moreRules, "proxies.hcl": proxies} {
		if err := os.WriteFile(filepath.Join(specs, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bin := buildProvision(t)
	env := append(os.Environ(), "CONSUL_HTTP_ADDR="+agent.Addr, "NO_COLOR=1")
	runWith := func(env []string, args ...string) (int, string) {
		cmd := exec.Command(bin, args...)
		cmd.Env = env
		out, _ := cmd.CombinedOutput()
		return cmd.ProcessState.ExitCode(), string(out)
	}
	run := func(args ...string) (int, string) { return runWith(env, args...) }
	// watch starts provision watch with env and args until the test ends,
	// and returns its log (shown if the test failed).
	watch := func(t *testing.T, env []string, args ...string) *servers.LogBuffer {
		var log servers.LogBuffer
		cmd := exec.Command(bin, append([]string{"watch"}, args...)...)
		cmd.Env, cmd.Stdout, cmd.Stderr = env, &log, &log
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			cmd.Process.Signal(os.Interrupt)
			cmd.Wait()
			if t.Failed() {
				t.Logf("watch log:\n%s", log.Tail(8000))
			}
		})
		return &log
	}
	// watchMetrics is watch serving /metrics, on the address it returns.
	watchMetrics := func(t *testing.T, env []string, args ...string) (*servers.LogBuffer, string) {
		ports, err := servers.FreePorts(1)
		if err != nil {
			t.Fatal(err)
		}
		listen := fmt.Sprintf("127.0.0.1:%d", ports[0])
		return watch(t, env, append([]string{"-listen", listen}, args...)...), listen
	}
	portVar := fmt.Sprintf("api_port=%d", port)

	t.Run("proven", func(t *testing.T) {
		code, out := run("apply", "-auto-approve", "-var", portVar, specs)
		if code != 0 {
			t.Fatalf("apply: exit %d\n%s", code, out)
		}
		for _, proxy := range []string{"traefik.v1", "traefik.v2", "traefik.v3"} {
			for _, want := range []string{
				proxy + ": /api gated by " + gatedBy(proxy, "gated-api") + " (no token 401, wrong token 401) in ",
				proxy + ": /two gated by " + gatedBy(proxy, "two-paths") + " (no token 401, wrong token 401) in ",
				proxy + ": /v2/two gated by " + gatedBy(proxy, "two-paths") + " (no token 401, wrong token 401) in ",
				proxy + ": /hp (Host a.example.com) gated by " + gatedBy(proxy, "host-prefix") + " (no token 401, wrong token 401) in ",
			} {
				if !strings.Contains(out, want) {
					t.Errorf("apply output lacks %q:\n%s", want, out)
				}
			}
		}
		t.Log(out)
		// Converged: the plan shows the gates, and an apply with nothing
		// to change still proves them.
		code, out = run("plan", "-var", portVar, specs)
		if code != 0 || !strings.Contains(out, `traefik.v3: /api of module.gated_api["edge"].service.gated-api-1: gated by gated-api-auth@consulcatalog (router gated-api@consulcatalog)`) ||
			!strings.Contains(out, `traefik.v1: /api of module.gated_api["edge"].service.gated-api-1: gated by auth.forward (router frontend-gated-api@consul_catalog)`) {
			t.Errorf("converged plan: exit %d\n%s", code, out)
		}
		code, out = run("apply", "-auto-approve", "-var", portVar, specs)
		if code != 0 || !strings.Contains(out, "No changes.") || !strings.Contains(out, "traefik.v2: /api gated by gated-api-auth") ||
			!strings.Contains(out, "traefik.v1: /api gated by frontend-gated-api's auth.forward") {
			t.Errorf("converged apply: exit %d\n%s", code, out)
		}
	})

	t.Run("accepted token", func(t *testing.T) {
		// With a token the application accepts (a sensitive variable, from
		// the environment), the proof shows the seed's third row, 200,
		// through each generation; a token it refuses fails the apply,
		// naming the proxy, the path and the status. Neither token is ever
		// printed.
		code, out := runWith(append(env, "PROVISION_VAR_gate_token="+testToken), "apply", "-auto-approve", "-var", portVar, specs)
		if code != 0 {
			t.Fatalf("apply with the proof token: exit %d\n%s", code, out)
		}
		for _, proxy := range []string{"traefik.v1", "traefik.v2", "traefik.v3"} {
			if want := proxy + ": /api gated by " + gatedBy(proxy, "gated-api") + " (no token 401, wrong token 401, accepted token 200) in "; !strings.Contains(out, want) {
				t.Errorf("apply output lacks %q:\n%s", want, out)
			}
		}
		if strings.Contains(out, testToken) {
			t.Errorf("the proof token is in the output:\n%s", out)
		}
		t.Log(out)
		// Nor in any other output made with it: plans, the JSON apply, a
		// snapshot.
		withToken := append(env, "PROVISION_VAR_gate_token="+testToken)
		snap := filepath.Join(t.TempDir(), "snap.json")
		for _, args := range [][]string{{"plan"}, {"plan", "-json"}, {"apply", "-auto-approve", "-json"}, {"snapshot", "-out", snap}} {
			code, out := runWith(withToken, append(args, "-var", portVar, specs)...)
			written, _ := os.ReadFile(snap)
			if code != 0 || strings.Contains(out, testToken) || strings.Contains(string(written), testToken) {
				t.Errorf("provision %v with the proof token: exit %d, the token in its output or snapshot:\n%s", args, code, out)
			}
		}
		const refused = "a-token-nobody-accepts-42"
		code, out = runWith(append(env, "PROVISION_VAR_gate_token="+refused), "apply", "-auto-approve", "-var", portVar, specs)
		if code != 1 || strings.Count(out, "Error: Accepted token refused") != 3 || !strings.Contains(out, "traefik.v2: /api, served by the router gated-api@consulcatalog: the request with the proof token answered 401, not 200") {
			t.Errorf("apply with a refused proof token: exit %d\n%s", code, out)
		}
		if strings.Contains(out, refused) {
			t.Errorf("the refused token is in the output:\n%s", out)
		}
	})

	t.Run("accepted token, no auth header", func(t *testing.T) {
		// An application that accepts the proof token but does not answer
		// it with the header the route copies (X-Auth-User): the 200 row
		// holds, the headers are not proven, and the apply says so.
		bare := listen(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/auth" && r.Header.Get("X-Auth-Token") != testToken {
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			w.WriteHeader(http.StatusOK)
		}))
		code, out := runWith(append(env, "PROVISION_VAR_gate_token="+testToken), "apply", "-auto-approve", "-var", fmt.Sprintf("api_port=%d", bare), specs)
		if code != 1 || strings.Count(out, "Error: Auth response headers not proven") != 3 || !strings.Contains(out, "answered it without the header X-Auth-User that auth_response_headers copies") {
			t.Errorf("an accepted token answered without the copied header: exit %d\n%s", code, out)
		}
		t.Log(out)
		if code, out := run("apply", "-auto-approve", "-var", portVar, specs); code != 0 {
			t.Fatalf("back to the application: exit %d\n%s", code, out)
		}
	})

	t.Run("accepted token, watched", func(t *testing.T) {
		// provision watch proves the gates on every poll with nothing to
		// repair, the 200 row included: a proof token the application
		// refuses is reported once per proxy while it stays.
		// provision_gate_proven is 0 for each proxy while the token is
		// refused, and 1 with the accepted token.
		refused := "PROVISION_VAR_gate_token=a-token-nobody-accepts-42"
		log, listen := watchMetrics(t, append(env, refused), "-interval", "1s", "-var", portVar, specs)
		waitStatus(t, func() int { return min(strings.Count(log.Tail(1<<20), "Accepted token refused"), 3) }, 3)
		time.Sleep(3 * time.Second) // three more polls
		out := log.Tail(1 << 20)
		if n := strings.Count(out, "Accepted token refused"); n != 3 || !strings.Contains(out, "answered 401, not 200") || strings.Contains(out, "a-token-nobody-accepts-42") {
			t.Errorf("a refused proof token under watch: reported %d times\n%s", n, out)
		}
		if got := gateProven(t, listen); got != "v1=0 v2=0 v3=0" {
			t.Errorf("provision_gate_proven with a refused proof token: %s", got)
		}
		log, listen = watchMetrics(t, append(env, "PROVISION_VAR_gate_token="+testToken), "-interval", "1s", "-var", portVar, specs)
		waitStatus(t, func() int {
			if gateProven(t, listen) == "v1=1 v2=1 v3=1" {
				return 1
			}
			return 0
		}, 1)
		resp, err := http.Get("http://" + listen + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		metrics, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if strings.Contains(string(metrics), testToken) || strings.Contains(log.Tail(1<<20), testToken) {
			t.Errorf("the proof token is in the watcher's metrics or log")
		}
	})

	t.Run("snapshot", func(t *testing.T) {
		// What the three proxies serve is recorded; the plan from the
		// snapshot, gates included, is the live plan, in text and JSON.
		snap := filepath.Join(t.TempDir(), "snap.json")
		if code, out := run("snapshot", "-var", portVar, "-out", snap, specs); code != 0 {
			t.Fatalf("snapshot: exit %d\n%s", code, out)
		}
		for _, format := range []string{"text", "json"} {
			_, live := run("plan", "-format", format, "-var", portVar, specs)
			_, offline := run("plan", "-format", format, "-snapshot", snap, "-var", portVar, specs)
			if format == "text" {
				_, offline, _ = strings.Cut(offline, "\n\n")
			} else {
				offline = regexp.MustCompile(`,"snapshot":\{[^}]*\}`).ReplaceAllString(offline, "")
			}
			if diff := cmp.Diff(live, offline); diff != "" || !strings.Contains(live, map[string]string{"text": "gated by", "json": `"status":"gated"`}[format]) {
				t.Errorf("%s: the plan from the snapshot is not the live plan (-live +snapshot):\n%s\nlive: %.3000s", format, diff, live)
			}
		}
	})

	t.Run("open gate", func(t *testing.T) {
		// The service and its auth endpoint on the open server: the gate
		// exists and lets everybody in.
		code, out := run("apply", "-auto-approve", "-verify-timeout", "20s", "-var", fmt.Sprintf("api_port=%d", open), specs)
		if code != 1 || strings.Count(out, "Error: Gate not proven") != 12 || !strings.Contains(out, "traefik.v3: /api, served by the router gated-api@consulcatalog: the gate is open: the request without a token answered 200.") ||
			!strings.Contains(out, "traefik.v1: /api, served by the router frontend-gated-api@consul_catalog: the gate is open: the request without a token answered 200.") {
			t.Errorf("open gate: exit %d\n%s", code, out)
		}
		t.Log(out)
		if code, out := run("apply", "-auto-approve", "-var", portVar, specs); code != 0 {
			t.Fatalf("closing the gate again: exit %d\n%s", code, out)
		}
	})

	t.Run("rogue router", func(t *testing.T) {
		rogue := fmt.Sprintf(`{"ID":"rogue","Name":"rogue","Address":"127.0.0.1","Port":%d,"Tags":["traefik.enable=true",
			"traefik.http.routers.rogue.rule=Path(`+"`/api`"+`)","traefik.http.routers.rogue.priority=10000",
			"traefik.frontend.rule=Path:/api","traefik.frontend.priority=10000"]}`, port)
		consulPut(t, agent.Addr, "/v1/agent/service/register", rogue)
		defer consulPut(t, agent.Addr, "/v1/agent/service/deregister/rogue", "")
		var out string
		waitStatus(t, func() int {
			_, out = run("plan", "-var", portVar, specs)
			if strings.Count(out, "Warning: Gated path served without the gate") == 3 {
				return 1
			}
			return 0
		}, 1)
		for _, want := range []string{"traefik.v2 serves /api through the router rogue@consulcatalog (rule Path(`/api`), priority 10000)",
			"traefik.v3 serves /api through the router rogue@consulcatalog", "SERVED WITHOUT THE GATE by rogue@consulcatalog",
			"traefik.v1 serves /api through the router frontend-rogue@consul_catalog (rule Path:/api, priority 10000)"} {
			if !strings.Contains(out, want) {
				t.Errorf("plan lacks %q:\n%s", want, out)
			}
		}
		code, out := run("apply", "-auto-approve", "-verify-timeout", "3s", "-var", portVar, specs)
		if code != 1 || strings.Count(out, "Error: Gate not proven") != 3 || !strings.Contains(out, "rogue@consulcatalog") || !strings.Contains(out, "frontend-rogue@consul_catalog") {
			t.Errorf("apply with a rogue router: exit %d\n%s", code, out)
		}
		t.Log(out)
	})

	// Issue 72's bypasses by a tag, made by hand on the agent as a rogue
	// contributor would: Traefik 2 and 3 serve /healthz past the gate
	// through them (each row: the probe, what a closed gate answers, what
	// the proxy answered), the plan reports each at the gated service as
	// Traefik reads the tags, and the apply's proof fails.
	for _, bypass := range []struct{ name, tags, route string }{
		{"tcp router", "\"traefik.tcp.routers.raw.rule=HostSNI(`*`)\",\"traefik.tcp.routers.raw.entrypoints=web\"", `tcp router "raw"`},
		{"router in another case", "\"traefik.HTTP.Routers.open.rule=PathPrefix(`/`)\"", `http router "open"`},
	} {
		t.Run(bypass.name, func(t *testing.T) {
			consulPut(t, agent.Addr, "/v1/agent/service/register", fmt.Sprintf(`{"ID":"bypass","Name":"bypass","Address":"127.0.0.1","Port":%d,"Tags":[%s]}`, port, bypass.tags))
			defer func() {
				consulPut(t, agent.Addr, "/v1/agent/service/deregister/bypass", "")
				for _, p := range []*servers.Traefik{v2, v3} {
					waitStatus(t, func() int { return min(healthz(p.URL), http.StatusOK+1) }, http.StatusOK+1) // anything but 200: closed again
				}
			}()
			for name, p := range map[string]*servers.Traefik{"2.11": v2, "3.6": v3} {
				waitStatus(t, func() int { return healthz(p.URL) }, http.StatusOK)
				t.Logf("probe GET /healthz, no token, Traefik %s, %s: a closed gate answers 404, seen 200", name, bypass.name)
			}
			code, out := run("plan", "-var", portVar, specs)
			if code != 0 || !strings.Contains(out, "Warning: A registration opens the gate") || !strings.Contains(out, bypass.route+` in the tags of "bypass"`) {
				t.Errorf("plan with the %s: exit %d\n%s", bypass.name, code, out)
			}
			code, out = run("apply", "-auto-approve", "-verify-timeout", "3s", "-var", portVar, specs)
			if code != 1 || !strings.Contains(out, "Error: Gate not proven") || strings.Contains(out, "traefik.v3: /api gated by") {
				t.Errorf("apply with the %s: exit %d\n%s", bypass.name, code, out)
			}
			t.Log(out)
		})
	}

	t.Run("rogue router, watched", func(t *testing.T) {
		// provision watch -heal, polling the proxies every second: a rogue
		// router in front of /api is reported once while it stays, and
		// the service that carries it, which the project does not own, is
		// never touched.
		// Until the proxies have dropped the rogue router of the test
		// before.
		waitStatus(t, func() int {
			if _, out := run("plan", "-var", portVar, specs); strings.Contains(out, "Gated path served without the gate") {
				return 0
			}
			return 1
		}, 1)
		log, listen := watchMetrics(t, env, "-heal", "-interval", "1s", "-var", portVar, specs)
		waitStatus(t, func() int {
			if strings.Contains(log.Tail(1<<20), "no drift (start)") {
				return 1
			}
			return 0
		}, 1)
		rogue := fmt.Sprintf(`{"ID":"rogue","Name":"rogue","Address":"127.0.0.1","Port":%d,"Tags":["traefik.enable=true",
			"traefik.http.routers.rogue.rule=Path(`+"`/api`"+`)","traefik.http.routers.rogue.priority=10000"]}`, open)
		consulPut(t, agent.Addr, "/v1/agent/service/register", rogue)
		defer consulPut(t, agent.Addr, "/v1/agent/service/deregister/rogue", "")
		// Said for traefik.v2 and v3, then three more polls: their gates
		// count as unproven, and Traefik 1, which the rogue router's tags
		// do not reach, is still proven on every quiet poll.
		waitStatus(t, func() int { return min(strings.Count(log.Tail(1<<20), "Gated path served without the gate"), 2) }, 2)
		time.Sleep(3 * time.Second)
		if got := gateProven(t, listen); got != "v1=1 v2=0 v3=0" {
			t.Errorf("provision_gate_proven with a rogue router on v2 and v3: %s", got)
		}
		out := log.Tail(1 << 20)
		if n := strings.Count(out, "Gated path served without the gate"); n != 2 || !strings.Contains(out, "traefik.v2 serves /api through the router rogue@consulcatalog") ||
			strings.Contains(out, "repairing") || !strings.Contains(consulGet(t, agent.Addr, "/v1/agent/service/rogue"), `"Service"`) {
			t.Errorf("a rogue router under watch: reported %d times\n%s", n, out)
		}
	})

	t.Run("another auth address (Traefik 1)", func(t *testing.T) {
		// A 1.7 frontend with forward auth, but to another endpoint (one
		// that lets everybody in): it serves /api without this gate.
		sneaky := fmt.Sprintf(`{"ID":"sneaky","Name":"sneaky","Address":"127.0.0.1","Port":%d,"Tags":[
			"traefik.frontend.rule=Path:/api","traefik.frontend.auth.forward.address=http://127.0.0.1:%d/auth"]}`, port, open)
		consulPut(t, agent.Addr, "/v1/agent/service/register", sneaky)
		defer consulPut(t, agent.Addr, "/v1/agent/service/deregister/sneaky", "")
		// Until the later proxies have dropped the rogue router of the
		// test before: then only Traefik 1 serves /api ungated.
		var out string
		waitStatus(t, func() int {
			_, out = run("plan", "-var", portVar, specs)
			if strings.Count(out, "Warning: Gated path served without the gate") == 1 && strings.Contains(out, "frontend-sneaky") {
				return 1
			}
			return 0
		}, 1)
		if !strings.Contains(out, "traefik.v1 serves /api through the router frontend-sneaky@consul_catalog (rule Path:/api, priority 9), which does not use the frontend's forward-auth middleware") {
			t.Errorf("plan with a 1.7 frontend gated elsewhere:\n%s", out)
		}
		code, out := run("apply", "-auto-approve", "-verify-timeout", "3s", "-var", portVar, specs)
		if code != 1 || strings.Count(out, "Error: Gate not proven") != 1 || !strings.Contains(out, "frontend-sneaky@consul_catalog") {
			t.Errorf("apply with a 1.7 frontend gated elsewhere: exit %d\n%s", code, out)
		}
	})

	t.Run("removed frontends", func(t *testing.T) {
		if err := os.Remove(filepath.Join(specs, "more.hcl")); err != nil {
			t.Fatal(err)
		}
		code, out := run("apply", "-auto-approve", "-var", portVar, specs)
		for _, want := range []string{"traefik.v2: the router two-paths@consulcatalog of a removed frontend is no longer served",
			"traefik.v1: the router frontend-host-prefix@consul_catalog of a removed frontend is no longer served",
			"traefik.v3: the router host-prefix@consulcatalog of a removed frontend is no longer served", "traefik.v3: /api gated by gated-api-auth"} {
			if !strings.Contains(out, want) {
				t.Errorf("apply lacks %q:\n%s", want, out)
			}
		}
		if code != 0 {
			t.Errorf("apply that removes two frontends: exit %d\n%s", code, out)
		}
	})

	t.Run("no catalog provider (Traefik 1)", func(t *testing.T) {
		// A 1.7 that answers but serves only a file provider: it does not
		// read what provision registers, which is not "not served".
		file := filepath.Join(t.TempDir(), "rules.toml")
		toml := fmt.Sprintf("[backends.b.servers.s]\nurl = \"http://127.0.0.1:%d\"\n[frontends.f]\nbackend = \"b\"\n[frontends.f.routes.r]\nrule = \"Path:/other\"\n", port)
		if err := os.WriteFile(file, []byte(toml), 0o644); err != nil {
			t.Fatal(err)
		}
		fileOnly := servers.NewTraefik(t, agent.Addr, servers.TraefikOptions{Generation: 1, FileOnly: file})
		dir := t.TempDir()
		copyAreaA(t, dir)
		block := fmt.Sprintf("traefik \"file\" {\n  api = %q\n  url = %q\n}\n", fileOnly.API, fileOnly.URL)
		if err := os.WriteFile(filepath.Join(dir, "proxies.hcl"), []byte(block), 0o644); err != nil {
			t.Fatal(err)
		}
		var out string
		waitStatus(t, func() int {
			_, out = run("plan", "-var", portVar, dir)
			if strings.Contains(out, "only file") {
				return 1
			}
			return 0
		}, 1)
		want := "this Traefik 1 proxy lists no Consul catalog provider (only file), so it does not serve what provision registers"
		if !strings.Contains(out, "Warning: Cannot read the proxy") || !strings.Contains(out, want) || strings.Contains(out, "not served") {
			t.Errorf("plan against a 1.7 without the catalog:\n%s", out)
		}
		code, out := run("apply", "-auto-approve", "-verify-timeout", "2s", "-var", portVar, dir)
		if code != 1 || !strings.Contains(out, "Error: Gate not proven") || !strings.Contains(out, want) {
			t.Errorf("apply against a 1.7 without the catalog: exit %d\n%s", code, out)
		}
	})

	t.Run("proxy down", func(t *testing.T) {
		down := t.TempDir()
		copyAreaA(t, down)
		ports, err := servers.FreePorts(2)
		if err != nil {
			t.Fatal(err)
		}
		src := fmt.Sprintf("traefik \"gone\" {\n  api = \"http://127.0.0.1:%d\"\n  url = \"http://127.0.0.1:%d\"\n}\n", ports[0], ports[1])
		if err := os.WriteFile(filepath.Join(down, "proxies.hcl"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		code, out := run("apply", "-auto-approve", "-verify-timeout", "2s", "-var", portVar, down)
		took := time.Since(start)
		if code != 1 || !strings.Contains(out, "Warning: Cannot read the proxy") || !strings.Contains(out, "traefik.gone could not be read within -verify-timeout=2s") {
			t.Errorf("proxy down: exit %d\n%s", code, out)
		}
		if took > 20*time.Second {
			t.Errorf("a proxy that is down took %s to fail an apply bounded by -verify-timeout=2s", took)
		}
	})
}

// listen serves h on a free loopback port until the test ends.
func listen(t *testing.T, h http.Handler) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := newServer(h)
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Shutdown(context.Background()) })
	return ln.Addr().(*net.TCPAddr).Port
}

func consulGet(t *testing.T, addr, path string) string {
	t.Helper()
	_, answer := servers.Curl(t, "GET", "http://"+addr+path, "")
	return answer
}

func consulPut(t *testing.T, addr, path, body string) {
	t.Helper()
	if code, answer := servers.Curl(t, "PUT", "http://"+addr+path, body); code != http.StatusOK {
		t.Fatalf("PUT %s: %d %s", path, code, answer)
	}
}

// TestGateUnderACLs is the seed's chain on a Consul with ACLs on (default
// deny): provision applies with exactly the token made from the policy it
// prints, Traefik 2 reads the catalog with a read-only token, and the
// apply proves the gate through it.
func TestGateUnderACLs(t *testing.T) {
	agent := servers.NewACLConsul(t)
	proxy := servers.NewTraefik(t, agent.Addr, servers.TraefikOptions{Generation: 2, ExposedByDefault: true,
		Token: agent.NewToken(t, "traefik", servers.TraefikReadRules)})
	app := newHandler(testTokens(t), io.Discard)
	port := listen(t, app)

	specs := t.TempDir()
	copyAreaA(t, specs)
	block := fmt.Sprintf("traefik \"v2\" {\n  api = %q\n  url = %q\n}\n", proxy.API, proxy.URL)
	if err := os.WriteFile(filepath.Join(specs, "proxies.hcl"), []byte(block), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := buildProvision(t)
	base := append(os.Environ(), "CONSUL_HTTP_ADDR="+agent.Addr, "NO_COLOR=1")
	rules := runProvision(t, bin, append(base, "CONSUL_HTTP_TOKEN="+agent.Token), "policy", specs)
	env := append(base, "CONSUL_HTTP_TOKEN="+agent.NewToken(t, "provision", rules))
	out := runProvision(t, bin, env, "apply", "-auto-approve", "-var", fmt.Sprintf("api_port=%d", port), specs)
	if !strings.Contains(out, "traefik.v2: /api gated by gated-api-auth (no token 401, wrong token 401)") || strings.Contains(out, "Warning") {
		t.Fatalf("apply under ACLs:\n%s", out)
	}
	t.Log(out)
}

// gateProven reads provision_gate_proven from a watcher's /metrics at
// listen: "v1=1 v2=0 v3=1" for the proxies traefik.v1, v2 and v3, in
// order ("" before the watcher answers).
func gateProven(t *testing.T, listen string) string {
	t.Helper()
	resp, err := http.Get("http://" + listen + "/metrics")
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	text, _ := io.ReadAll(resp.Body)
	var got []string
	for _, m := range regexp.MustCompile(`(?m)^provision_gate_proven\{proxy="traefik\.(\w+)"\} (\d+)$`).FindAllStringSubmatch(string(text), -1) {
		got = append(got, m[1]+"="+m[2])
	}
	slices.Sort(got)
	return strings.Join(got, " ")
}

// healthz is the status of GET url/healthz without a token; 0 when the
// request fails.
func healthz(url string) int {
	resp, err := http.Get(url + "/healthz")
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}
