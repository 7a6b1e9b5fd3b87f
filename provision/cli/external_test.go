package cli

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/provision-dev/provision/provision/servers"
)

// TestExternalNodes registers services of a host that runs no agent on
// an external node, through a real Consul server's catalog: read back,
// converged, still there after an anti-entropy round (which, in the same
// round, removes a catalog registration made on a node that runs an
// agent: why such a node is refused), then deleted, the node with its
// last service.
func TestExternalNodes(t *testing.T) {
	server := servers.NewConsul(t)
	dir := t.TempDir()
	write := func(node string, services ...string) {
		t.Helper()
		var b strings.Builder
		fmt.Fprintf(&b, "project = \"legacy\"\n\nconsul {\n  address = %q\n}\n", server.Addr)
		for i, s := range services {
			fmt.Fprintf(&b, `
service %q {
  node    = %q
  address = "10.0.0.50"
  port    = %d

  check "tcp" {
    tcp      = "10.0.0.50:%d"
    interval = "10s"
  }
}
`, s, node, 5432+i, 5432+i)
		}
		if err := os.WriteFile(filepath.Join(dir, "main.hcl"), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	get := func(path string, v any) {
		t.Helper()
		resp, err := http.Get("http://" + server.Addr + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
			t.Fatal(err)
		}
	}
	type nodeServices struct {
		Node     *struct{ Meta map[string]string }
		Services []struct {
			ID   string
			Meta map[string]string
		}
	}
	onNode := func(node string) (ids []string, meta map[string]string) {
		t.Helper()
		var ns nodeServices
		get("/v1/catalog/node-services/"+node, &ns)
		for _, s := range ns.Services {
			ids = append(ids, s.ID+" "+s.Meta["provision-project"])
		}
		slices.Sort(ids)
		if ns.Node != nil {
			meta = ns.Node.Meta
		}
		return ids, meta
	}
	env := map[string]string{}

	t.Run("registered through the catalog", func(t *testing.T) {
		write("legacy-host", "db", "cache")
		out := applied(t, env, dir)
		containsAll(t, "apply output", out, "service.db: PUT /v1/catalog/register: ok", "service.cache: PUT /v1/catalog/register: ok", "Apply complete: 2 created, 0 updated, 0 deleted.")
		ids, meta := onNode("legacy-host")
		if diff := cmp.Diff([]string{"cache legacy", "db legacy"}, ids); diff != "" {
			t.Errorf("the node's services (-want +got):\n%s", diff)
		}
		if meta["external-node"] != "true" || meta["external-probe"] != "true" {
			t.Errorf("node meta %v, want external-node and external-probe for consul-esm", meta)
		}
		var checks []struct{ CheckID, ServiceID, Type string }
		get("/v1/health/node/legacy-host", &checks)
		if len(checks) != 2 || checks[0].Type != "tcp" {
			t.Errorf("the node's checks: %+v, want one tcp check per service", checks)
		}
		if code, out, errOut := runCLI(t, env, "plan", "-detailed-exitcode", dir); code != exitOK {
			t.Fatalf("converged plan: exit %d\n%s%s", code, out, errOut)
		}
	})

	var self struct{ Config struct{ NodeName string } }
	get("/v1/agent/self", &self)
	member := self.Config.NodeName

	t.Run("a node that runs an agent is refused", func(t *testing.T) {
		write(member, "db", "cache")
		code, _, errOut := runCLI(t, env, "plan", dir)
		if code != exitError || !strings.Contains(errOut, "External node runs an agent") || !strings.Contains(errOut, "main.hcl line 8") {
			t.Fatalf("plan on the agent's node %s: exit %d\n%s", member, code, errOut)
		}
		write("legacy-host", "db", "cache")
	})

	t.Run("anti-entropy leaves an external node alone", func(t *testing.T) {
		// What the refusal saves: a catalog registration on the agent's
		// node goes at the agent's next sync (here at once: the change
		// itself starts one; otherwise within its minute).
		body := fmt.Sprintf(`{"Node":%q,"Address":"127.0.0.1","Service":{"ID":"stray","Service":"stray","Port":1}}`, member)
		req, _ := http.NewRequest(http.MethodPut, "http://"+server.Addr+"/v1/catalog/register", strings.NewReader(body))
		if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("registering on the agent's node: %v %v", err, resp)
		}
		deadline := time.Now().Add(150 * time.Second)
		for {
			ids, _ := onNode(member)
			if !slices.Contains(ids, "stray ") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the agent's anti-entropy did not remove the catalog registration on its node: %v", ids)
			}
			time.Sleep(time.Second)
		}
		if ids, _ := onNode("legacy-host"); len(ids) != 2 {
			t.Errorf("after the agent's sync, the external node holds %v", ids)
		}
		if code, out, errOut := runCLI(t, env, "plan", "-detailed-exitcode", dir); code != exitOK {
			t.Fatalf("plan after an anti-entropy round: exit %d\n%s%s", code, out, errOut)
		}
	})

	t.Run("deleted, the node with its last service", func(t *testing.T) {
		write("legacy-host", "db")
		out := applied(t, env, dir)
		containsAll(t, "apply output", out, "service.cache: PUT /v1/catalog/deregister: ok", "0 created, 0 updated, 1 deleted.")
		if ids, _ := onNode("legacy-host"); !slices.Equal(ids, []string{"db legacy"}) {
			t.Errorf("the node holds %v, want db alone", ids)
		}
		// The last service's block removed and a key added: an apply of
		// the key alone (a plan saved with -target, whose apply takes no
		// -target of its own) leaves db as it is, and the record keeps
		// the catalog, so that the next plan still deletes db (it forgot
		// it, and db stayed for good).
		write("legacy-host")
		f, err := os.OpenFile(filepath.Join(dir, "main.hcl"), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprint(f, "\nkey \"apps/legacy/flag\" {\n  value = \"on\"\n}\n")
		f.Close()
		saved := filepath.Join(t.TempDir(), "key.plan")
		if code, out, errOut := runCLI(t, env, "plan", "-target", `key["apps/legacy/flag"]`, "-out", saved, dir); code != 0 {
			t.Fatalf("plan -target -out: exit %d\n%s%s", code, out, errOut)
		}
		code, out, errOut := runCLI(t, env, "apply", saved)
		if code != 0 {
			t.Fatalf("apply of the targeted plan: exit %d\n%s%s", code, out, errOut)
		}
		containsAll(t, "the targeted apply", out, "1 created, 0 updated, 0 deleted.")
		if ids, _ := onNode("legacy-host"); !slices.Equal(ids, []string{"db legacy"}) {
			t.Errorf("the node holds %v after the targeted apply, want db alone", ids)
		}
		out = applied(t, env, dir)
		containsAll(t, "the apply after it", out, "service.db: PUT /v1/catalog/deregister: ok", "0 created, 0 updated, 1 deleted.")
		if ids, meta := onNode("legacy-host"); len(ids) != 0 || meta != nil {
			t.Errorf("the node is still there: %v %v", ids, meta)
		}
	})
}
