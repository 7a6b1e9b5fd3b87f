package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/consul/api"
	"github.com/provision-dev/provision/provision/servers"
)

// keysSpec is a project of Consul KV keys alone, one key a line of keys
// (path = value).
func keysSpec(keys ...string) string {
	var b strings.Builder
	b.WriteString("project = \"ci\"\n")
	for _, k := range keys {
		path, value, _ := strings.Cut(k, "=")
		fmt.Fprintf(&b, "\nkey %q {\n  value = %q\n}\n", "apps/ci/"+path, value)
	}
	return b.String()
}

// specs makes the job's specs folder hold src alone (main.hcl).
func (p *pipeline) specs(src string) {
	dir := filepath.Join(p.work, "specs")
	if err := os.RemoveAll(dir); err != nil {
		p.t.Fatal(err)
	}
	os.MkdirAll(dir, 0o755)
	if err := os.WriteFile(filepath.Join(dir, "main.hcl"), []byte(src), 0o644); err != nil {
		p.t.Fatal(err)
	}
}

// provision runs the provision binary in the job's folder, as a person or
// another job would.
func (p *pipeline) provision(args ...string) (string, error) {
	cmd := exec.Command(filepath.Join(provisionBin(p.t), "provision"), args...)
	cmd.Dir, cmd.Env = p.work, p.env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// reviewed runs pull request n's plan job on src, as the CI system runs
// it (its comment posted, its saved plan uploaded as the action uploads
// it: provision-plan-N), in a folder of its own; the plan names its specs
// folder as given, specs, so that the merge's job loads its own.
func (p *pipeline) reviewed(n int, from, src string, env ...string) {
	p.t.Helper()
	head := &pipeline{t: p.t, work: p.t.TempDir(), dir: p.dir, api: p.api, env: p.env}
	head.specs(src)
	sha := fmt.Sprintf("head%d", n)
	if gitlab := slices.Contains(p.env, "GITLAB_CI=true"); gitlab {
		p.api.pull(n, sha)
		env = append(env, "CI_MERGE_REQUEST_IID="+fmt.Sprint(n), "CI_COMMIT_SHA="+sha)
	} else {
		env = append(env, head.pullRequest(n, sha, from))
	}
	if out, err := head.run("plan", env...); err != nil {
		p.t.Fatalf("the plan job of #%d: %v\n%s", n, err, out)
	}
	b, err := os.ReadFile(filepath.Join(head.work, "provision.plan"))
	if err != nil {
		p.t.Fatal(err)
	}
	p.api.upload(fmt.Sprintf("provision-plan-%d", n), "pr", sha, map[string][]byte{"provision.plan": b})
}

// merge runs the apply job of a push to main at sha that merged pull
// request n (none when n is 0).
func (p *pipeline) merge(n int, sha string, env ...string) (string, error) {
	p.api.push(sha)
	if n > 0 {
		p.api.merge(sha, n)
	}
	return p.run("apply", append([]string{"GITHUB_SHA=" + sha, "CI_COMMIT_SHA=" + sha, p.event(map[string]any{"ref": "refs/heads/main"})}, env...)...)
}

// converged says whether the job's specs plan no change against live.
func (p *pipeline) converged() bool {
	p.t.Helper()
	out, err := p.provision("plan", "-detailed-exitcode", "specs")
	if err != nil && !strings.Contains(err.Error(), "exit status 2") {
		p.t.Fatalf("plan: %v\n%s", err, out)
	}
	return err == nil
}

// TestPipelineMerges runs the plan and apply jobs on a real Consul as
// GitHub runs them, merge after merge, and after every green job holds
// the default branch's specs to the live agent (they plan no change):
//   - two pull requests planned together and merged in turn: the second's
//     saved plan is refused (the specs moved), the merge commit makes
//     exactly its reviewed changes, and is applied;
//   - a reviewed plan whose changes the merge commit no longer makes
//     (live moved under it): nothing is applied, the job fails, and the
//     new plan is on the pull request; the job's re-run applies it;
//   - a direct push: checked by default (a red job when it plans any
//     change), applied with PROVISION_ON_PUSH=apply;
//   - a merge under a held lock: a red job that says so, green re-run.
//
// Each step's requests to the API are logged: the closing note's table.
func TestPipelineMerges(t *testing.T) {
	agent := servers.NewConsul(t)
	live := "CONSUL_HTTP_ADDR=" + agent.Addr
	p := newPipeline(t, "GITHUB_ACTIONS=true", "GITHUB_REPOSITORY=acme/specs", live)
	step := func(what string, out string, err error, wantErr bool, says ...string) {
		t.Helper()
		took := p.api.took()
		var said []string
		for _, line := range strings.Split(out, "\n") {
			if strings.HasPrefix(line, "provision-ci: ") {
				said = append(said, line)
			}
		}
		t.Logf("%s: exit %v; requests:\n%s\nthe step said:\n%s", what, err, took, strings.Join(said, "\n"))
		if (err != nil) != wantErr {
			t.Fatalf("%s: %v\n%s", what, err, out)
		}
		for _, s := range says {
			if !strings.Contains(out, s) {
				t.Fatalf("%s: the log lacks %q:\n%s", what, s, out)
			}
		}
		if !wantErr && !p.converged() {
			t.Fatalf("%s: after a green job, main plans changes", what)
		}
	}
	applied := func(n int, what string) {
		t.Helper()
		if _, body := only(t, p.api, n); !strings.Contains(body, "**Applied** after the merge") || !strings.Contains(body, what) || strings.Count(body, "provision-status") != 1 {
			t.Errorf("the comment on #%d does not say it was applied (%s):\n%s", n, what, body)
		}
	}

	// #1 adds a, #2 adds b, both planned from main with neither.
	p.reviewed(1, "acme/specs", keysSpec("a=1"))
	p.reviewed(2, "acme/specs", keysSpec("b=1"))
	p.api.took()
	p.specs(keysSpec("a=1"))
	out, err := p.merge(1, "m1")
	step("merge #1", out, err, false, "applied the plan #1 reviewed")
	applied(1, "the plan reviewed here")
	p.specs(keysSpec("a=1", "b=1"))
	out, err = p.merge(2, "m2")
	step("merge #2, planned beside #1", out, err, false, "main.hcl changed", "applied the merge commit's plan, which makes exactly the changes #2 shows")
	applied(2, "the merge commit's plan")

	// #3 sets b to 2 and adds c; someone sets b to 2 by hand before the
	// merge, and #3's reviewed changes are no longer what the merge makes.
	// Someone else's comment that looks like the step's, posted first, is
	// neither read nor edited.
	forged := marker + "\n<!-- provision-changes: 0123abcd -->\nLooks like a plan."
	p.api.someoneSays(3, forged)
	p.reviewed(3, "acme/specs", keysSpec("a=1", "b=2", "c=1"))
	p.api.took()
	consulPut(t, agent.Addr, "apps/ci/b", "2")
	p.specs(keysSpec("a=1", "b=2", "c=1"))
	out, err = p.merge(3, "m3")
	step("merge #3, its reviewed changes moved", out, err, true, "planning the merge commit again")
	if _, body := only(t, p.api, 3); !strings.Contains(body, "the merge commit plans other changes") || !strings.Contains(body, "apps/ci/c") || strings.Contains(body, "**Applied**") {
		t.Errorf("the comment on #3:\n%s", body)
	}
	if consulGet(t, agent.Addr, "apps/ci/c") != "" {
		t.Error("the failed merge job wrote c")
	}
	// Its re-run, once the team has read the new plan on #3: applied.
	out, err = p.merge(3, "m3")
	step("re-run of #3's job", out, err, false, "applied the merge commit's plan, which makes exactly the changes #3 shows")
	applied(3, "the merge commit's plan")
	if c := p.api.posted(3)[0]; c.Body != forged {
		t.Errorf("someone else's comment was edited:\n%s", c.Body)
	}

	// A direct push, checked (the default): red, nothing written.
	p.specs(keysSpec("a=1", "b=2", "c=1", "d=1"))
	out, err = p.merge(0, "direct1")
	step("a direct push, checked", out, err, true, "merged no pull request, and the default branch plans the changes above")
	if consulGet(t, agent.Addr, "apps/ci/d") != "" {
		t.Fatal("a checked push wrote d")
	}
	// Applied when the team says so: live is main again.
	out, err = p.merge(0, "direct2", "PROVISION_ON_PUSH=apply")
	step("a direct push, on-push: apply", out, err, false)

	// #4, merged while another run holds the project's lock past the
	// timeout: a red job that says so; re-run once the lock is free, green.
	p.reviewed(4, "acme/specs", keysSpec("a=1", "b=2", "c=1", "d=1", "e=1"))
	p.api.took()
	p.specs(keysSpec("a=1", "b=2", "c=1", "d=1", "e=1"))
	release := holdLock(t, agent.Addr, "ci")
	out, err = p.merge(4, "m4", "PROVISION_LOCK_TIMEOUT=2s")
	step("merge #4 under a held lock", out, err, true, "waiting up to 2s for the project's lock", "the project's lock was held by another run for all of 2s")
	release()
	out, err = p.merge(4, "m4", "PROVISION_LOCK_TIMEOUT=2s")
	step("re-run of #4's job, the lock free", out, err, false, "applied the plan #4 reviewed")
	applied(4, "the plan reviewed here")

	// #5, from a fork: planned from the snapshot main's job published
	// (the job's summary, no comment), merged: its snapshot plan is never
	// applied, the merge commit's plan makes the same changes, and is.
	out, err = p.run("snapshot")
	step("the snapshot job on main", out, err, false)
	snap, _ := os.ReadFile(filepath.Join(p.work, "provision-snapshot.json"))
	p.api.upload("provision-snapshot", "main", "direct2", map[string][]byte{"provision-snapshot.json": snap})
	p.reviewed(5, "someone/specs", keysSpec("a=1", "b=2", "c=1", "d=1", "e=1", "f=1"))
	if posted := p.api.posted(5); len(posted) != 0 || !strings.Contains(p.summary(), "Planned without credentials") {
		t.Fatalf("the fork's plan job commented %v; its summary:\n%s", posted, p.summary())
	}
	p.api.took()
	p.specs(keysSpec("a=1", "b=2", "c=1", "d=1", "e=1", "f=1"))
	out, err = p.merge(5, "m5")
	step("merge #5, from a fork", out, err, false, "A plan made from a snapshot is never applied", "applied the merge commit's plan, which makes exactly the changes #5 shows")
}

// TestPipelineGitLabMerge: a merge request planned and merged as GitLab
// runs the template's jobs, on a real Consul; its note says it was
// applied.
func TestPipelineGitLabMerge(t *testing.T) {
	agent := servers.NewConsul(t)
	p := newPipeline(t, "GITLAB_CI=true", "CI_DEFAULT_BRANCH=main", "CI_JOB_URL=https://gitlab.example/acme/specs/-/jobs/9", "CONSUL_HTTP_ADDR="+agent.Addr)
	p.reviewed(6, "acme/specs", keysSpec("x=1"))
	p.specs(keysSpec("x=1"))
	out, err := p.merge(6, "m6")
	if err != nil || consulGet(t, agent.Addr, "apps/ci/x") != "1" || !p.converged() {
		t.Fatalf("%v\n%s", err, out)
	}
	if _, body := only(t, p.api, 6); !strings.Contains(body, "**Applied** after the merge at m6: the plan reviewed here ([the job](https://gitlab.example/acme/specs/-/jobs/9))") {
		t.Errorf("the note:\n%s", body)
	}
	took := p.api.took()
	for _, want := range []string{"GET /api/v4/projects/5/repository/commits/m6/merge_requests 200", "GET /api/v4/projects/5/jobs/", "PUT /api/v4/projects/5/merge_requests/6/notes/"} {
		if !strings.Contains(took, want) {
			t.Errorf("no %q among the requests:\n%s", want, took)
		}
	}
}

// holdLock takes project's lock on the agent at addr, as another run
// would, until the returned func releases it.
func holdLock(t *testing.T, addr, project string) func() {
	t.Helper()
	client, err := api.NewClient(&api.Config{Address: addr})
	if err != nil {
		t.Fatal(err)
	}
	held, err := client.LockKey("provision/locks/" + project)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := held.Lock(nil); err != nil {
		t.Fatal(err)
	}
	return func() { held.Unlock() }
}

// consulPut writes a key by hand, as a person would with curl.
func consulPut(t *testing.T, addr, key, value string) {
	t.Helper()
	if code, answer := servers.Curl(t, "PUT", "http://"+addr+"/v1/kv/"+key, value); code != 200 {
		t.Fatalf("PUT %s: %d %s", key, code, answer)
	}
}

// consulGet reads a key's value; "" when there is none.
func consulGet(t *testing.T, addr, key string) string {
	t.Helper()
	code, answer := servers.Curl(t, "GET", "http://"+addr+"/v1/kv/"+key+"?raw", "")
	if code == 404 {
		return ""
	}
	return answer
}

// manyKeys is a project of n keys, each with a value of some length:
// a plan larger than one GitHub comment when n is a few hundred.
func manyKeys(n int) string {
	return fmt.Sprintf("project = \"ci\"\n\nkey \"apps/ci/many\" {\n  for_each = toset([for i in range(%d) : format(\"k%%03d\", i)])\n  path     = \"apps/ci/many/${each.key}\"\n  value    = \"%s\"\n}\n", n, strings.Repeat("v", 120))
}

// TestPipelineComments: every comment the step posts is one the API took,
// or the job fails with the API's answer: a plan longer than a comment is
// posted in parts, each under GitHub's limit (the API answers 422 over
// it), a shorter plan later deletes the parts it no longer needs, and a
// token that may not write (403) fails the plan job.
func TestPipelineComments(t *testing.T) {
	agent := servers.NewConsul(t)
	p := newPipeline(t, "GITHUB_ACTIONS=true", "GITHUB_REPOSITORY=acme/specs", "CONSUL_HTTP_ADDR="+agent.Addr)
	event := p.pullRequest(7, "f00", "acme/specs")

	p.specs(manyKeys(600))
	out, err := p.run("plan", event)
	if err != nil {
		t.Fatalf("a long plan: %v\n%s", err, out)
	}
	parts := p.api.posted(7)
	if len(parts) < 2 {
		t.Fatalf("a plan longer than a comment: %d comments\n%s", len(parts), out)
	}
	for _, c := range parts {
		if n := len([]rune(c.Body)); n > 65536 || !strings.HasPrefix(c.Body, "<!-- provision-plan: specs") {
			t.Errorf("comment %v: %d characters", c.ID, n)
		}
	}
	took := p.api.took()
	if strings.Count(took, "POST /repos/acme/specs/issues/7/comments 201") != len(parts) || strings.Contains(took, " 422") {
		t.Errorf("requests:\n%s", took)
	}
	t.Logf("a plan of 600 keys: %d comments; the first:\n%.1500s", len(parts), parts[0].Body)

	p.specs(manyKeys(3))
	if out, err := p.run("plan", event); err != nil {
		t.Fatalf("a short plan after a long one: %v\n%s", err, out)
	}
	if id, body := only(t, p.api, 7); !strings.Contains(body, "apps/ci/many/k002") || id != parts[0].ID {
		t.Errorf("comment %v:\n%s", id, body)
	}
	took = p.api.took()
	if strings.Count(took, "PATCH ") != 1 || strings.Count(took, "DELETE ") != len(parts)-1 {
		t.Errorf("requests:\n%s", took)
	}

	p.specs(manyKeys(4))
	out, err = p.run("plan", event, "GITHUB_TOKEN="+readToken)
	if err == nil || !strings.Contains(out, "HTTP 403") || !strings.Contains(out, "Resource not accessible by integration") ||
		!strings.Contains(out, "was refused by the API") || strings.Contains(out, "updated the plan comment") {
		t.Errorf("a read-only token: %v\n%s", err, out)
	}
}
