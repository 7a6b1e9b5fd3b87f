package cli

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/provision-dev/provision/provision/servers"
)

// TestAllowedServers: with PROVISION_ALLOWED_SERVERS naming the real
// agent, a spec that declares an agent, and a search cluster, elsewhere
// (a pull request's, say) is refused at its block, and the listener there
// receives no request with a credential; the real agent is planned with
// its token.
func TestAllowedServers(t *testing.T) {
	agent := servers.NewConsul(t)
	var mu sync.Mutex
	var got []string
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Method+" "+r.URL.Path+" token="+r.Header.Get("X-Consul-Token")+" auth="+r.Header.Get("Authorization"))
		mu.Unlock()
		w.Write([]byte("{}"))
	}))
	defer elsewhere.Close()
	t.Setenv("CONSUL_HTTP_ADDR", agent.Addr)
	t.Setenv("CONSUL_HTTP_TOKEN", "canary-token-3c1f")
	t.Setenv("ELASTICSEARCH_PASSWORD", "canary-password-8b2d")
	t.Setenv("ELASTICSEARCH_USERNAME", "elastic")
	t.Setenv("PROVISION_ALLOWED_SERVERS", agent.Addr)
	plan := func(src string) (int, string) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "main.hcl"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		var out, errOut bytes.Buffer
		code := testCLI(strings.NewReader(""), &out, &errOut).run([]string{"plan", "-no-color", dir})
		return code, out.String() + errOut.String()
	}
	code, out := plan("project = \"allowed\"\nservice \"web\" {\n  port = 8080\n}\n")
	if code != 0 {
		t.Fatalf("the allowed agent: exit %d\n%s", code, out)
	}
	code, out = plan("project = \"allowed\"\nagent \"x\" {\n  address = \"" + elsewhere.URL + "\"\n}\nservice \"web\" {\n  agent = \"x\"\n  port = 8080\n}\n")
	if code != 1 || !strings.Contains(out, "Error: Server not allowed") || !strings.Contains(out, "on ") || strings.Contains(out, "canary") {
		t.Errorf("an agent elsewhere: exit %d\n%s", code, out)
	}
	code, out = plan("project = \"allowed\"\nsearch \"t1\" {\n  url          = \"" + elsewhere.URL + "\"\n  cluster_name = \"t1\"\n}\nindex \".dashboard\" {\n  search = \"t1\"\n  mapping \"search\" {\n    properties = { title = \"string\" }\n  }\n}\n")
	if code != 1 || !strings.Contains(out, "PROVISION_ALLOWED_SERVERS") || strings.Contains(out, "canary") {
		t.Errorf("a search cluster elsewhere: exit %d\n%s", code, out)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, r := range got {
		if strings.Contains(r, "canary") || strings.Contains(r, "Basic") {
			t.Errorf("the listener elsewhere received a credential: %s", r)
		}
	}
	t.Logf("requests elsewhere: %q", got)
}
