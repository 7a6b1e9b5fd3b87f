package cli

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/provision-dev/provision/provision/plans"
	"github.com/provision-dev/provision/provision/search"
	"github.com/provision-dev/provision/provision/servers"
)

// TestBeatsDashboards: the 111 saved objects of elastic/beats-dashboards,
// loaded by that repository's own load.sh into a real Elasticsearch 2.4.1,
// are declared by four document blocks that read the files as they are
// (fileset, file, jsondecode) and taken over in place: the plan imports
// the index and each object and changes nothing else, and after the apply
// the plan is empty.
func TestBeatsDashboards(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("load.sh needs curl")
	}
	es := servers.NewCluster(t, "beats")
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("../../testdata/beats-dashboards")); err != nil {
		t.Fatal(err)
	}
	load := exec.Command("bash", "load.sh", "-url", es.URL, "-index", ".kibana")
	load.Dir = dir
	if out, err := load.CombinedOutput(); err != nil {
		t.Fatalf("load.sh: %v\n%s", err, out)
	}
	if resp, err := http.Post(es.URL+"/.kibana/_refresh", "application/json", nil); err != nil {
		t.Fatal(err)
	} else {
		resp.Body.Close()
	}
	env := map[string]string{"NO_COLOR": "1"}
	plan := func() plans.Plan {
		t.Helper()
		code, out, errOut := runCLI(t, env, "plan", "-json", "-var", "search_url="+es.URL, dir)
		if code != exitOK {
			t.Fatalf("plan: exit %d\n%s%s", code, out, errOut)
		}
		return decodePlan(t, out)
	}
	p := plan()
	byType := map[string]int{}
	for _, c := range p.Changes {
		if c.Action != plans.Import {
			t.Errorf("%s: %s (%s), want an import that changes nothing else", c.Addr, c.Action, c.Reason)
		}
		if c.Addr.Kind == search.Document {
			byType[strings.Split(c.Addr.Name, "/")[1]]++
		}
	}
	var warnings []string
	for _, d := range p.Diagnostics {
		warnings = append(warnings, d.Summary+": "+d.Detail)
	}
	t.Logf("after load.sh: %d imports (documents by type %v), warnings %q", p.Summary.Import, byType, warnings)
	if p.Summary.Import != 112 || byType["index-pattern"] != 4 || byType["search"] != 23 || byType["visualization"] != 75 || byType["dashboard"] != 9 {
		t.Fatalf("the plan imports %d objects (%v), want the index and 111 documents", p.Summary.Import, byType)
	}
	// The same in text, as a person reads it.
	last := func(out string) string {
		lines := strings.Split(strings.TrimSpace(out), "\n")
		return lines[len(lines)-1]
	}
	_, out, _ := runCLI(t, env, "plan", "-var", "search_url="+es.URL, dir)
	if last(out) != "Plan: 112 to import, 0 to create, 0 to update, 0 to delete." {
		t.Errorf("the text plan after load.sh ends %q", last(out))
	}
	t.Logf("plan: %s", last(out))
	code, out, errOut := runCLI(t, env, "apply", "-auto-approve", "-var", "search_url="+es.URL, dir)
	if code != exitOK || !strings.Contains(out, "Apply complete: 112 imported") {
		t.Fatalf("apply: exit %d\n%s%s", code, out, errOut)
	}
	t.Logf("apply: %s", last(out))
	if p := plan(); p.Summary.HasChanges() || p.Summary.NoOp != 112 {
		t.Fatalf("after the apply: %+v, want 112 objects up to date", p.Summary)
	}
	code, out, _ = runCLI(t, env, "plan", "-detailed-exitcode", "-var", "search_url="+es.URL, dir)
	if code != exitOK || !strings.Contains(out, "No changes. The live state matches the specs (112 objects up to date).") {
		t.Errorf("the converged plan: exit %d\n%s", code, out)
	}
	t.Logf("converged: %s", strings.SplitN(strings.TrimSpace(out), "\n", 2)[0])
	// The files are the declarations: one edited is one update.
	path := filepath.Join(dir, "dashboards", "dashboard", "Packetbeat-HTTP.json")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(b), `"title": "Packetbeat HTTP"`, `"title": "HTTP"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	var updates []string
	for _, c := range plan().Changes {
		if c.Action != plans.NoOp {
			updates = append(updates, c.Action.String()+" "+c.Addr.String())
		}
	}
	if strings.Join(updates, ";") != `update document[".kibana/dashboard/Packetbeat-HTTP"]` {
		t.Errorf("after an edit of one file: %q, want its document's update", updates)
	}
	// A file changed after plan -out makes the saved plan stale.
	saved := filepath.Join(t.TempDir(), "edit.plan")
	if code, out, errOut := runCLI(t, env, "plan", "-out", saved, "-var", "search_url="+es.URL, dir); code != exitOK {
		t.Fatalf("plan -out: exit %d\n%s%s", code, out, errOut)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(b), `"title": "Packetbeat HTTP"`, `"title": "HTTP, again"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := runCLI(t, env, "apply", "-var", "search_url="+es.URL, saved); code != exitError || !strings.Contains(errOut, "is not what the specs") {
		t.Errorf("apply of a saved plan after its file changed: exit %d\n%s%s", code, out, errOut)
	}
}
