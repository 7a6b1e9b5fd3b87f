package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/consul/api"
	"github.com/provision-dev/provision/provision/plans"
	"github.com/provision-dev/provision/provision/servers"
)

// TestRecordAndHistory: against a real agent, apply -record adds its
// entries to the project's history once the apply completes, which
// provision history prints (text and JSON); a record file with a field
// of no entry, or an apply that could not hold the lock, is refused
// before anything is sent.
func TestRecordAndHistory(t *testing.T) {
	agent := servers.NewConsul(t)
	env := map[string]string{"CONSUL_HTTP_ADDR": agent.Addr}
	dir := t.TempDir()
	specs := filepath.Join(dir, "specs")
	os.MkdirAll(specs, 0o755)
	os.WriteFile(filepath.Join(specs, "main.hcl"), []byte("project = \"hist\"\n\nkey \"apps/hist/a\" {\n  value = \"1\"\n}\n"), 0o644)
	record := func(body string) string {
		path := filepath.Join(t.TempDir(), "record.json")
		os.WriteFile(path, []byte(body), 0o644)
		return path
	}
	client, err := api.NewClient(&api.Config{Address: agent.Addr})
	if err != nil {
		t.Fatal(err)
	}
	written := func() bool {
		pair, _, err := client.KV().Get("apps/hist/a", nil)
		if err != nil {
			t.Fatal(err)
		}
		return pair != nil
	}

	if code, out, errOut := runCLI(t, env, "history", specs); code != exitOK || !strings.Contains(out, `Project "hist" has no history`) {
		t.Fatalf("no history yet: exit %d\n%s%s", code, out, errOut)
	}
	for _, refused := range []struct {
		args []string
		says string
	}{
		{[]string{"-record", record(`{"commit": "m1", "pull_request": "1"}`)}, `unknown field "pull_request"`},
		{[]string{"-record", record(`[{"change": "1"}]`)}, "entry 1 has no commit"},
		{[]string{"-record", record(`{"commit": "m1"}`), "-lock=false"}, "Nowhere to keep the history"},
	} {
		code, out, errOut := runCLI(t, env, append(append([]string{"apply", "-auto-approve", "-no-color"}, refused.args...), specs)...)
		if code != exitError || !strings.Contains(errOut, refused.says) || !strings.Contains(errOut, "Nothing was sent") || written() {
			t.Errorf("apply %v: exit %d, written %v\n%s%s", refused.args, code, written(), out, errOut)
		}
	}

	if code, out, errOut := runCLI(t, env, "apply", "-auto-approve", "-no-color", "-record", record(`[{"commit": "m1", "change": "1", "digest": "0123456789abcdef0123", "job": "https://ci/1"}]`), specs); code != exitOK || !written() {
		t.Fatalf("apply -record: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut := runCLI(t, env, "history", specs)
	if code != exitOK || !strings.Contains(out, "APPLIED") || !strings.Contains(out, "m1  ") || !strings.Contains(out, "0123456789ab  https://ci/1") || strings.Contains(out, "0123456789abc") {
		t.Errorf("history: exit %d\n%s%s", code, out, errOut)
	}
	_, out, _ = runCLI(t, env, "history", "-json", specs)
	var h struct {
		Project string          `json:"project"`
		Kept    bool            `json:"kept"`
		Applied []plans.Applied `json:"applied"`
	}
	if err := json.Unmarshal([]byte(out), &h); err != nil || h.Project != "hist" || !h.Kept || len(h.Applied) != 1 || h.Applied[0].Change != "1" || h.Applied[0].At.IsZero() {
		t.Errorf("history -json: %v\n%s", err, out)
	}
}
