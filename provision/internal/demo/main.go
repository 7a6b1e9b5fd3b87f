// Command demo brings up the seed's whole system on loopback and
// provisions it with specs/: a Consul agent with ACLs on (default deny),
// gated-api, Traefik 2 reading the catalog with a read-only token, and Elasticsearch member clusters t1 and t2 with a tribe
// node. It makes provision's token from the policy provision policy
// prints, runs provision plan and apply with that Traefik declared, so
// that the apply ends with the proof of the gate, shows three requests
// through Traefik and their answers, and stops everything it started,
// also on Ctrl-C. "make demo" builds bin/ and installs the servers first.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/provision-dev/provision/provision/servers"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Stdout); err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("interrupted; everything the demo started is stopped")
		}
		fmt.Fprintf(os.Stderr, "demo: %v\n", err)
		stop()
		os.Exit(1)
	}
}

func run(ctx context.Context, out io.Writer) error {
	dir, err := os.MkdirTemp("", "provision-demo")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	var logs servers.LogBuffer
	step := func(format string, args ...any) { fmt.Fprintf(out, "==> "+format+"\n", args...) }

	step("starting Consul %s with ACLs on (default_policy deny)", servers.ConsulVersion)
	agent, err := servers.StartACLConsul(ctx, dir, &logs)
	if err != nil {
		return fmt.Errorf("%w\n%s", err, logs.Tail(2000))
	}
	defer agent.Stop()

	step("starting Elasticsearch %s: member clusters t1 and t2, and a read-only tribe node (writes and metadata blocked)", servers.ElasticsearchVersion)
	search, err := servers.StartTribe(ctx, dir, &logs)
	if err != nil {
		return fmt.Errorf("%w\n%s", err, logs.Tail(2000))
	}
	defer search.Stop()

	// A token made for this run only; the application gets its hash.
	secret := make([]byte, 32)
	rand.Read(secret)
	token := "demo-" + hex.EncodeToString(secret)
	ports, err := servers.FreePorts(1)
	if err != nil {
		return err
	}
	port := ports[0]
	step("starting gated-api on 127.0.0.1:%d (one token, for identity \"demo-user\")", port)
	hashCmd := exec.Command("bin/gated-api", "hash-token", "-identity", "demo-user")
	hashCmd.Stdin = strings.NewReader(token + "\n")
	hash, err := hashCmd.Output()
	if err != nil {
		return fmt.Errorf("bin/gated-api hash-token: %w (run make build)", err)
	}
	app := exec.CommandContext(ctx, "bin/gated-api", "-listen", "127.0.0.1:"+strconv.Itoa(port))
	app.Env = append(os.Environ(), "GATED_API_TOKENS="+strings.TrimSpace(string(hash)))
	app.Stdout, app.Stderr = &logs, &logs
	if err := app.Start(); err != nil {
		return err
	}
	defer func() { app.Process.Signal(syscall.SIGTERM); app.Wait() }()

	step("starting Traefik %s with the Consul catalog provider, reading with a token of policy \"traefik\":\n%s", servers.TraefikVersion, servers.TraefikReadRules)
	readOnly, err := agent.MakeToken("traefik", servers.TraefikReadRules)
	if err != nil {
		return err
	}
	proxy, err := servers.StartTraefik(ctx, agent.Addr, servers.TraefikOptions{Generation: 2, Token: readOnly}, &logs)
	if err != nil {
		return fmt.Errorf("%w\n%s", err, logs.Tail(2000))
	}
	defer proxy.Stop()

	// The shipped specs, and the demo's Traefik declared beside them, so
	// that every apply ends with the proof that it gates /api.
	specs, err := withProxy(dir, proxy)
	if err != nil {
		return err
	}
	step("specs: specs/*.hcl, and %s declaring this Traefik:\n%s", specs+"/traefik.hcl", proxyBlock(proxy))
	base := append(os.Environ(), "CONSUL_HTTP_ADDR="+agent.Addr, "NO_COLOR=1")
	vars := []string{"-var", "api_port=" + strconv.Itoa(port), "-var", "search_url=" + search.T1.URL, "-var", "tribe_url=" + search.Tribe.URL}
	step("provision policy %s (with the management token): provision's own token gets exactly these rules", specs)
	policy := exec.CommandContext(ctx, "bin/provision", append(append([]string{"policy"}, vars...), specs)...)
	policy.Env = append(base, "CONSUL_HTTP_TOKEN="+agent.Token)
	rules, err := policy.Output()
	if err != nil {
		return fmt.Errorf("provision policy: %w", err)
	}
	fmt.Fprintf(out, "%s\n", rules)
	own, err := agent.MakeToken("provision-edge", string(rules))
	if err != nil {
		return err
	}
	step("provision runs with a token of policy \"provision-edge\", Traefik with one of policy \"traefik\"; the management token is the demo's only; the application's token is the proof token (PROVISION_VAR_gate_token), so that every apply proves the third row, 200")
	env := append(base, "CONSUL_HTTP_TOKEN="+own, "PROVISION_VAR_gate_token="+token)
	for _, args := range [][]string{
		append(append([]string{"plan"}, vars...), specs),
		append(append([]string{"apply", "-auto-approve"}, vars...), specs),
		append(append([]string{"plan", "-detailed-exitcode"}, vars...), specs),
	} {
		step("provision %s", strings.Join(args, " "))
		cmd := exec.CommandContext(ctx, "bin/provision", args...)
		cmd.Env, cmd.Stdout, cmd.Stderr = env, out, out
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("provision %s: %w", args[0], err)
		}
	}

	step("requests through Traefik at %s (the route goes live a few seconds after registration)", proxy.URL)
	ask := func(tok string) (int, string) {
		req, _ := http.NewRequestWithContext(ctx, "GET", proxy.URL+"/api", nil)
		if tok != "" {
			req.Header.Set("X-Auth-Token", tok)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, strings.TrimSpace(string(b))
	}
	deadline := time.Now().Add(20 * time.Second)
	for code, _ := ask(""); code != http.StatusUnauthorized && time.Now().Before(deadline); code, _ = ask("") {
		time.Sleep(250 * time.Millisecond)
	}
	for _, r := range []struct{ label, token string }{
		{"no token", ""},
		{"wrong token", "not-the-token"},
		{"right token", token},
	} {
		code, body := ask(r.token)
		header := "(no X-Auth-Token)"
		if r.token != "" {
			header = "X-Auth-Token: <" + r.label + ">"
		}
		fmt.Fprintf(out, "GET %s/api %-28s -> %d %s\n", proxy.URL, header, code, body)
	}
	step("the dashboard, as the dashboard tool reads it: through the read-only tribe node %s", search.Tribe.URL)
	dash, err := http.Get(search.Tribe.URL + "/.dashboard/dashboard/edge?_source=title,panelsJSON")
	if err != nil {
		return err
	}
	b, _ := io.ReadAll(dash.Body)
	dash.Body.Close()
	fmt.Fprintf(out, "GET %s/.dashboard/dashboard/edge -> %d %s\n", search.Tribe.URL, dash.StatusCode, strings.TrimSpace(string(b)))
	step("stopping everything the demo started")
	return nil
}

// proxyBlock declares the demo's Traefik in the specs.
func proxyBlock(t *servers.Traefik) string {
	return fmt.Sprintf("traefik \"demo\" {\n  api = %q\n  url = %q\n}\n", t.API, t.URL)
}

// withProxy copies specs/ into dir/specs with the demo's Traefik
// declared beside them.
func withProxy(dir string, t *servers.Traefik) (string, error) {
	out := filepath.Join(dir, "specs")
	if err := os.MkdirAll(out, 0o755); err != nil {
		return "", err
	}
	files, err := filepath.Glob("specs/*.hcl")
	if err != nil {
		return "", err
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(out, filepath.Base(f)), b, 0o644); err != nil {
			return "", err
		}
	}
	if err := os.CopyFS(filepath.Join(out, "modules"), os.DirFS("specs/modules")); err != nil {
		return "", err
	}
	return out, os.WriteFile(filepath.Join(out, "traefik.hcl"), []byte(proxyBlock(t)), 0o644)
}
