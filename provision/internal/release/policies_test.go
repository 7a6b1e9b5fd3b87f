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

// TestPipelinePolicies: the repository's policies (PROVISION_POLICIES)
// on every plan of the pipeline step, as each CI system runs it, on a
// real Consul:
//   - a pull request whose plan fails a mandatory_overridable policy: the
//     job fails, its comment has the policy's section and says how an
//     owner may override it;
//   - an override by someone who is not an owner changes nothing; one by
//     an owner (GitHub: a member of the listed team; GitLab: a listed
//     user), bound to the plan's digest, lets the re-run pass, and the
//     comment records who and why;
//   - a new push (another digest): the override no longer holds; a push
//     back to the changes it was of: it holds again;
//   - the merge applies the overridden plan, with the override found
//     again on the pull request;
//   - a plan that fails a mandatory policy, merged: the apply job refuses
//     it and sends nothing.
func TestPipelinePolicies(t *testing.T) {
	for _, system := range ciSystems(9) {
		t.Run(system.name, func(t *testing.T) {
			agent := servers.NewConsul(t)
			p := newPipeline(t, append(system.env, "CONSUL_HTTP_ADDR="+agent.Addr, "PROVISION_POLICIES=policies", "PROVISION_POLICY_OWNERS="+owners(system.name))...)
			p.api.team("acme/platform", "alice")
			os.MkdirAll(filepath.Join(p.work, "policies"), 0o755)
			policy := `resource_policy "service" "team" {
  enforcement_level = "mandatory_overridable"
  enforce {
    condition     = contains(keys(attrs.meta), "team")
    error_message = "Every service names its team; ${attrs.id} does not."
  }
}

resource_policy "key" "no_secrets" {
  enforce {
    condition     = !startswith(attrs.path, "secrets/")
    error_message = "No key under secrets/: ${attrs.path}."
  }
}
`
			if err := os.WriteFile(filepath.Join(p.work, "policies", "org.policy.hcl"), []byte(policy), 0o644); err != nil {
				t.Fatal(err)
			}
			spec := func(port int, extra string) string {
				return fmt.Sprintf("project = \"ci\"\n\nservice \"jobs\" {\n  port = %d\n}\n%s", port, extra)
			}
			planJob := func(n int, sha string, wantErr bool, says ...string) (string, string) {
				t.Helper()
				env := []string{"CI_MERGE_REQUEST_IID=" + fmt.Sprint(n), "CI_COMMIT_SHA=" + sha}
				if system.name == "github" {
					env = []string{p.pullRequest(n, sha, "acme/specs")}
				} else {
					p.api.pull(n, sha)
				}
				out, err := p.run("plan", env...)
				t.Logf("the plan job of #%d at %s: exit %v; requests:\n%s\n%s", n, sha, err, p.api.took(), out)
				if (err != nil) != wantErr {
					t.Fatalf("the plan job: %v\n%s", err, out)
				}
				logSays(t, "the plan job", out, says...)
				var mine []string // the step's, among the owners'
				for _, c := range p.api.posted(n) {
					if strings.HasPrefix(c.Body, marker) {
						mine = append(mine, c.Body)
					}
				}
				if len(mine) != 1 {
					t.Fatalf("%d plan comments on #%d, want one", len(mine), n)
				}
				return out, mine[0]
			}

			p.specs(spec(9000, ""))
			_, body := planJob(4, "head4a", true)
			for _, want := range []string{"#### Policies", "service.team (mandatory_overridable) fails on 1 object", "`service.jobs` (create): Every service names its team; jobs does not.",
				"**Mandatory policies fail** (below).", "may let these failures (service.team) through for exactly these changes, once: a comment `/provision override "} {
				if !strings.Contains(body, want) {
					t.Errorf("the comment lacks %q:\n%s", want, body)
				}
			}
			digest := between(body, "<!-- provision-changes: ", " -->")

			// Not an owner: nothing changes.
			p.api.says(4, "mallory", "/provision override "+digest+" trust me")
			planJob(4, "head4a", true)
			// An owner, bound to the digest: the re-run passes.
			p.api.says(4, "alice", "/provision override "+digest+" hotfix for INC-7, the team is set next week")
			_, body = planJob(4, "head4a", false, "alice let service.team through for these changes (hotfix for INC-7, the team is set next week): planning again with -policy-override=service.team")
			for _, want := range []string{"**Policies overridden**: @alice let service.team through for these changes (digest `" + digest + "`): hotfix for INC-7, the team is set next week",
				"service.team (mandatory_overridable, overridden) fails on 1 object"} {
				if !strings.Contains(body, want) {
					t.Errorf("the comment lacks %q:\n%s", want, body)
				}
			}
			// Another push, other changes: the override was of the others.
			// A push back to the changes it was of: it holds again.
			p.specs(spec(9001, ""))
			planJob(4, "head4b", true)
			p.specs(spec(9000, ""))
			planJob(4, "head4c", false, "alice let service.team through for these changes")
			saved, err := os.ReadFile(filepath.Join(p.work, "provision.plan"))
			if err != nil {
				t.Fatal(err)
			}

			// The merge applies the plan the owner let through.
			p.api.upload("provision-plan-4", "pr", "head4c", map[string][]byte{"provision.plan": saved})
			out, err := p.merge(4, "merge4")
			if err != nil || !strings.Contains(out, "alice let service.team through for these changes: hotfix for INC-7") {
				t.Fatalf("the merge of #4: %v\n%s", err, out)
			}
			client, _ := api.NewClient(&api.Config{Address: agent.Addr})
			if s, _, err := client.Agent().Service("jobs", nil); err != nil || s.Port != 9000 {
				t.Errorf("jobs after the merge: %v %v", s, err)
			}

			// A mandatory failure: planned, saved, merged; the apply refuses.
			p.specs(spec(9000, "\nkey \"secrets/db\" {\n  value = \"x\"\n}\n"))
			_, body = planJob(5, "head5", true)
			if !strings.Contains(body, "key.no_secrets (mandatory) fails on 1 object") || strings.Contains(body, "may let these failures") {
				t.Errorf("the comment of a mandatory failure:\n%s", body)
			}
			saved, err = os.ReadFile(filepath.Join(p.work, "provision.plan"))
			if err != nil {
				t.Fatal(err)
			}
			p.api.upload("provision-plan-5", "pr", "head5", map[string][]byte{"provision.plan": saved})
			out, err = p.merge(5, "merge5")
			if err == nil || !strings.Contains(out, "the reviewed plan of #5 fails mandatory policies (key.no_secrets), which no one may override: nothing is applied") {
				t.Errorf("the merge of a plan that fails a mandatory policy: %v\n%s", err, out)
			}
			if pair, _, _ := client.KV().Get("secrets/db", nil); pair != nil {
				t.Errorf("the key was written: %v", pair)
			}
		})
	}
}

// owners is PROVISION_POLICY_OWNERS on each system: a GitHub team, a
// GitLab username.
func owners(system string) string {
	if system == "github" {
		return "acme/platform"
	}
	return "alice"
}
