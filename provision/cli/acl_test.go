package cli

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/provision-dev/provision/provision/servers"
)

const aclSpec = `project = "acl"

variable "gamma_port" {
  type    = number
  default = 19302
}

service "alpha" {
  id   = "alpha-1"
  port = 19301
}

service "gamma" {
  id   = "gamma-1"
  port = var.gamma_port
}
`

// writes counts the requests other than GET that reach an agent.
type writes struct {
	n     atomic.Int64
	proxy *httputil.ReverseProxy
}

func (w *writes) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		w.n.Add(1)
	}
	w.proxy.ServeHTTP(rw, r)
}

// TestACL runs provision against a real Consul 1.15.4 agent with ACLs on
// and default_policy deny: the policy it prints, applied as a token's,
// is enough for apply, the lock, the record and a converged plan; the
// anonymous token and a token that lacks one permission are refused
// before anything is sent; the permissions are checked for what is sent
// (-exclude leaves out what the token may not write); -replace registers
// a converged service again.
func TestACL(t *testing.T) {
	agent := servers.NewACLConsul(t)
	target, _ := url.Parse(agent.URL)
	w := &writes{proxy: httputil.NewSingleHostReverseProxy(target)}
	front := httptest.NewServer(w)
	defer front.Close()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.hcl"), []byte(aclSpec), 0o644); err != nil {
		t.Fatal(err)
	}
	env := func(token string) map[string]string {
		return map[string]string{"CONSUL_HTTP_ADDR": strings.TrimPrefix(front.URL, "http://"), "CONSUL_HTTP_TOKEN": token, "NO_COLOR": "1"}
	}

	var rules string
	t.Run("policy", func(t *testing.T) {
		code, out, errOut := runCLI(t, env(agent.Token), "policy", dir)
		if code != exitOK {
			t.Fatalf("policy: exit %d\n%s%s", code, out, errOut)
		}
		for _, want := range []string{"service \"alpha\" {\n  policy = \"write\"\n}", "service \"gamma\" {\n  policy = \"write\"\n}",
			"key \"provision/locks/acl\" {\n  policy = \"write\"\n}", "key \"provision/agents/acl\" {\n  policy = \"write\"\n}",
			"session \"provision-secure\" {\n  policy = \"write\"\n}", "agent \"provision-secure\" {\n  policy = \"read\"\n}"} {
			if !strings.Contains(out, want) {
				t.Errorf("the policy lacks\n%s\n%s", want, out)
			}
		}
		if strings.Contains(out, "_prefix") {
			t.Errorf("the policy grants a prefix:\n%s", out)
		}
		t.Log(out)
		// The documented pipe, through the real consul CLI: it reads the
		// rules from standard input with -rules - (its @- reads a file
		// named "-", which Consul 1.15.4 refuses).
		bin, err := servers.ConsulBinary()
		if err != nil {
			t.Fatal(err)
		}
		for i, form := range []string{"@-", "-"} {
			create := exec.Command(bin, "acl", "policy", "create", "-name", fmt.Sprintf("provision-doc-%d", i), "-rules", form)
			create.Env = append(os.Environ(), "CONSUL_HTTP_ADDR="+agent.Addr, "CONSUL_HTTP_TOKEN="+agent.Token)
			create.Stdin = strings.NewReader(out)
			got, err := create.CombinedOutput()
			if form == "-" && (err != nil || !strings.Contains(string(got), "provision-doc")) {
				t.Errorf("provision policy | consul acl policy create -rules -: %v\n%s", err, got)
			}
			if form == "@-" && (err == nil || !strings.Contains(string(got), "Failed to read file")) {
				t.Errorf("-rules @- was expected to fail as the docs' old form did: %v\n%s", err, got)
			}
		}
		code, out, _ = runCLI(t, env(agent.Token), "policy", "-json", dir)
		var p struct{ Rules string }
		if code != exitOK || json.Unmarshal([]byte(out), &p) != nil || p.Rules == "" {
			t.Fatalf("policy -json: exit %d\n%s", code, out)
		}
		rules = p.Rules
	})
	if rules == "" {
		t.FailNow()
	}
	least := agent.NewToken(t, "provision-acl", rules)

	t.Run("least privilege", func(t *testing.T) {
		code, out, errOut := runCLI(t, env(least), "apply", "-auto-approve", dir)
		if code != exitOK || !strings.Contains(out, "Apply complete: 2 created") || strings.Contains(out+errOut, "Warning") {
			t.Fatalf("apply with the policy's token: exit %d\n%s%s", code, out, errOut)
		}
		code, out, errOut = runCLI(t, env(least), "plan", "-detailed-exitcode", dir)
		if code != exitOK || !strings.Contains(out, "No changes.") || strings.Contains(out+errOut, "Warning") {
			t.Errorf("converged plan with the policy's token: exit %d\n%s%s", code, out, errOut)
		}
		plansAsLive(t, env(least), env(""), dir)
		// The token writes nothing outside the project.
		if code, body, _ := agent.Do(http.MethodPut, "/v1/agent/service/register", `{"ID":"other-1","Name":"other","Port":1}`, least); code != http.StatusForbidden {
			t.Errorf("the policy's token registered a service of no declaration: %d %s", code, body)
		}
	})

	t.Run("anonymous", func(t *testing.T) {
		before := w.n.Load()
		code, out, errOut := runCLI(t, env(""), "apply", "-auto-approve", dir)
		if code != exitError || !strings.Contains(errOut, "No Consul ACL token") || !strings.Contains(errOut, "the anonymous token reads nothing under default_policy deny") {
			t.Errorf("apply with the anonymous token: exit %d\n%s%s", code, out, errOut)
		}
		if strings.Contains(out, "will be created") {
			t.Errorf("the anonymous plan shows false creates:\n%s", out)
		}
		if sent := w.n.Load() - before; sent > 1 {
			t.Errorf("%d writes reached the agent (only the permission check may)", sent)
		}
	})

	t.Run("missing permission", func(t *testing.T) {
		partial := agent.NewToken(t, "provision-acl-partial", strings.Replace(rules, "service \"gamma\" {\n  policy = \"write\"\n}", "service \"gamma\" {\n  policy = \"read\"\n}", 1))
		code, out, errOut := runCLI(t, env(partial), "plan", "-var", "gamma_port=19303", dir)
		if code != exitError || !strings.Contains(errOut, "Error: Missing ACL permission") || !strings.Contains(errOut, `service:write on "gamma"`) || !strings.Contains(errOut, "line 13, in service \"gamma\"") {
			t.Errorf("plan with a token that may not write gamma: exit %d\n%s%s", code, out, errOut)
		}
		t.Log(errOut)
		// Snapshotted with that token, the plan offline, with no token,
		// is refused the same way.
		plansAsLive(t, env(partial), env(""), dir, "-var", "gamma_port=19303")
		before := w.n.Load()
		code, _, errOut = runCLI(t, env(partial), "apply", "-auto-approve", "-var", "gamma_port=19303", dir)
		if code != exitError || !strings.Contains(errOut, "Missing ACL permission") {
			t.Errorf("apply with that token: exit %d\n%s", code, errOut)
		}
		if sent := w.n.Load() - before; sent != 1 {
			t.Errorf("%d writes reached the agent; want only the permission check (POST /v1/internal/acl/authorize): no lock, no register", sent)
		}
		// What the token may not write, left out: the rest plans and
		// applies (the permissions are checked for what is sent).
		for _, cmd := range [][]string{{"plan", "-detailed-exitcode"}, {"apply", "-auto-approve"}} {
			code, out, errOut := runCLI(t, env(partial), append(cmd, "-var", "gamma_port=19303", "-exclude", "service.gamma-1", dir)...)
			if code != exitOK || !strings.Contains(out, "No changes.") || strings.Contains(errOut, "Missing ACL permission") {
				t.Errorf("%s -exclude service.gamma-1 with that token: exit %d\n%s%s", cmd[0], code, out, errOut)
			}
		}
		// A saved plan is checked for the changes it holds: alpha-1 gone
		// and gamma-1 drifted, planned with -exclude service.gamma-1,
		// applied from the file.
		if code, body, _ := agent.Do(http.MethodPut, "/v1/agent/service/deregister/alpha-1", "", agent.Token); code != http.StatusOK {
			t.Fatalf("deregistering alpha-1: %d %s", code, body)
		}
		_, body, _ := agent.Do(http.MethodGet, "/v1/agent/service/gamma-1", "", agent.Token)
		var gamma struct{ Meta map[string]string }
		if err := json.Unmarshal(body, &gamma); err != nil {
			t.Fatal(err)
		}
		drifted := fmt.Sprintf(`{"ID":"gamma-1","Name":"gamma","Port":19399,"Meta":%s}`, mustJSON(gamma.Meta))
		if code, body, _ := agent.Do(http.MethodPut, "/v1/agent/service/register", drifted, agent.Token); code != http.StatusOK {
			t.Fatalf("editing gamma-1: %d %s", code, body)
		}
		saved := filepath.Join(t.TempDir(), "plan")
		if code, out, errOut := runCLI(t, env(partial), "plan", "-var", "gamma_port=19303", "-exclude", "service.gamma-1", "-out", saved, dir); code != exitOK {
			t.Fatalf("plan -out with that token: exit %d\n%s%s", code, out, errOut)
		}
		if code, out, errOut := runCLI(t, env(partial), "apply", "-var", "gamma_port=19303", saved); code != exitOK || !strings.Contains(out, "Apply complete: 1 created") {
			t.Errorf("apply of the saved plan with that token: exit %d\n%s%s", code, out, errOut)
		}
		if code, out, errOut := runCLI(t, env(least), "apply", "-auto-approve", dir); code != exitOK {
			t.Fatalf("converging gamma-1 again: exit %d\n%s%s", code, out, errOut)
		}
	})

	t.Run("lock refused", func(t *testing.T) {
		nolock := agent.NewToken(t, "provision-acl-nolock", "service \"alpha\" {\n  policy = \"write\"\n}\nservice \"gamma\" {\n  policy = \"write\"\n}\n")
		code, _, errOut := runCLI(t, env(nolock), "apply", "-auto-approve", dir)
		if code != exitError || !strings.Contains(errOut, "Missing ACL permission") || !strings.Contains(errOut, `key:write on "provision/locks/acl"`) || strings.Contains(errOut, "Try again later") {
			t.Errorf("apply with a token that may not lock: exit %d\n%s", code, errOut)
		}
		code, _, errOut = runCLI(t, env(nolock), "plan", dir)
		if !strings.Contains(errOut, "No permission to read the record of the project's agents") && !strings.Contains(errOut, "Missing ACL permission") {
			t.Errorf("plan with that token: exit %d\n%s", code, errOut)
		}
	})

	t.Run("session refused", func(t *testing.T) {
		// Everything but the session: the node's name cannot be read
		// (no agent:read), so the lock's own 403 says it.
		nosession := agent.NewToken(t, "provision-acl-nosession", strings.Join(slices.DeleteFunc(strings.Split(rules, "\n\n"), func(r string) bool {
			return strings.Contains(r, "session \"") || strings.Contains(r, "agent \"")
		}), "\n\n"))
		code, _, errOut := runCLI(t, env(nosession), "apply", "-auto-approve", "-var", "gamma_port=19304", dir)
		if code != exitError || !strings.Contains(errOut, "lacks permission 'session:write'") || !strings.Contains(errOut, "The token may not take the lock") ||
			!strings.Contains(errOut, "Retrying will not help") || strings.Contains(errOut, "Try again later") {
			t.Errorf("apply with a token that may not make a session: exit %d\n%s", code, errOut)
		}
	})

	t.Run("filtered read", func(t *testing.T) {
		alphaOnly := agent.NewToken(t, "provision-acl-alpha", "service \"alpha\" {\n  policy = \"write\"\n}\n")
		code, out, errOut := runCLI(t, env(alphaOnly), "plan", dir)
		if !strings.Contains(errOut, "Warning: The token hides objects of the agent") {
			t.Errorf("plan with a token that reads part of the agent: exit %d\n%s%s", code, out, errOut)
		}
	})

	t.Run("replace", func(t *testing.T) {
		code, out, errOut := runCLI(t, env(least), "apply", "-auto-approve", "-replace", "service.gamma-1", dir)
		if code != exitOK || !strings.Contains(out, "# service.gamma-1 will be updated in place (replaced (-replace): registered again in place, with the current token)") ||
			!strings.Contains(out, "Apply complete: 0 created, 1 updated, 0 deleted.") {
			t.Errorf("apply -replace: exit %d\n%s%s", code, out, errOut)
		}
		code, _, errOut = runCLI(t, env(least), "apply", "-auto-approve", "-replace", "service.nope", dir)
		if code != exitError || !strings.Contains(errOut, "service.nope names no object the specs declare") {
			t.Errorf("apply -replace of nothing: exit %d\n%s", code, errOut)
		}
	})
}

// TestTLS runs provision against a real agent that serves HTTPS only and
// requires client certificates: with CONSUL_CACERT, CONSUL_CLIENT_CERT and
// CONSUL_CLIENT_KEY it applies; without one of them the error names the
// setting.
func TestTLS(t *testing.T) {
	agent := servers.NewTLSConsul(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.hcl"), []byte(strings.Replace(aclSpec, `"acl"`, `"tls"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	full := map[string]string{"CONSUL_HTTP_ADDR": agent.URL, "CONSUL_CACERT": agent.CACert, "CONSUL_CLIENT_CERT": agent.ClientCert, "CONSUL_CLIENT_KEY": agent.ClientKey, "NO_COLOR": "1"}
	without := func(keys ...string) map[string]string {
		env := map[string]string{}
		for k, v := range full {
			if !slices.Contains(keys, k) {
				env[k] = v
			}
		}
		for _, k := range keys {
			env[k] = ""
		}
		return env
	}
	if code, out, errOut := runCLI(t, full, "apply", "-auto-approve", dir); code != exitOK || !strings.Contains(out, "Apply complete: 2 created") {
		t.Fatalf("apply over TLS with client certificates: exit %d\n%s%s", code, out, errOut)
	}
	for name, tt := range map[string]struct {
		env  map[string]string
		want string
	}{
		"no client certificate": {without("CONSUL_CLIENT_CERT", "CONSUL_CLIENT_KEY"), "set CONSUL_CLIENT_CERT and CONSUL_CLIENT_KEY"},
		"no CA":                 {without("CONSUL_CACERT"), "set CONSUL_CACERT"},
	} {
		code, _, errOut := runCLI(t, tt.env, "plan", dir)
		if code != exitError || !strings.Contains(errOut, "Error: Cannot reach the Consul agent over TLS") || !strings.Contains(errOut, tt.want) {
			t.Errorf("%s: exit %d\n%s", name, code, errOut)
		}
	}
	// Planned from a snapshot, no certificate or CA is needed.
	plansAsLive(t, full, without("CONSUL_CACERT", "CONSUL_CLIENT_CERT", "CONSUL_CLIENT_KEY"), dir, "-var", "gamma_port=19305")
}

// TestACLFleet: services on two client agents of a cluster with ACLs on,
// applied with the token made from provision policy (the lock on the
// first agent's node), then planned as converged without a warning.
func TestACLFleet(t *testing.T) {
	cluster := servers.NewACLCluster(t, "node-a", "node-b")
	server, a, b := cluster[0], cluster[1], cluster[2]
	dir := t.TempDir()
	spec := fmt.Sprintf(`project = "aclfleet"

agent "node-a" {
  address = %q
}

agent "node-b" {
  address = %q
}

service "web" {
  agent = "node-a"
  port  = 19401
}

service "jobs" {
  agent = "node-b"
  port  = 19402
}
`, a.Addr, b.Addr)
	if err := os.WriteFile(filepath.Join(dir, "main.hcl"), []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	code, rules, errOut := runCLI(t, map[string]string{"CONSUL_HTTP_TOKEN": server.Token}, "policy", dir)
	if code != exitOK || !strings.Contains(rules, `session "node-a"`) {
		t.Fatalf("policy: exit %d\n%s%s", code, rules, errOut)
	}
	env := map[string]string{"CONSUL_HTTP_TOKEN": server.NewToken(t, "provision-fleet", rules), "NO_COLOR": "1"}
	code, out, errOut := runCLI(t, env, "apply", "-auto-approve", dir)
	if code != exitOK || !strings.Contains(out, "Apply complete: 2 created") || strings.Contains(out+errOut, "Warning") {
		t.Fatalf("apply on an ACL fleet: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = runCLI(t, env, "plan", "-detailed-exitcode", dir)
	if code != exitOK || strings.Contains(out+errOut, "Warning") {
		t.Errorf("converged plan on an ACL fleet: exit %d\n%s%s", code, out, errOut)
	}
}

// plansAsLive takes a snapshot of the specs of dir with env and holds
// what plan prints from it, with offline's environment and no network,
// against what it prints live, in text (less the line that names the
// snapshot) and in JSON (less its snapshot field), diagnostics included.
func plansAsLive(t *testing.T, env, offline map[string]string, dir string, args ...string) {
	t.Helper()
	snap := filepath.Join(t.TempDir(), "snap.json")
	if code, out, errOut := runCLI(t, env, append(append([]string{"snapshot", "-out", snap}, args...), dir)...); code != exitOK {
		t.Fatalf("snapshot: exit %d\n%s%s", code, out, errOut)
	}
	for _, format := range []string{"text", "json"} {
		plan := append([]string{"plan", "-format", format}, args...)
		liveCode, live, liveErr := runCLI(t, env, append(plan, dir)...)
		offCode, off, offErr := runCLI(t, offline, append(append(plan, "-snapshot", snap), dir)...)
		if format == "text" {
			_, off, _ = strings.Cut(off, "\n\n")
		} else {
			off = regexp.MustCompile(`,"snapshot":\{[^}]*\}`).ReplaceAllString(off, "")
		}
		if liveCode != offCode || live != off || liveErr != offErr {
			t.Errorf("%s: the plan from the snapshot (exit %d) is not the live plan (exit %d):\n%s%s", format, offCode, liveCode,
				cmp.Diff(live, off), cmp.Diff(liveErr, offErr))
		}
	}
}

// TestPolicyOpensNoSearchCluster: policy writes the Consul ACL policy of
// the specs and opens no search cluster, so a search cluster that could
// not be read (ELASTICSEARCH_URL no URL) does not stop it, as it stops
// plan.
func TestPolicyOpensNoSearchCluster(t *testing.T) {
	agent := servers.NewConsul(t)
	dir := t.TempDir()
	spec := "project = \"nosearch\"\n\nservice \"alpha\" {\n  port = 18901\n}\n\nsearch \"t1\" {\n  cluster_name = \"t1\"\n}\n\nindex \"logs\" {\n  search = \"t1\"\n  mapping \"doc\" {\n    properties = {}\n  }\n}\n"
	if err := os.WriteFile(filepath.Join(dir, "main.hcl"), []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"CONSUL_HTTP_ADDR": agent.Addr, "ELASTICSEARCH_URL": "nowhere", "NO_COLOR": "1"}
	if code, out, errOut := runCLI(t, env, "policy", dir); code != exitOK || !strings.Contains(out, "service \"alpha\" {\n  policy = \"write\"\n}") {
		t.Errorf("policy: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut := runCLI(t, env, "plan", dir); code != exitError || !strings.Contains(errOut, "Invalid search settings") {
		t.Errorf("plan: exit %d, want %d and the search block refused\n%s%s", code, exitError, out, errOut)
	}
}
