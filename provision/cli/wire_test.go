package cli

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/provision-dev/provision/provision/plans"
	"github.com/provision-dev/provision/provision/servers"
)

// recorder is a reverse proxy in front of a real agent that records every
// write to the agent's services and to the keys, with their records (the
// lock's session and keys, and the record of the agents, are not part of
// a plan).
type recorder struct {
	mu    sync.Mutex
	sent  []plans.Request
	proxy *httputil.ReverseProxy
}

func (r *recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	planned := strings.HasPrefix(req.URL.Path, "/v1/agent/service/") || req.URL.Path == "/v1/txn" ||
		strings.HasPrefix(req.URL.Path, "/v1/kv/") && !strings.HasPrefix(req.URL.Path, "/v1/kv/provision/")
	if req.Method != http.MethodGet && planned {
		body, _ := io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(body))
		rec := plans.Request{Method: req.Method, Path: req.URL.RequestURI(), Header: map[string]string{}}
		for _, h := range []string{"Accept", "Content-Type"} {
			if v := req.Header.Get(h); v != "" {
				rec.Header[h] = v
			}
		}
		if len(body) > 0 {
			rec.Body = body
		}
		r.mu.Lock()
		r.sent = append(r.sent, rec)
		r.mu.Unlock()
	}
	r.proxy.ServeHTTP(w, req)
}

// applied applies the specs in dir with -auto-approve and returns its
// output, failing the test unless it exits 0.
func applied(t *testing.T, env map[string]string, dir string, flags ...string) string {
	t.Helper()
	code, out, errOut := runCLI(t, env, append(append([]string{"apply", "-auto-approve"}, flags...), dir)...)
	if code != exitOK {
		t.Fatalf("apply: exit %d\n%s%s", code, out, errOut)
	}
	return out
}

// run runs the CLI in-process and returns its exit code and output.
func runCLI(t *testing.T, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	c := testCLI(strings.NewReader(""), &stdout, &stderr)
	c.getenv = func(k string) string { return env[k] }
	c.environ = func() []string { return nil }
	for k, v := range env {
		t.Setenv(k, v)
	}
	return c.run(args), stdout.String(), stderr.String()
}

// areaA copies the shipped specs of the gated APIs (not the search part)
// into a directory of the test's own.
func areaA(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	servers.AreaA(t, "../../specs", dir)
	return dir
}

// TestApplySendsThePlannedRequests records, at the wire, the requests
// apply sends and compares them with those plan -json listed.
func TestApplySendsThePlannedRequests(t *testing.T) {
	agent := servers.NewConsul(t)
	target, _ := url.Parse("http://" + agent.Addr)
	rec := &recorder{proxy: httputil.NewSingleHostReverseProxy(target)}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	env := map[string]string{"CONSUL_HTTP_ADDR": strings.TrimPrefix(srv.URL, "http://")}
	specs := areaA(t)

	for _, step := range []struct {
		name string
		vars []string
	}{
		{"create", nil},
		{"update", []string{"-var", "api_port=8099"}},
	} {
		t.Run(step.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, env, append(append([]string{"plan", "-json"}, step.vars...), specs)...)
			if code != exitOK {
				t.Fatalf("plan: exit %d\n%s", code, errOut)
			}
			p := decodePlan(t, out)
			var want []plans.Request
			for _, c := range p.Changes {
				for _, r := range c.Requests {
					// What the plan decided of a request is not on the wire;
					// a text body is sent as its text.
					r.Idempotent, r.GoneOK, r.Batch = false, false, false
					var text string
					if r.Text && json.Unmarshal(r.Body, &text) == nil {
						r.Body, r.Text = json.RawMessage(text), false
					}
					want = append(want, operations(r)...)
				}
			}
			if len(want) == 0 {
				t.Fatal("the plan has no requests")
			}
			rec.mu.Lock()
			rec.sent = nil
			rec.mu.Unlock()
			if code, _, errOut := runCLI(t, env, append(append([]string{"apply", "-auto-approve"}, step.vars...), specs)...); code != exitOK {
				t.Fatalf("apply: exit %d\n%s", code, errOut)
			}
			// Changes are sent side by side: their requests are compared
			// as sets (those of one change keep their order, which the
			// engine's tests hold).
			byText := func(a, b plans.Request) int {
				return strings.Compare(a.Method+a.Path+string(a.Body), b.Method+b.Path+string(b.Body))
			}
			var sent []plans.Request
			for _, r := range rec.sent {
				sent = append(sent, operations(r)...)
			}
			slices.SortStableFunc(want, byText)
			slices.SortStableFunc(sent, byText)
			if diff := cmp.Diff(want, sent, cmp.Transformer("body", func(raw json.RawMessage) string {
				var buf bytes.Buffer
				if json.Compact(&buf, raw) != nil {
					return string(raw)
				}
				return buf.String()
			})); diff != "" {
				t.Errorf("requests sent (-planned +sent):\n%s", diff)
			}
		})
	}
}

// operations are the requests of a transaction (PUT /v1/txn) one per
// operation, each with its operation for body, and any other request as
// it is: the keys' changes, which the plan has one transaction each, are
// sent in transactions of several (their operations in plan order).
func operations(r plans.Request) []plans.Request {
	var ops []json.RawMessage
	if r.Path != "/v1/txn" || json.Unmarshal(r.Body, &ops) != nil {
		return []plans.Request{r}
	}
	out := make([]plans.Request, len(ops))
	for i, op := range ops {
		out[i] = r
		out[i].Body = op
	}
	return out
}

// TestExitCodes pins the documented exit codes.
func TestExitCodes(t *testing.T) {
	agent := servers.NewConsul(t)
	env := map[string]string{"CONSUL_HTTP_ADDR": agent.Addr}
	specs := areaA(t)
	tests := []struct {
		name string
		args []string
		want int
	}{
		{"plan with changes", []string{"plan", specs}, exitOK},
		{"plan -detailed-exitcode with changes", []string{"plan", "-detailed-exitcode", specs}, exitChanges},
		{"validate of bad specs", []string{"validate", "../../testdata/invalid/bad-rule-matcher.hcl"}, exitError},
		{"plan of a missing directory", []string{"plan", "../../testdata/nowhere"}, exitError},
		{"apply without a terminal", []string{"apply", specs}, exitError},
		{"apply -auto-approve", []string{"apply", "-auto-approve", specs}, exitOK},
		{"plan -detailed-exitcode converged", []string{"plan", "-detailed-exitcode", specs}, exitOK},
		{"fmt -check of unformatted specs", []string{"fmt", "-check", "../../testdata/fmt"}, exitUnformatted},
		{"unknown command", []string{"frobnicate"}, exitError},
	}
	for _, tt := range tests {
		code, _, errOut := runCLI(t, env, tt.args...)
		if code != tt.want {
			t.Errorf("%s: exit %d, want %d\n%s", tt.name, code, tt.want, errOut)
		}
	}
}

// TestFailedApplyStopsAndReruns breaks the agent's answer to one
// registration (a fault injected at the wire in front of a real agent) and
// checks that apply stops there, reports what was done and what was not,
// and that the next apply converges.
func TestFailedApplyStopsAndReruns(t *testing.T) {
	agent := servers.NewConsul(t)
	target, _ := url.Parse("http://" + agent.Addr)
	var broken sync.Map
	proxy := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if _, fail := broken.Load("on"); fail && bytes.Contains(body, []byte(`"ID":"b-1"`)) {
			http.Error(w, "Permission denied: token lacks permission 'service:write' on \"b\"", http.StatusForbidden)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	defer srv.Close()
	env := map[string]string{"CONSUL_HTTP_ADDR": strings.TrimPrefix(srv.URL, "http://")}

	broken.Store("on", true)
	code, out, errOut := runCLI(t, env, "apply", "-auto-approve", "-parallelism", "1", "../../testdata/three")
	if code != exitError {
		t.Fatalf("apply with a failing request: exit %d, want %d\n%s", code, exitError, out)
	}
	for _, want := range []string{
		"Error: Request refused by the server",
		"A refusal does not converge on a re-run",
		"on ../../testdata/three/main.hcl line 9, in service \"b\":",
		"service.b-1: request 1 of 1 (PUT /v1/agent/service/register) was refused: consul answered 403 Forbidden: Permission denied: token lacks permission 'service:write' on \"b\" (the token lacks this permission on http://",
		"   9: service \"b\" {",
		"done:     service.a-1 (1 of 1 requests sent)",
		"failed:   service.b-1 (0 of 1 requests sent)",
		"not done: service.c-1 (0 of 1 requests sent)",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("the failure report lacks %q:\n%s", want, errOut)
		}
	}

	broken.Delete("on")
	code, out, _ = runCLI(t, env, "plan", "-detailed-exitcode", "../../testdata/three")
	if code != exitChanges || !strings.Contains(out, "Plan: 2 to create, 0 to update, 0 to delete.") {
		t.Fatalf("re-plan after the failure: exit %d, want the two services not done\n%s", code, out)
	}
	if code, _, errOut := runCLI(t, env, "apply", "-auto-approve", "../../testdata/three"); code != exitOK {
		t.Fatalf("re-apply: exit %d\n%s", code, errOut)
	}
	if code, out, _ := runCLI(t, env, "plan", "-detailed-exitcode", "../../testdata/three"); code != exitOK {
		t.Fatalf("after the re-apply the plan still has changes:\n%s", out)
	}
}

// specsDir is a test's folder of specs (one main.hcl) and the CLI run on
// it with env, vars added before the folder.
type specsDir struct {
	t    *testing.T
	dir  string
	env  map[string]string
	vars []string
}

func newSpecsDir(t *testing.T, env map[string]string, vars ...string) specsDir {
	return specsDir{t: t, dir: t.TempDir(), env: env, vars: vars}
}

// write makes spec the folder's main.hcl.
func (s specsDir) write(spec string) {
	s.t.Helper()
	if err := os.WriteFile(filepath.Join(s.dir, "main.hcl"), []byte(spec), 0o644); err != nil {
		s.t.Fatal(err)
	}
}

// run runs provision args on the folder; an exit other than want fails
// the test.
func (s specsDir) run(want int, args ...string) (string, string) {
	s.t.Helper()
	code, out, errOut := runCLI(s.t, s.env, append(append(args, s.vars...), s.dir)...)
	if code != want {
		s.t.Fatalf("provision %s: exit %d, want %d\n%s%s", strings.Join(args, " "), code, want, out, errOut)
	}
	return out, errOut
}

// plan is the JSON plan of the folder, plan -json with args.
func (s specsDir) plan(args ...string) plans.Plan {
	s.t.Helper()
	out, _ := s.run(exitOK, append([]string{"plan", "-json"}, args...)...)
	return decodePlan(s.t, out)
}

// decodePlan reads plan -json's output, its addresses of the CLI's kinds.
func decodePlan(t *testing.T, out string) plans.Plan {
	t.Helper()
	var p plans.Plan
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatal(err)
	}
	if err := testOptions.Language.Kinds().Resolve(&p); err != nil {
		t.Fatal(err)
	}
	return p
}

// changed lists the changes of p that do something, each as line says.
func changed(p plans.Plan, line func(*plans.Change) string) []string {
	var got []string
	for _, c := range p.Changes {
		if c.Action != plans.NoOp {
			got = append(got, line(c))
		}
	}
	return got
}

// actionAddr is a change as "<action> <address>".
func actionAddr(c *plans.Change) string { return c.Action.String() + " " + c.Addr.String() }
