package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// The pipeline step's script (provision-ci.sh), run as each CI system
// runs it: with the variables GitHub Actions and GitLab CI set, the real
// provision binary, real curl, and a local API answering as GitHub's and
// GitLab's do (ciAPI). Live plans point at ports where nothing listens,
// so that they fail at once without reaching a server of another test.

var (
	binOnce sync.Once
	binDir  string
	binErr  error
)

// provisionBin builds provision once into a folder for PATH.
func provisionBin(t testing.TB) string {
	binOnce.Do(func() {
		binDir, binErr = os.MkdirTemp("", "provision-ci-bin-")
		if binErr != nil {
			return
		}
		cmd := exec.Command("go", "build", "-o", filepath.Join(binDir, "provision"), "./cmd/provision")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			binErr = err
			t.Logf("%s", out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binDir
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// pipeline is one CI job's workspace: a copy of the shipped specs, the
// API of its CI system and its variables.
type pipeline struct {
	t    testing.TB
	work string // the job's working directory
	dir  string // the runner's files: the event, the step summary
	api  *ciAPI
	env  []string
}

func newPipeline(t testing.TB, env ...string) *pipeline {
	p := &pipeline{t: t, work: t.TempDir(), dir: t.TempDir(), api: newCIAPI(t)}
	if err := os.CopyFS(filepath.Join(p.work, "specs"), os.DirFS(filepath.Join(root, "specs"))); err != nil {
		t.Fatal(err)
	}
	p.env = append(os.Environ(), "PATH="+provisionBin(t)+":"+os.Getenv("PATH"),
		"GITHUB_ACTIONS=", "GITLAB_CI=", "GITHUB_OUTPUT=", "NO_COLOR=1", "GITHUB_STEP_SUMMARY="+filepath.Join(p.dir, "summary.md"),
		"CONSUL_HTTP_ADDR=127.0.0.1:1", "CONSUL_HTTP_TOKEN=", "PROVISION_VAR_search_url=http://127.0.0.1:1", "PROVISION_VAR_tribe_url=http://127.0.0.1:1")
	p.env = append(append(p.env, p.api.env()...), env...)
	return p
}

// event writes the GitHub event payload and returns its variable.
func (p *pipeline) event(v any) string {
	b, _ := json.Marshal(v)
	path := filepath.Join(p.dir, "event.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		p.t.Fatal(err)
	}
	return "GITHUB_EVENT_PATH=" + path
}

// pullRequest is the event of a push to pull request n at head, from
// the repository named from.
func (p *pipeline) pullRequest(n int, head, from string) string {
	p.api.pull(n, head)
	return p.event(map[string]any{"number": n, "repository": map[string]any{"default_branch": "main"},
		"pull_request": map[string]any{"number": n, "head": map[string]any{"sha": head, "repo": map[string]any{"full_name": from}}}})
}

// run runs provision-ci.sh command in the job, with env added.
func (p *pipeline) run(command string, env ...string) (string, error) {
	abs, _ := filepath.Abs(filepath.Join(root, script))
	cmd := exec.Command("sh", abs, command)
	cmd.Dir = p.work
	cmd.Env = append(p.env, env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// summary is what the job wrote to its step summary.
func (p *pipeline) summary() string {
	b, _ := os.ReadFile(filepath.Join(p.dir, "summary.md"))
	return string(b)
}

func snapshotFile(t *testing.T, name string) []byte {
	b, err := os.ReadFile(filepath.Join(root, "specs", "tests", "snapshots", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

const marker = "<!-- provision-plan: specs -->"

// only is the body of the one comment the step posted on pull request n,
// failing the test when there is not exactly one.
func only(t *testing.T, a *ciAPI, n int) (int, string) {
	t.Helper()
	posted := slices.DeleteFunc(a.posted(n), func(c comment) bool { return c.User["login"] == "mallory" || c.Author["username"] == "mallory" })
	if len(posted) != 1 {
		t.Fatalf("%d comments on #%d, want exactly one: %v", len(posted), n, posted)
	}
	return posted[0].ID, posted[0].Body
}

// A pull request from a fork is planned with no credentials from the
// snapshot the default branch published last; its token may not write,
// so its plan is the job's summary, and nothing is posted.
func TestPipelineGitHubForkSummary(t *testing.T) {
	p := newPipeline(t, "GITHUB_ACTIONS=true", "GITHUB_REPOSITORY=acme/specs", "GITHUB_TOKEN="+readToken)
	p.api.upload("provision-snapshot", "main", "old", map[string][]byte{"provision-snapshot.json": snapshotFile(t, "converged.json")})
	p.api.upload("provision-snapshot", "main", "new", map[string][]byte{"provision-snapshot.json": snapshotFile(t, "drifted.json")})
	p.api.upload("provision-snapshot", "feature", "newer", map[string][]byte{"provision-snapshot.json": snapshotFile(t, "converged.json")})
	out, err := p.run("plan", p.pullRequest(12, "aaa111", "someone/specs"))
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	summary := p.summary()
	for _, want := range []string{"provision plan of `specs` at aaa111", "Planned without credentials (a pull request from a fork) from the snapshot `provision-snapshot`",
		"taken 2025-11-25T00:00:00Z", "**0 to create, 2 to update, 0 to delete.**", "port changed"} {
		if !strings.Contains(summary, want) {
			t.Errorf("the summary lacks %q:\n%s", want, summary)
		}
	}
	if _, err := os.Stat(filepath.Join(p.work, "provision.plan")); err != nil {
		t.Errorf("no saved plan to upload: %v", err)
	}
	if took := p.api.took(); strings.Contains(took, "POST") || strings.Contains(took, "PATCH") || !strings.Contains(took, "GET /blobs/") {
		t.Errorf("requests:\n%s", took)
	}
	if !strings.Contains(out, "the plan is the job's summary") {
		t.Errorf("the log does not say where the plan is:\n%s", out)
	}
}

// A plan that fails is a comment that says so, and a failed job; each
// push updates the one comment in place.
func TestPipelineGitHubFailedPlanComments(t *testing.T) {
	p := newPipeline(t, "GITHUB_ACTIONS=true", "GITHUB_REPOSITORY=acme/specs")
	out, err := p.run("plan", p.pullRequest(3, "ccc333", "acme/specs"))
	if err == nil {
		t.Fatalf("a plan that cannot read Consul passed:\n%s", out)
	}
	id, body := only(t, p.api, 3)
	if !strings.HasPrefix(body, marker+"\n") || !strings.Contains(body, "**The plan failed.**") || strings.Contains(body, "from the snapshot") || strings.Contains(body, "provision-changes") {
		t.Errorf("the comment of a failed live plan:\n%s", body)
	}
	if !strings.Contains(body, "Credentials went to every server the specs name: no snapshot of the default branch") {
		t.Errorf("the comment does not say where the credentials went:\n%s", body)
	}
	if took := p.api.took(); !strings.Contains(took, "POST /repos/acme/specs/issues/3/comments 201") {
		t.Errorf("requests:\n%s", took)
	}
	if _, err := p.run("plan", p.pullRequest(3, "ddd444", "acme/specs")); err == nil {
		t.Fatal("the second push passed")
	}
	if id2, body := only(t, p.api, 3); id2 != id || !strings.Contains(body, "at ddd444") {
		t.Errorf("the second push did not update comment %v in place (now %v):\n%s", id, id2, body)
	}
	if took := p.api.took(); !strings.Contains(took, fmt.Sprintf("PATCH /repos/acme/specs/issues/comments/%d 200", id)) {
		t.Errorf("requests:\n%s", took)
	}
}

// On merge, the job applies the pull request's saved plan; one that is
// refused (here: planned from a snapshot, which is never applied) is
// planned again from the merge commit, and when that fails too (here: no
// server answers) the job fails and puts what it found on the pull
// request. A reviewed plan whose artifact is gone fails the job at once.
func TestPipelineGitHubApplyRefusedPlansAgain(t *testing.T) {
	p := newPipeline(t, "GITHUB_ACTIONS=true", "GITHUB_REPOSITORY=acme/specs", "GITHUB_SHA=merge999")
	snap := filepath.Join(p.dir, "snap.json")
	os.WriteFile(snap, snapshotFile(t, "drifted.json"), 0o644)
	saved := filepath.Join(p.dir, "provision.plan")
	plan := exec.Command(filepath.Join(provisionBin(t), "provision"), "plan", "-out="+saved, "-snapshot="+snap, "specs")
	plan.Dir = p.work
	if out, err := plan.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	b, _ := os.ReadFile(saved)
	p.api.pull(12, "head12")
	p.api.merge("merge999", 12)
	push := p.event(map[string]any{"ref": "refs/heads/main"})

	out, err := p.run("apply", push)
	if err == nil || !strings.Contains(out, "the reviewed plan of #12 was not found") || !strings.Contains(out, "no artifact provision-plan-12 of a run with head_sha head12") {
		t.Fatalf("a merge whose plan has no artifact: %v\n%s", err, out)
	}

	p.api.upload("provision-plan-12", "feature", "head12", map[string][]byte{"provision.plan": b})
	out, err = p.run("apply", push)
	if err == nil {
		t.Fatalf("a refused plan passed the job:\n%s", out)
	}
	for _, want := range []string{"A plan made from a snapshot is never applied", "the plan #12 reviewed cannot be applied as it is", "planning the merge commit again"} {
		if !strings.Contains(out, want) {
			t.Errorf("the job's log lacks %q:\n%s", want, out)
		}
	}
	if _, body := only(t, p.api, 12); !strings.Contains(body, "the merge commit plans other changes than this pull request showed") || !strings.Contains(body, "**The plan failed.**") {
		t.Errorf("the comment on #12:\n%s", body)
	}
}

// A push that merged no pull request is checked: a plan that cannot be
// made fails the job (TestPipelineMerges has the rest, on a real agent).
func TestPipelineGitHubApplyNeedsAReview(t *testing.T) {
	p := newPipeline(t, "GITHUB_ACTIONS=true", "GITHUB_REPOSITORY=acme/specs", "GITHUB_SHA=direct1")
	out, err := p.run("apply", p.event(map[string]any{"ref": "refs/heads/main"}))
	if err == nil || !strings.Contains(out, "planning the default branch at direct1 failed") {
		t.Errorf("%v\n%s", err, out)
	}
	if took := p.api.took(); took != "GET /repos/acme/specs/commits/direct1/pulls 200" {
		t.Errorf("requests:\n%s", took)
	}
}

// GitLab: a merge request from a fork, planned from the default
// branch's snapshot, one note updated in place; the token never shows.
func TestPipelineGitLabForkKeepsOneNote(t *testing.T) {
	p := newPipeline(t, "GITLAB_CI=true", "CI_MERGE_REQUEST_SOURCE_PROJECT_ID=9", "CI_MERGE_REQUEST_IID=4", "CI_DEFAULT_BRANCH=main")
	p.api.upload("provision-snapshot", "main", "s1", map[string][]byte{"provision-snapshot.json": snapshotFile(t, "drifted.json")})
	for _, sha := range []string{"ddd444", "eee555"} {
		out, err := p.run("plan", "CI_COMMIT_SHA="+sha)
		if err != nil {
			t.Fatalf("%s: %v\n%s", sha, err, out)
		}
		if strings.Contains(out, token) {
			t.Errorf("the job's log shows GITLAB_TOKEN:\n%s", out)
		}
	}
	_, body := only(t, p.api, 4)
	if !strings.HasPrefix(body, marker) || !strings.Contains(body, "at eee555") || !strings.Contains(body, "from the snapshot") {
		t.Errorf("the note:\n%s", body)
	}
	took := p.api.took()
	if strings.Count(took, "PUT /api/v4/projects/5/merge_requests/4/notes/") != 1 || !strings.Contains(took, "GET /api/v4/projects/5/jobs/artifacts/main/raw/provision-snapshot.json 200") {
		t.Errorf("requests:\n%s", took)
	}
}

// A pull request from the repository itself is planned with the
// credentials only for the servers the default branch's specs declare
// (the servers of its snapshot): one that adds an agent elsewhere gets a
// plan that refuses it at its block, the listener there receives no
// token, and the comment says which servers were allowed.
func TestPipelineGitHubAllowsDefaultServers(t *testing.T) {
	var mu sync.Mutex
	var got []string
	listen := func() *httptest.Server {
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			got = append(got, r.Host+" "+r.URL.Path+" token="+r.Header.Get("X-Consul-Token"))
			mu.Unlock()
			w.Write([]byte("{}"))
		}))
		t.Cleanup(s.Close)
		return s
	}
	agent, elsewhere := listen(), listen()
	p := newPipeline(t, "GITHUB_ACTIONS=true", "GITHUB_REPOSITORY=acme/specs", "CONSUL_HTTP_ADDR="+agent.URL, "CONSUL_HTTP_TOKEN=canary-token-77d0")
	snap := strings.ReplaceAll(string(snapshotFile(t, "converged.json")), "http://localhost:8500", agent.URL)
	p.api.upload("provision-snapshot", "main", "s1", map[string][]byte{"provision-snapshot.json": []byte(snap)})
	added := "agent \"x\" {\n  address = \"" + elsewhere.URL + "\"\n}\n\nservice \"x\" {\n  agent = \"x\"\n  port  = 8080\n}\n"
	if err := os.WriteFile(filepath.Join(p.work, "specs", "elsewhere.hcl"), []byte(added), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := p.run("plan", p.pullRequest(8, "fff666", "acme/specs"))
	if err == nil {
		t.Fatalf("a plan with an agent outside the allowed servers passed:\n%s", out)
	}
	_, body := only(t, p.api, 8)
	for _, want := range []string{"Credentials went only to the servers the default branch's specs declare", agent.URL, "Error: Server not allowed", "elsewhere.hcl"} {
		if !strings.Contains(body, want) {
			t.Errorf("the comment lacks %q:\n%s", want, body)
		}
	}
	if strings.Contains(body+out, "canary") {
		t.Errorf("the token shows:\n%s\n%s", out, body)
	}
	// A pull request that adds a project of its own (no snapshot of it on
	// the default branch) is held to the servers of the snapshots there,
	// not let go to every server.
	os.Remove(filepath.Join(p.work, "specs", "elsewhere.hcl"))
	os.MkdirAll(filepath.Join(p.work, "extra"), 0o755)
	os.WriteFile(filepath.Join(p.work, "extra", "main.hcl"), []byte("project = \"extra\"\n\n"+added), 0o644)
	p.api.took()
	out, err = p.run("plan", p.pullRequest(9, "aaa999", "acme/specs"), "PROVISION_DIR=specs extra")
	if err == nil || !strings.Contains(out, "Server not allowed") || !strings.Contains(out, "plan_one failed for: extra") {
		t.Errorf("a new project with an agent elsewhere: %v\n%s", err, out)
	}
	if took := p.api.took(); strings.Count(took, "/zip") != 1 {
		t.Errorf("the default branch's snapshots, downloaded once for both projects:\n%s", took)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, r := range got {
		if strings.HasPrefix(r, strings.TrimPrefix(elsewhere.URL, "http://")) && strings.Contains(r, "canary") {
			t.Errorf("the agent elsewhere received the token: %s", r)
		}
	}
}

// Outside GitHub Actions and GitLab CI the step refuses once, in one
// line; an install from a mirror that lacks the version says so, with
// the version and the mirror.
func TestPipelineOutsideCI(t *testing.T) {
	p := newPipeline(t)
	out, err := p.run("plan")
	if err == nil || strings.Count(out, "neither GITHUB_ACTIONS nor GITLAB_CI is true") != 1 || strings.Contains(out, "jq") {
		t.Errorf("plan outside CI: %v\n%s", err, out)
	}
	mirror := t.TempDir()
	out, err = p.run("install", "PROVISION_VERSION=v9.9.9", "PROVISION_RELEASES=file://"+mirror, "PROVISION_BIN="+t.TempDir(), "GITHUB_PATH=")
	if err == nil || !strings.Contains(out, "no release v9.9.9 at file://"+mirror+"/v9.9.9") {
		t.Errorf("install of a version the mirror lacks: %v\n%s", err, out)
	}
}
