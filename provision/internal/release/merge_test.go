package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
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
func (p *pipeline) provision(env []string, args ...string) (string, error) {
	cmd := exec.Command(filepath.Join(provisionBin(p.t), "provision"), args...)
	cmd.Dir, cmd.Env = p.work, append(p.env, env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// reviewed saves the plan of a pull request's specs as its plan job's
// artifact (provision-plan-N), planned in a folder of its own; the plan
// names its specs folder as given, specs, so that the merge's job loads
// its own.
func (p *pipeline) reviewed(n int, src string, env []string) {
	p.t.Helper()
	head := &pipeline{t: p.t, work: p.t.TempDir(), env: p.env}
	head.specs(src)
	art := filepath.Join(p.fake, "artifacts", fmt.Sprintf("provision-plan-%d", n))
	os.MkdirAll(art, 0o755)
	if out, err := head.provision(env, "plan", "-out="+filepath.Join(art, "provision.plan"), "specs"); err != nil {
		p.t.Fatalf("the plan of #%d: %v\n%s", n, err, out)
	}
}

// converged says whether the job's specs plan no change against live.
func (p *pipeline) converged(env []string) bool {
	p.t.Helper()
	out, err := p.provision(env, "plan", "-detailed-exitcode", "specs")
	if err != nil && !strings.Contains(err.Error(), "exit status 2") {
		p.t.Fatalf("plan: %v\n%s", err, out)
	}
	return err == nil
}

// TestPipelineMerges runs the apply job on a real Consul as GitHub runs
// it, merge after merge, and after every green job holds the default
// branch's specs to the live agent (they plan no change):
//   - two pull requests planned together and merged in turn: the second's
//     saved plan is refused (the specs moved), the merge commit makes
//     exactly its reviewed changes, and is applied;
//   - a reviewed plan whose changes the merge commit no longer makes
//     (live moved under it): nothing is applied, the job fails, and the
//     new plan is on the pull request;
//   - a direct push: checked by default (a red job when it plans any
//     change), applied with PROVISION_ON_PUSH=apply.
func TestPipelineMerges(t *testing.T) {
	agent := servers.NewConsul(t)
	live := []string{"CONSUL_HTTP_ADDR=" + agent.Addr}
	p := newPipeline(t, "gh", append([]string{"GITHUB_ACTIONS=true", "GITHUB_REPOSITORY=acme/specs"}, live...)...)
	p.file("run", []byte("5"))
	merge := func(n int, sha string, env ...string) (string, error) {
		if n > 0 {
			p.file("merged", []byte(fmt.Sprint(n)))
		} else {
			os.Remove(filepath.Join(p.fake, "merged"))
		}
		return p.run("apply", append([]string{"GITHUB_SHA=" + sha, p.event(map[string]any{"ref": "refs/heads/main"})}, env...)...)
	}

	// #1 adds a, #2 adds b, both planned from main with neither.
	p.reviewed(1, keysSpec("a=1"), live)
	p.reviewed(2, keysSpec("b=1"), live)
	p.specs(keysSpec("a=1"))
	if out, err := merge(1, "m1"); err != nil || !strings.Contains(out, "applied the plan #1 reviewed") {
		t.Fatalf("merge of #1: %v\n%s", err, out)
	}
	p.specs(keysSpec("a=1", "b=1"))
	out, err := merge(2, "m2")
	if err != nil || !strings.Contains(out, "main.hcl changed") || !strings.Contains(out, "applied the merge commit's plan, which makes exactly the changes #2 reviewed") {
		t.Fatalf("merge of #2, planned beside #1: %v\n%s", err, out)
	}
	if !p.converged(live) {
		t.Error("after #2's green job, main plans changes")
	}

	// #3 sets b to 2; someone sets it to 2 by hand before the merge, and
	// #3's reviewed change (an update) is no longer what the merge makes.
	p.reviewed(3, keysSpec("a=1", "b=2", "c=1"), live)
	consulPut(t, agent.Addr, "apps/ci/b", "2")
	p.specs(keysSpec("a=1", "b=2", "c=1"))
	out, err = merge(3, "m3")
	if err == nil || !strings.Contains(out, "planning the merge commit again") {
		t.Fatalf("merge of #3, whose reviewed changes moved: %v\n%s", err, out)
	}
	_, body := only(t, p.posted("comments.json"))
	if !strings.Contains(body, "the merge commit plans other changes") || !strings.Contains(body, "apps/ci/c") {
		t.Errorf("the comment on #3:\n%s", body)
	}
	if consulGet(t, agent.Addr, "apps/ci/c") != "" {
		t.Error("the failed merge job wrote c")
	}

	// A direct push, checked (the default): red, nothing written.
	p.specs(keysSpec("a=1", "b=2", "c=1", "d=1"))
	out, err = merge(0, "direct1")
	if err == nil || !strings.Contains(out, "merged no pull request, and the default branch plans the changes above") || consulGet(t, agent.Addr, "apps/ci/d") != "" {
		t.Fatalf("a direct push, checked: %v\n%s", err, out)
	}
	// Applied when the team says so: live is main again.
	out, err = merge(0, "direct2", "PROVISION_ON_PUSH=apply")
	if err != nil || consulGet(t, agent.Addr, "apps/ci/d") != "1" || !p.converged(live) {
		t.Fatalf("a direct push, applied: %v\n%s", err, out)
	}

	// #4, merged while another run holds the project's lock past the
	// timeout: a red job that says so; re-run once the lock is free, green.
	p.reviewed(4, keysSpec("a=1", "b=2", "c=1", "d=1", "e=1"), live)
	p.specs(keysSpec("a=1", "b=2", "c=1", "d=1", "e=1"))
	client, err := api.NewClient(&api.Config{Address: agent.Addr})
	if err != nil {
		t.Fatal(err)
	}
	held, err := client.LockKey("provision/locks/ci")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := held.Lock(nil); err != nil {
		t.Fatal(err)
	}
	out, err = merge(4, "m4", "PROVISION_LOCK_TIMEOUT=2s")
	if err == nil || !strings.Contains(out, "waiting up to 2s for the project's lock") || !strings.Contains(out, "the project's lock was held by another run for all of 2s") {
		t.Fatalf("merge of #4 under a held lock: %v\n%s", err, out)
	}
	held.Unlock()
	if out, err := merge(4, "m4", "PROVISION_LOCK_TIMEOUT=2s"); err != nil || !p.converged(live) {
		t.Fatalf("the re-run of #4's job: %v\n%s", err, out)
	}
}

// consulPut writes a key by hand, as a person would with curl.
func consulPut(t *testing.T, addr, key, value string) {
	t.Helper()
	req, _ := http.NewRequest("PUT", "http://"+addr+"/v1/kv/"+key, strings.NewReader(value))
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("PUT %s: %v %v", key, err, resp)
	}
	resp.Body.Close()
}

// consulGet reads a key's value; "" when there is none.
func consulGet(t *testing.T, addr, key string) string {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/v1/kv/" + key + "?raw")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode == 404 {
		return ""
	}
	return string(b)
}

// manyKeys is a project of n keys, each with a value of some length:
// a plan larger than one GitHub comment when n is a few hundred.
func manyKeys(n int) string {
	return fmt.Sprintf("project = \"ci\"\n\nkey \"apps/ci/many\" {\n  for_each = toset([for i in range(%d) : format(\"k%%03d\", i)])\n  path     = \"apps/ci/many/${each.key}\"\n  value    = \"%s\"\n}\n", n, strings.Repeat("v", 120))
}

// TestPipelineComments: every comment the step posts is one the API took,
// or the job fails with the API's answer: a token that may not write
// (403) fails the plan job; a plan longer than a comment is posted in
// parts, each under GitHub's limit, and a shorter plan later deletes the
// parts it no longer needs.
func TestPipelineComments(t *testing.T) {
	agent := servers.NewConsul(t)
	live := "CONSUL_HTTP_ADDR=" + agent.Addr
	p := newPipeline(t, "gh", "GITHUB_ACTIONS=true", "GITHUB_REPOSITORY=acme/specs", live)
	event := p.event(map[string]any{"pull_request": map[string]any{"number": 7, "head": map[string]any{"sha": "f00", "repo": map[string]any{"full_name": "acme/specs"}}}})

	p.specs(manyKeys(600))
	out, err := p.run("plan", event)
	if err != nil {
		t.Fatalf("a long plan: %v\n%s", err, out)
	}
	parts := p.posted("comments.json")
	if len(parts) < 2 {
		t.Fatalf("a plan longer than a comment: %d comments\n%s", len(parts), out)
	}
	for id, body := range parts {
		if n := len([]rune(body)); n > 65536 || !strings.HasPrefix(body, "<!-- provision-plan: specs") {
			t.Errorf("comment %v: %d characters", id, n)
		}
	}
	t.Logf("a plan of 600 keys: %d comments", len(parts))

	p.specs(manyKeys(3))
	if out, err := p.run("plan", event); err != nil {
		t.Fatalf("a short plan after a long one: %v\n%s", err, out)
	}
	if id, body := only(t, p.posted("comments.json")); !strings.Contains(body, "apps/ci/many/k002") {
		t.Errorf("comment %v:\n%s", id, body)
	}

	p.file("readonly", nil)
	p.specs(manyKeys(4))
	out, err = p.run("plan", event)
	if err == nil || !strings.Contains(out, "HTTP 403") || !strings.Contains(out, "was refused by the API") || strings.Contains(out, "updated the plan comment") {
		t.Errorf("a read-only token: %v\n%s", err, out)
	}
}
