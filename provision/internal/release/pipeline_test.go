package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// The pipeline step's script (provision-ci.sh), run as each CI system
// runs it: with the variables GitHub Actions and GitLab CI set, the real
// provision binary, and a fake gh or curl (testdata/) that records what
// would be posted. Live plans point at ports where nothing listens, so
// that they fail at once without reaching a server of another test.

var (
	binOnce sync.Once
	binDir  string
	binErr  error
)

// provisionBin builds provision once into a folder for PATH.
func provisionBin(t *testing.T) string {
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
// fakes' folder and the variables of its CI system.
type pipeline struct {
	t    *testing.T
	work string // the job's working directory
	fake string // the fakes' files and their log of calls
	env  []string
}

func newPipeline(t *testing.T, fakes string, env ...string) *pipeline {
	p := &pipeline{t: t, work: t.TempDir(), fake: t.TempDir()}
	if err := os.CopyFS(filepath.Join(p.work, "specs"), os.DirFS(filepath.Join(root, "specs"))); err != nil {
		t.Fatal(err)
	}
	fakeBin := t.TempDir()
	abs, _ := filepath.Abs(filepath.Join("testdata", "fake-"+fakes))
	if err := os.Symlink(abs, filepath.Join(fakeBin, fakes)); err != nil {
		t.Fatal(err)
	}
	p.env = append(os.Environ(), "PATH="+fakeBin+":"+provisionBin(t)+":"+os.Getenv("PATH"), "FAKE="+p.fake,
		"GITHUB_ACTIONS=", "GITLAB_CI=", "GITHUB_OUTPUT=", "NO_COLOR=1",
		"CONSUL_HTTP_ADDR=127.0.0.1:1", "CONSUL_HTTP_TOKEN=", "PROVISION_VAR_search_url=http://127.0.0.1:1", "PROVISION_VAR_tribe_url=http://127.0.0.1:1")
	p.env = append(p.env, env...)
	return p
}

// event writes the GitHub event payload and returns its variable.
func (p *pipeline) event(v any) string {
	b, _ := json.Marshal(v)
	path := filepath.Join(p.fake, "event.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		p.t.Fatal(err)
	}
	return "GITHUB_EVENT_PATH=" + path
}

// file writes one of the fakes' files.
func (p *pipeline) file(name string, data []byte) {
	path := filepath.Join(p.fake, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		p.t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		p.t.Fatal(err)
	}
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

// posted are the comments (or notes) the fake holds, by id.
func (p *pipeline) posted(name string) map[float64]string {
	b, err := os.ReadFile(filepath.Join(p.fake, name))
	if err != nil {
		return nil
	}
	var list []struct {
		ID   float64 `json:"id"`
		Body string  `json:"body"`
	}
	if err := json.Unmarshal(b, &list); err != nil {
		p.t.Fatal(err)
	}
	out := map[float64]string{}
	for _, c := range list {
		out[c.ID] = c.Body
	}
	return out
}

func (p *pipeline) calls() string {
	b, _ := os.ReadFile(filepath.Join(p.fake, "calls"))
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

// only is the one body of posted, failing the test when there is not
// exactly one.
func only(t *testing.T, posted map[float64]string) (float64, string) {
	t.Helper()
	if len(posted) != 1 {
		t.Fatalf("%d comments, want exactly one: %v", len(posted), posted)
	}
	for id, body := range posted {
		return id, body
	}
	return 0, ""
}

// A pull request from a fork is planned with no credentials from the
// snapshot the default branch published, and each push updates the one
// comment in place.
func TestPipelineGitHubForkKeepsOneComment(t *testing.T) {
	p := newPipeline(t, "gh", "GITHUB_ACTIONS=true", "GITHUB_REPOSITORY=acme/specs")
	event := p.event(map[string]any{"number": 12, "repository": map[string]any{"default_branch": "main"},
		"pull_request": map[string]any{"number": 12, "head": map[string]any{"sha": "aaa111", "repo": map[string]any{"full_name": "someone/specs"}}}})
	p.file("run", []byte("4242"))
	p.file("artifacts/provision-snapshot/provision-snapshot.json", snapshotFile(t, "drifted.json"))
	out, err := p.run("plan", event)
	if err != nil {
		t.Fatalf("first push: %v\n%s", err, out)
	}
	id, first := only(t, p.posted("comments.json"))
	for _, want := range []string{marker + "\n", "provision plan of `specs` at aaa111", "Planned without credentials (a pull request from a fork) from the snapshot `provision-snapshot`",
		"taken 2025-11-25T00:00:00Z", "**0 to create, 2 to update, 0 to delete.**", "port changed"} {
		if !strings.Contains(first, want) {
			t.Errorf("the first comment lacks %q:\n%s", want, first)
		}
	}
	if _, err := os.Stat(filepath.Join(p.work, "provision.plan")); err != nil {
		t.Errorf("no saved plan to upload: %v", err)
	}

	// A second push, after the default branch published a newer snapshot.
	event = p.event(map[string]any{"number": 12, "repository": map[string]any{"default_branch": "main"},
		"pull_request": map[string]any{"number": 12, "head": map[string]any{"sha": "bbb222", "repo": map[string]any{"full_name": "someone/specs"}}}})
	p.file("artifacts/provision-snapshot/provision-snapshot.json", snapshotFile(t, "converged.json"))
	if out, err := p.run("plan", event); err != nil {
		t.Fatalf("second push: %v\n%s", err, out)
	}
	id2, second := only(t, p.posted("comments.json"))
	if id2 != id || second == first || !strings.Contains(second, "at bbb222") || !strings.HasPrefix(second, marker) {
		t.Errorf("the second push did not update comment %v in place (now %v):\n%s", id, id2, second)
	}
	if n := strings.Count(p.calls(), "-X PATCH"); n != 1 {
		t.Errorf("%d PATCH calls, want 1:\n%s", n, p.calls())
	}
}

// A plan that fails is a comment that says so, and a failed job.
func TestPipelineGitHubFailedPlanComments(t *testing.T) {
	p := newPipeline(t, "gh", "GITHUB_ACTIONS=true", "GITHUB_REPOSITORY=acme/specs")
	event := p.event(map[string]any{"pull_request": map[string]any{"number": 3, "head": map[string]any{"sha": "ccc333", "repo": map[string]any{"full_name": "acme/specs"}}}})
	out, err := p.run("plan", event)
	if err == nil {
		t.Fatalf("a plan that cannot read Consul passed:\n%s", out)
	}
	_, body := only(t, p.posted("comments.json"))
	if !strings.Contains(body, "**The plan failed.**") || strings.Contains(body, "snapshot") {
		t.Errorf("the comment of a failed live plan:\n%s", body)
	}
	if strings.Contains(p.calls(), "run download") {
		t.Errorf("a pull request of the repository itself fetched the snapshot:\n%s", p.calls())
	}
}

// On merge, the job applies the pull request's saved plan; one that is
// refused (here: planned from a snapshot, which is never applied) is
// planned again from the merge commit, and when that fails too (here: no
// server answers) the job fails and puts what it found on the pull
// request.
func TestPipelineGitHubApplyRefusedPlansAgain(t *testing.T) {
	p := newPipeline(t, "gh", "GITHUB_ACTIONS=true", "GITHUB_REPOSITORY=acme/specs", "GITHUB_SHA=merge999")
	snap := filepath.Join(p.fake, "snap.json")
	p.file("snap.json", snapshotFile(t, "drifted.json"))
	plan := exec.Command(filepath.Join(provisionBin(t), "provision"), "plan", "-out="+filepath.Join(p.fake, "artifacts", "provision-plan-12", "provision.plan"), "-snapshot="+snap, "specs")
	plan.Dir = p.work
	if err := os.MkdirAll(filepath.Join(p.fake, "artifacts", "provision-plan-12"), 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := plan.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	p.file("merged", []byte("12"))
	p.file("run", []byte("77"))
	out, err := p.run("apply", p.event(map[string]any{"ref": "refs/heads/main"}))
	if err == nil {
		t.Fatalf("a refused plan passed the job:\n%s", out)
	}
	for _, want := range []string{"A plan made from a snapshot is never applied", "the plan #12 reviewed cannot be applied as it is", "planning the merge commit again"} {
		if !strings.Contains(out, want) {
			t.Errorf("the job's log lacks %q:\n%s", want, out)
		}
	}
	_, body := only(t, p.posted("comments.json"))
	if !strings.Contains(body, "the plan reviewed on this pull request was not applied after the merge") {
		t.Errorf("the comment on #12:\n%s", body)
	}
	if !strings.Contains(p.calls(), "gh run download 77") || !strings.Contains(p.calls(), "issues/12/comments") {
		t.Errorf("calls:\n%s", p.calls())
	}
}

// A push that merged no pull request is checked: a plan that cannot be
// made fails the job (TestPipelineMerges has the rest, on a real agent).
func TestPipelineGitHubApplyNeedsAReview(t *testing.T) {
	p := newPipeline(t, "gh", "GITHUB_ACTIONS=true", "GITHUB_REPOSITORY=acme/specs", "GITHUB_SHA=direct1")
	out, err := p.run("apply", p.event(map[string]any{"ref": "refs/heads/main"}))
	if err == nil || !strings.Contains(out, "planning the default branch at direct1 failed") {
		t.Errorf("%v\n%s", err, out)
	}
}

// GitLab: a merge request from a fork, planned from the default
// branch's snapshot, one note updated in place.
func TestPipelineGitLabForkKeepsOneNote(t *testing.T) {
	p := newPipeline(t, "curl", "GITLAB_CI=true", "CI_API_V4_URL=https://gitlab.example/api/v4", "CI_PROJECT_ID=5",
		"CI_MERGE_REQUEST_SOURCE_PROJECT_ID=9", "CI_MERGE_REQUEST_IID=4", "CI_DEFAULT_BRANCH=main", "CI_JOB_TOKEN=job", "GITLAB_TOKEN=secret")
	p.file("snapshot.json", snapshotFile(t, "drifted.json"))
	for _, sha := range []string{"ddd444", "eee555"} {
		out, err := p.run("plan", "CI_COMMIT_SHA="+sha)
		if err != nil {
			t.Fatalf("%s: %v\n%s", sha, err, out)
		}
		if strings.Contains(out, "secret") {
			t.Errorf("the job's log shows GITLAB_TOKEN:\n%s", out)
		}
	}
	_, body := only(t, p.posted("notes.json"))
	if !strings.HasPrefix(body, marker) || !strings.Contains(body, "at eee555") || !strings.Contains(body, "from the snapshot") {
		t.Errorf("the note:\n%s", body)
	}
	if n := strings.Count(p.calls(), "-X PUT"); n != 1 {
		t.Errorf("%d PUT calls, want 1:\n%s", n, p.calls())
	}
}
