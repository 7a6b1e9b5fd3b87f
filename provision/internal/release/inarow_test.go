package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/provision-dev/provision/provision/plans"
	"github.com/provision-dev/provision/provision/servers"
)

// TestPipelineMergesInARow: merges in a row of which only the last one's
// apply job runs (GitHub's concurrency group keeps one pending job and
// cancels the one before it; GitLab's resource_group runs its queue in
// any order), on a real Consul, as each CI system runs the step:
//   - #2, #3 and #4, each reviewed on its own key from main after #1,
//     merged in a row, only #4's job run: the merge commit's plan equals
//     their reviewed changes together, so it is applied; live is main,
//     each says Applied, and the history has an entry for each;
//   - the late jobs of #2 and #3, and of a push before #1's merge, end
//     green and send nothing;
//   - #5 and #6, reviewed on one key (and #5 on another), merged in a row,
//     only #6's job run: no order of theirs was reviewed, so nothing is
//     applied and the job fails naming both.
func TestPipelineMergesInARow(t *testing.T) {
	for _, system := range ciSystems(77) {
		t.Run(system.name, func(t *testing.T) {
			agent := servers.NewConsul(t)
			p := newPipeline(t, append(system.env, "CONSUL_HTTP_ADDR="+agent.Addr)...)
			job := p.mergeJob

			p.api.push("d0") // a push before #1's merge, whose job comes late
			p.reviewed(1, "acme/specs", keysSpec("a=1"))
			p.specs(keysSpec("a=1"))
			job(1, "m1", false, "applied the plan #1 reviewed")
			job(0, "d0", false, "d0 is not newer than m1, which ")

			p.reviewed(2, "acme/specs", keysSpec("a=1", "b=1"))
			p.reviewed(3, "acme/specs", keysSpec("a=1", "c=1"))
			p.reviewed(4, "acme/specs", keysSpec("a=1", "d=1"))
			p.api.push("m2")
			p.api.merge("m2", 2)
			p.api.push("m3")
			p.api.merge("m3", 3)
			p.specs(keysSpec("a=1", "b=1", "c=1", "d=1"))
			p.api.took()
			job(4, "m4", false, "merged since m1, the history's last apply: #2, #3 and #4",
				"applied the merge commit's plan, which makes exactly the reviewed changes of #2, #3 and #4")
			for _, k := range []string{"b", "c", "d"} {
				if consulGet(t, agent.Addr, "apps/ci/"+k) != "1" {
					t.Errorf("apps/ci/%s is not written", k)
				}
			}
			if !p.converged() {
				t.Error("after the merges, main plans changes")
			}
			for _, n := range []int{2, 3, 4} {
				if _, body := only(t, p.api, n); !strings.Contains(body, "**Applied** after the merge at m4") || strings.Count(body, "provision-status") != 1 {
					t.Errorf("#%d does not say it was applied:\n%s", n, body)
				}
			}
			history := p.history()
			if len(history) != 4 {
				t.Fatalf("the history has %d entries, want 4 (#1, then #2, #3 and #4 by one job): %+v", len(history), history)
			}
			for i, want := range []plans.Applied{{Commit: "m2", Change: "2"}, {Commit: "m3", Change: "3"}, {Commit: "m4", Change: "4"}} {
				got := history[i+1]
				if got.Commit != want.Commit || got.Change != want.Change || !strings.HasSuffix(got.Job, "77") || got.At.IsZero() {
					t.Errorf("entry %d: %+v, want %+v by the job 77", i+2, got, want)
				}
			}
			if history[3].Digest == "" || history[1].Digest != "" {
				t.Errorf("only #4's entry has its digest (the others' changes came with the merge commit's plan): %+v", history)
			}

			// The late jobs of the merges before: green, nothing sent.
			job(2, "m2", false, "#2 was applied already, at m2 by ")
			job(3, "m3", false, "#3 was applied already, at m3 by ")
			if len(p.history()) != 4 {
				t.Error("a late job wrote the history")
			}

			// #5 and #6 both set b, reviewed without each other.
			p.reviewed(5, "acme/specs", keysSpec("a=1", "b=2", "c=1", "d=1", "e=1"))
			p.reviewed(6, "acme/specs", keysSpec("a=1", "b=3", "c=1", "d=1"))
			p.api.push("m5")
			p.api.merge("m5", 5)
			p.specs(keysSpec("a=1", "b=3", "c=1", "d=1", "e=1"))
			p.api.took()
			out := job(6, "m6", true, `key["apps/ci/b"] is changed by #5 and #6, each reviewed without the other: nothing is applied`)
			if strings.Contains(out, "applied the merge commit's plan") || consulGet(t, agent.Addr, "apps/ci/e") != "" || consulGet(t, agent.Addr, "apps/ci/b") != "1" {
				t.Errorf("something of #5 or #6 was applied:\n%s", out)
			}
			if len(p.history()) != 4 {
				t.Error("a failed job wrote the history")
			}

			// A history whose last commit the API does not know (a force
			// push took it off main): the next merge is judged as without
			// a history, its reviewed changes alone.
			p.specs(keysSpec("a=1", "b=1", "c=1", "d=1"))
			gone := filepath.Join(t.TempDir(), "gone.json")
			os.WriteFile(gone, []byte(`{"commit": "gone"}`), 0o644)
			if out, err := p.provision("apply", "-auto-approve", "-record", gone, "specs"); err != nil {
				t.Fatalf("apply -record: %v\n%s", err, out)
			}
			p.reviewed(7, "acme/specs", keysSpec("a=1", "b=1", "c=1", "d=1", "f=1"))
			p.specs(keysSpec("a=1", "b=1", "c=1", "d=1", "f=1"))
			p.api.took()
			job(7, "m7", false, "gone, the history's last apply, cannot be compared with m7", "applied the plan #7 reviewed")
			if consulGet(t, agent.Addr, "apps/ci/f") != "1" {
				t.Error("#7 is not applied")
			}
		})
	}
}

// ciSystem is a CI system the step runs in, with the variables of one of
// its jobs.
type ciSystem struct {
	name string
	env  []string
}

// ciSystems are GitHub Actions and GitLab CI, each as a job whose number
// (in its page's address) is job.
func ciSystems(job int) []ciSystem {
	return []ciSystem{
		{"github", []string{"GITHUB_ACTIONS=true", "GITHUB_REPOSITORY=acme/specs", fmt.Sprintf("GITHUB_RUN_ID=%d", job)}},
		{"gitlab", []string{"GITLAB_CI=true", "CI_DEFAULT_BRANCH=main", fmt.Sprintf("CI_JOB_URL=https://gitlab.example/acme/specs/-/jobs/%d", job)}},
	}
}

// mergeJob runs the apply job of a push to main at sha that merged pull
// request n, logs what it asked of the API and said, and checks its exit
// and that its log says each of says.
func (p *pipeline) mergeJob(n int, sha string, wantErr bool, says ...string) string {
	p.t.Helper()
	out, err := p.merge(n, sha)
	p.t.Logf("the job of #%d's merge %s: exit %v; requests:\n%s\n%s", n, sha, err, p.api.took(), out)
	if (err != nil) != wantErr {
		p.t.Fatalf("the job of #%d: %v\n%s", n, err, out)
	}
	logSays(p.t, fmt.Sprintf("the job of #%d", n), out, says...)
	return out
}

// logSays checks that the log of a job (what) says each of says.
func logSays(t testing.TB, what, out string, says ...string) {
	t.Helper()
	for _, s := range says {
		if !strings.Contains(out, s) {
			t.Errorf("%s: the log lacks %q", what, s)
		}
	}
}

// history is the project's history of applies, as provision history
// prints it.
func (p *pipeline) history() []plans.Applied {
	p.t.Helper()
	out, err := p.provision("history", "-json", "specs")
	if err != nil {
		p.t.Fatalf("provision history: %v\n%s", err, out)
	}
	var h struct {
		Kept    bool            `json:"kept"`
		Applied []plans.Applied `json:"applied"`
	}
	if err := json.Unmarshal([]byte(out), &h); err != nil || !h.Kept {
		p.t.Fatalf("provision history -json: %v\n%s", err, out)
	}
	return h.Applied
}
