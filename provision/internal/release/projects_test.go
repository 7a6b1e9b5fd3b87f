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

// TestPipelineProjectsApart: a repository of two projects that call one
// shared module, each change planned and merged as each CI system runs
// the step, on a real Consul, and after every merge both projects plan no
// change (or only the broken one fails):
//   - a change of project a alone: a's comment shows it, b's says it has
//     no changes; merged, a's is applied;
//   - a change of the shared module: both comments show it; both applied;
//   - a change that breaks project b (and changes a): the plan and apply
//     jobs fail naming b, nothing of b is applied, a's change is; the fix,
//     merged after it, converges both;
//   - a change of a alone merged while another run holds b's lock: a's
//     is applied, and b, with nothing to apply, does not wait for it.
func TestPipelineProjectsApart(t *testing.T) {
	for _, system := range ciSystems(3) {
		t.Run(system.name, func(t *testing.T) {
			agent := servers.NewConsul(t)
			p := newPipeline(t, append(system.env, "CONSUL_HTTP_ADDR="+agent.Addr, "PROVISION_DIR=teams/*/specs", "PROVISION_LOCK_TIMEOUT=2s")...)
			os.RemoveAll(filepath.Join(p.work, "specs"))
			module := "variable \"team\" {\n  type = string\n}\n\nkey \"limits\" {\n  path  = \"apps/${var.team}/limits\"\n  value = file(\"${path.module}/limits.json\")\n}\n"
			team := func(name, own string) string {
				return fmt.Sprintf("project = %q\n\nmodule \"kv\" {\n  source = \"../../../modules/kv\"\n  team   = %q\n}\n\nkey \"apps/%s/own\" {\n  value = %q\n}\n", name, name, name, own)
			}
			files := map[string]string{".git/HEAD": "ref: refs/heads/main\n", "modules/kv/main.hcl": module, "modules/kv/limits.json": `{"rate": 10}`,
				"teams/a/specs/main.hcl": team("a", "1"), "teams/b/specs/main.hcl": team("b", "1")}
			write := func(change map[string]string) {
				for name, src := range change {
					files[name] = src
					path := filepath.Join(p.work, filepath.FromSlash(name))
					os.MkdirAll(filepath.Dir(path), 0o755)
					if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			write(files)
			// Main's first state, applied by hand.
			for _, project := range []string{"a", "b"} {
				if out, err := p.provision("apply", "-auto-approve", "teams/"+project+"/specs"); err != nil {
					t.Fatalf("the first apply of %s: %v\n%s", project, err, out)
				}
			}
			comments := func(n int) map[string]string {
				by := map[string]string{}
				for _, c := range p.api.posted(n) {
					for _, project := range []string{"a", "b"} {
						if strings.HasPrefix(c.Body, "<!-- provision-plan: teams/"+project+"/specs -->") {
							by[project] = c.Body
						}
					}
				}
				return by
			}
			// planJob runs pull request n's plan job on the files as they
			// are, and publishes its saved plans as the CI system keeps
			// them (GitHub: the one artifact; GitLab: the job's).
			planJob := func(n int, wantErr bool, says ...string) {
				t.Helper()
				head := fmt.Sprintf("head%d", n)
				env := []string{"CI_MERGE_REQUEST_IID=" + fmt.Sprint(n), "CI_COMMIT_SHA=" + head}
				if system.name == "github" {
					env = []string{p.pullRequest(n, head, "acme/specs")}
				} else {
					p.api.pull(n, head)
				}
				for _, old := range []string{"teams-a-specs.provision.plan", "teams-b-specs.provision.plan"} {
					os.Remove(filepath.Join(p.work, old))
				}
				out, err := p.run("plan", env...)
				if (err != nil) != wantErr {
					t.Fatalf("the plan job of #%d: %v\n%s", n, err, out)
				}
				logSays(t, fmt.Sprintf("the plan job of #%d", n), out, says...)
				saved := map[string][]byte{}
				for _, name := range []string{"teams-a-specs.provision.plan", "teams-b-specs.provision.plan"} {
					if b, err := os.ReadFile(filepath.Join(p.work, name)); err == nil {
						saved[name] = b
					}
				}
				p.api.upload(fmt.Sprintf("provision-plan-%d", n), "feature", head, saved)
			}
			mergeJob := func(n int, wantErr bool, says ...string) string {
				t.Helper()
				return p.mergeJob(n, fmt.Sprintf("m%d", n), wantErr, says...)
			}
			converged := func(projects ...string) {
				t.Helper()
				for _, project := range projects {
					if out, err := p.provision("plan", "-detailed-exitcode", "teams/"+project+"/specs"); err != nil {
						t.Errorf("project %s plans changes: %v\n%s", project, err, out)
					}
				}
			}

			// A change of project a alone.
			write(map[string]string{"teams/a/specs/main.hcl": team("a", "2")})
			planJob(1, false)
			c := comments(1)
			t.Logf("the comment of b, unchanged:\n%s", c["b"])
			if !strings.Contains(c["a"], `key["apps/a/own"]`) || !strings.Contains(c["b"], "No changes") || strings.Contains(c["b"], "apps/b/") {
				t.Errorf("the comments of a change of a alone:\n%v", c)
			}
			mergeJob(1, false)
			if consulGet(t, agent.Addr, "apps/a/own") != "2" {
				t.Error("a's change is not applied")
			}
			converged("a", "b")

			// A change of the shared module: both projects.
			write(map[string]string{"modules/kv/limits.json": `{"rate": 20}`})
			planJob(2, false)
			c = comments(2)
			t.Logf("the comments of a change of the shared module:\n%s\n\n%s", c["a"], c["b"])
			if !strings.Contains(c["a"], `apps/a/limits`) || !strings.Contains(c["b"], `apps/b/limits`) {
				t.Errorf("the comments of a change of the shared module:\n%v", c)
			}
			mergeJob(2, false)
			for _, project := range []string{"a", "b"} {
				if consulGet(t, agent.Addr, "apps/"+project+"/limits") != `{"rate": 20}` {
					t.Errorf("the shared module's change is not applied to %s", project)
				}
			}
			converged("a", "b")

			// A change that breaks b and changes a.
			write(map[string]string{"teams/a/specs/main.hcl": team("a", "3"), "teams/b/specs/main.hcl": team("b", "3") + "key {\n"})
			planJob(3, true, "plan_one failed for: teams/b/specs")
			mergeJob(3, true, "apply_one failed for: teams/b/specs")
			if consulGet(t, agent.Addr, "apps/a/own") != "3" || consulGet(t, agent.Addr, "apps/b/own") != "1" {
				t.Errorf("after the broken merge: a %q (want 3), b %q (want 1)", consulGet(t, agent.Addr, "apps/a/own"), consulGet(t, agent.Addr, "apps/b/own"))
			}
			converged("a")
			// Its fix, merged after it: both converge.
			write(map[string]string{"teams/b/specs/main.hcl": team("b", "3")})
			planJob(4, false)
			mergeJob(4, false)
			if consulGet(t, agent.Addr, "apps/b/own") != "3" {
				t.Error("the fix of b is not applied")
			}
			converged("a", "b")

			// A change of a alone while another run holds b's lock.
			defer holdLock(t, agent.Addr, "b")()
			write(map[string]string{"teams/a/specs/main.hcl": team("a", "5")})
			planJob(5, false)
			mergeJob(5, false)
			if consulGet(t, agent.Addr, "apps/a/own") != "5" {
				t.Error("a's change is not applied while b's lock is held")
			}
			converged("a", "b")
			// #4's comment on a still says the job that applied it.
			if c := comments(4)["a"]; !strings.Contains(c, "**Applied** after the merge at m4") {
				t.Errorf("#4's comment on a:\n%s", c)
			}
		})
	}
}
