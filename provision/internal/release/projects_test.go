package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/consul/api"
	"github.com/provision-dev/provision/provision/servers"
)

// TestPipelineManyProjects: one repository of two projects that call one
// module kept at its top (teams/a/specs, teams/b/specs, modules/kv),
// PROVISION_DIR a glob, on a real Consul as GitHub runs the step: the
// pull request's plan job plans each project, with a comment of its own
// and a saved plan of its own (uploaded as the action does, in the one
// artifact); the merge's job applies each project's reviewed plan, and
// both then plan no change. A third folder that declares a project of
// the others is refused before anything is planned.
func TestPipelineManyProjects(t *testing.T) {
	agent := servers.NewConsul(t)
	p := newPipeline(t, "GITHUB_ACTIONS=true", "GITHUB_REPOSITORY=acme/specs", "CONSUL_HTTP_ADDR="+agent.Addr, "PROVISION_DIR=teams/*/specs")
	if err := os.RemoveAll(filepath.Join(p.work, "specs")); err != nil {
		t.Fatal(err)
	}
	kv := "variable \"team\" {\n  type = string\n}\n\nkey \"limits\" {\n  path  = \"apps/${var.team}/limits\"\n  value = file(\"${path.module}/limits.json\")\n}\n"
	team := func(name string) string {
		return fmt.Sprintf("project = %q\n\nmodule \"kv\" {\n  source = \"../../../modules/kv\"\n  team   = %q\n}\n", name, name)
	}
	for name, src := range map[string]string{".git/HEAD": "ref: refs/heads/main\n", "modules/kv/main.hcl": kv, "modules/kv/limits.json": `{"rate": 10}`,
		"teams/a/specs/main.hcl": team("a"), "teams/b/specs/main.hcl": team("b")} {
		path := filepath.Join(p.work, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	out, err := p.run("plan", p.pullRequest(5, "head5", "acme/specs"))
	if err != nil {
		t.Fatalf("the plan job: %v\n%s", err, out)
	}
	posted := p.api.posted(5)
	if len(posted) != 2 {
		t.Fatalf("%d comments on #5, want one a project:\n%s", len(posted), out)
	}
	artifact := map[string][]byte{}
	for _, project := range []string{"a", "b"} {
		marker := "<!-- provision-plan: teams/" + project + "/specs -->"
		found := false
		for _, c := range posted {
			found = found || strings.HasPrefix(c.Body, marker) && strings.Contains(c.Body, `key["apps/`+project+`/limits"]`)
		}
		if !found {
			t.Errorf("no comment of project %s:\n%v", project, posted)
		}
		name := "teams-" + project + "-specs.provision.plan"
		b, err := os.ReadFile(filepath.Join(p.work, name))
		if err != nil {
			t.Fatalf("project %s has no saved plan of its own: %v", project, err)
		}
		artifact[name] = b
	}
	p.api.upload("provision-plan-5", "feature", "head5", artifact)
	p.api.merge("merge5", 5)
	out, err = p.run("apply", "GITHUB_SHA=merge5", p.event(map[string]any{"ref": "refs/heads/main"}))
	if err != nil || strings.Count(out, "applied the plan #5 reviewed") != 2 {
		t.Fatalf("the apply job: %v\n%s", err, out)
	}
	client, err := api.NewClient(&api.Config{Address: agent.Addr})
	if err != nil {
		t.Fatal(err)
	}
	for _, project := range []string{"a", "b"} {
		pair, _, err := client.KV().Get("apps/"+project+"/limits", nil)
		if err != nil || pair == nil || string(pair.Value) != `{"rate": 10}` {
			t.Errorf("apps/%s/limits after the merge: %v %v", project, pair, err)
		}
		if out, err := p.provision("plan", "-detailed-exitcode", "teams/"+project+"/specs"); err != nil {
			t.Errorf("project %s plans changes after the merge: %v\n%s", project, err, out)
		}
	}

	// A folder that declares a project of another: refused, nothing planned.
	os.MkdirAll(filepath.Join(p.work, "teams", "c", "specs"), 0o755)
	os.WriteFile(filepath.Join(p.work, "teams", "c", "specs", "main.hcl"), []byte(team("a")), 0o644)
	out, err = p.run("plan", p.pullRequest(6, "head6", "acme/specs"))
	if err == nil || !strings.Contains(out, `teams/a/specs and teams/c/specs both declare project "a"`) || len(p.api.posted(6)) != 0 {
		t.Errorf("two folders of one project: %v, %d comments\n%s", err, len(p.api.posted(6)), out)
	}
}
