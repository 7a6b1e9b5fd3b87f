package main

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/consul/api"
	"github.com/provision-dev/provision/provision/servers"
)

// TestPipelineDrift: the scheduled drift job of a repository of two
// projects (teams/a/specs, teams/b/specs, one module of keys), run as
// each CI system runs it, on a real Consul, each step as a team meets it:
//   - converged: no issue, nothing written;
//   - a key of project a edited by hand: one issue for a (its plan, the
//     digest, the ways out), none for b;
//   - the same drift again, 120 issues of someone else with the label
//     opened since (the step's is on the second page), and a labelled pull
//     request of the step's user: nothing written;
//   - a second drift (a key of a deleted by hand): the issue updated once,
//     with one comment saying what changed;
//   - the specs applied again: the issue closed, with a comment;
//   - drift in b, whose plan is longer than a GitHub issue takes: b's own
//     issue, its plan cut there with a link to the job's log;
//   - drift that returns in a: its issue reopened, never a second one;
//   - the drift applied from a run started by hand with its digest; one
//     with another digest applies nothing;
//   - a token that may not write issues: the job fails, naming the refusal.
func TestPipelineDrift(t *testing.T) {
	for _, system := range ciSystems(7) {
		t.Run(system.name, func(t *testing.T) {
			agent := servers.NewConsul(t)
			p := newPipeline(t, append(system.env, "CONSUL_HTTP_ADDR="+agent.Addr, "PROVISION_DIR=teams/*/specs", "GITHUB_SHA=main1", "CI_COMMIT_SHA=main1")...)
			os.RemoveAll(filepath.Join(p.work, "specs"))
			module := "variable \"team\" {\n  type = string\n}\n\nkey \"limits\" {\n  path  = \"apps/${var.team}/limits\"\n  value = file(\"${path.module}/limits.json\")\n}\n\nkey \"flags\" {\n  path  = \"apps/${var.team}/flags\"\n  value = \"on\"\n}\n"
			team := func(name string) string {
				return fmt.Sprintf("project = %q\n\nmodule \"kv\" {\n  source = \"../../../modules/kv\"\n  team   = %q\n}\n", name, name)
			}
			// b also holds keys too many for an issue to show their plan whole.
			big := "key \"big\" {\n  for_each = toset([for i in range(200) : tostring(i)])\n  path     = \"apps/b/big/${each.key}\"\n  value    = format(\"%0500d\", 7)\n}\n"
			for name, src := range map[string]string{".git/HEAD": "ref: refs/heads/main\n", "modules/kv/main.hcl": module, "modules/kv/limits.json": `{"rate": 10}`,
				"teams/a/specs/main.hcl": team("a"), "teams/b/specs/main.hcl": team("b"), "teams/b/specs/big.hcl": big} {
				path := filepath.Join(p.work, filepath.FromSlash(name))
				os.MkdirAll(filepath.Dir(path), 0o755)
				if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			applyMain := func(project string) {
				t.Helper()
				if out, err := p.provision("apply", "-auto-approve", "teams/"+project+"/specs"); err != nil {
					t.Fatalf("applying %s: %v\n%s", project, err, out)
				}
			}
			applyMain("a")
			applyMain("b")
			kv := consulKV(t, agent.Addr)
			// drift runs the job and returns the requests it made of the
			// API, one a line.
			drift := func(wantErr bool, says ...string) string {
				t.Helper()
				out, err := p.run("drift")
				took := p.api.took()
				t.Logf("the drift job: exit %v; requests:\n%s\n%s", err, took, out)
				if (err != nil) != wantErr {
					t.Fatalf("the drift job: %v\n%s", err, out)
				}
				logSays(t, "the drift job", out, says...)
				return took
			}
			ours := func() []issue {
				return slices.DeleteFunc(p.api.issued(), func(is issue) bool { return is.By == "mallory" || is.Pull })
			}

			drift(false, "live matches the default branch: no drift, nothing written")
			if got := ours(); len(got) != 0 {
				t.Fatalf("a converged estate opened issues: %v", got)
			}

			// A key of a's edited by hand, and one the project does not own
			// made beside it: only the first is drift.
			for _, pair := range []*api.KVPair{{Key: "apps/a/limits", Value: []byte(`{"rate": 99}`)}, {Key: "apps/a/unowned", Value: []byte("x")}} {
				if _, err := kv.Put(pair, nil); err != nil {
					t.Fatal(err)
				}
			}
			drift(false, "live no longer matches the default branch: opened #", "live matches the default branch: no drift, nothing written")
			got := ours()
			if len(got) != 1 || !got[0].Open || got[0].Title != "provision drift: teams/a/specs" || !slices.Contains(got[0].Labels, "provision-drift") {
				t.Fatalf("one drift in a: %+v", got)
			}
			first := got[0]
			t.Logf("the issue #%d, %q:\n%s", first.Number, first.Title, first.Body)
			for _, want := range []string{"<!-- provision-drift: teams/a/specs -->\n", "<!-- provision-changes: ", "**Live no longer matches the default branch** for the specs in `teams/a/specs`: planned from main1",
				`key["apps/a/limits"]`, "**0 to create, 1 to update, 0 to delete.**", "### What to do", "PROVISION_APPLY_DRIFT=",
				// The value is written in the module the two projects share:
				// pull leaves it, and the issue says why.
				"`provision pull teams/a/specs` writes what was edited live back into the spec files, but not all of it here", `Not pulled: module.kv.key["apps/a/limits"]`,
				"outside the specs' folder teams/a/specs"} {
				if !strings.Contains(first.Body, want) {
					t.Errorf("the issue's body lacks %q:\n%s", want, first.Body)
				}
			}
			if strings.Contains(first.Body, "apps/b/") || strings.Contains(first.Body, "apps/a/unowned") || strings.Contains(first.Body, "::warning") {
				t.Errorf("a's issue shows b's keys, one a does not own, or the runner's annotations:\n%s", first.Body)
			}

			// 120 issues of someone else, with the label and the marker,
			// opened since: the step's issue is on the second page now.
			for i := range 120 {
				p.api.someoneOpens(fmt.Sprintf("other %d", i), "<!-- provision-drift: teams/a/specs -->\nnot the step's", "provision-drift")
			}
			// And a pull request of the step's user that someone labelled
			// and whose body starts as the issue's: GitHub lists it among
			// the issues; it is no issue of the step's.
			p.api.labelledPull("Pulled live edits", "<!-- provision-drift: teams/a/specs -->\na pull request", "provision-drift")
			// Nothing is written: to the API, nor live (no lock taken, no
			// key written: every key's modify index stays).
			before := kvIndices(t, kv)
			took := drift(false, "the drift #"+fmt.Sprint(first.Number)+" shows is unchanged: nothing written")
			if strings.Contains(took, "POST") || strings.Contains(took, "PATCH") || strings.Contains(took, "PUT") || !strings.Contains(took, "GET") {
				t.Errorf("the same drift made these requests:\n%s", took)
			}
			if got := ours(); len(got) != 1 || got[0].Body != first.Body {
				t.Errorf("the same drift wrote: %+v", got)
			}
			if after := kvIndices(t, kv); !maps.Equal(before, after) {
				t.Errorf("the drift job wrote to Consul: %v, then %v", before, after)
			}

			if _, err := kv.Delete("apps/a/flags", nil); err != nil {
				t.Fatal(err)
			}
			drift(false, "the drift changed: updated #"+fmt.Sprint(first.Number))
			got = ours()
			notes := p.api.issueNotes(system.name, first.Number)
			if len(got) != 1 || got[0].Body == first.Body || !strings.Contains(got[0].Body, `key["apps/a/flags"]`) || len(notes) != 1 ||
				!strings.Contains(notes[0].Body, "The drift changed at main1") || !strings.Contains(notes[0].Body, "now drifts: `module.kv.key[\"apps/a/flags\"]` (create)") {
				t.Errorf("a second drift: %+v\nnotes %+v", got, notes)
			}
			digest := between(got[0].Body, "<!-- provision-changes: ", " -->")

			// The drift applied from a run started by hand: on another
			// branch, or with another digest, nothing; with the issue's,
			// the specs.
			onMain := []string{"GITHUB_REF=refs/heads/main", "CI_COMMIT_BRANCH=main", p.event(map[string]any{"ref": "refs/heads/main", "repository": map[string]any{"default_branch": "main"}})}
			out, err := p.run("apply", "PROVISION_APPLY_DRIFT="+digest, "GITHUB_REF=refs/heads/feature", "CI_COMMIT_BRANCH=feature", onMain[2])
			if err == nil || !strings.Contains(out, "this run is not on it") {
				t.Errorf("a drift applied from another branch: %v\n%s", err, out)
			}
			out, err = p.run("apply", append(onMain, "PROVISION_APPLY_DRIFT=0123abcd")...)
			if err == nil || !strings.Contains(out, "no project's default branch plans the drift 0123abcd") {
				t.Errorf("a drift of another digest: %v\n%s", err, out)
			}
			out, err = p.run("apply", append(onMain, "PROVISION_APPLY_DRIFT="+digest)...)
			if err != nil || !strings.Contains(out, "applied the drift of teams/a/specs") || strings.Contains(out, "applied the drift of teams/b/specs") {
				t.Fatalf("the issue's drift applied: %v\n%s", err, out)
			}
			drift(false, fmt.Sprintf("live matches the default branch again: closed #%d", first.Number))
			got = ours()
			notes = p.api.issueNotes(system.name, first.Number)
			if len(got) != 1 || got[0].Open || len(notes) != 2 || !strings.Contains(notes[1].Body, "Live matches the default branch again at main1") {
				t.Errorf("closed: %+v\nnotes %+v", got, notes)
			}

			if _, err := kv.DeleteTree("apps/b/big/", nil); err != nil {
				t.Fatal(err)
			}
			drift(false, "live no longer matches the default branch: opened #")
			got = ours()
			// Over GitHub's 65,536 characters, under GitLab's 1,048,576.
			cut := system.name == "github"
			if len(got) != 2 || !got[1].Open || got[1].Title != "provision drift: teams/b/specs" || strings.Contains(got[1].Body, "**The plan is cut here**") != cut ||
				strings.Contains(got[1].Body, `<summary><code>+ key["apps/b/big/99"]</code></summary>`) == cut || !strings.Contains(got[1].Body, "### What to do") {
				t.Fatalf("b's drift: %+v", got)
			}
			// Cut after a whole change: every block it opens is closed.
			if b := got[1].Body; strings.Count(b, "<details>") != strings.Count(b, "</details>") || strings.Count(b, "```")%2 != 0 {
				t.Errorf("b's issue is not whole markdown:\n%s", b)
			}
			applyMain("b")

			if _, err := kv.Put(&api.KVPair{Key: "apps/a/limits", Value: []byte(`{"rate": 1}`)}, nil); err != nil {
				t.Fatal(err)
			}
			drift(false, fmt.Sprintf("drift again: reopened #%d", first.Number), fmt.Sprintf("live matches the default branch again: closed #%d", got[1].Number))
			if got := ours(); len(got) != 2 || !got[0].Open || got[1].Open {
				t.Errorf("drift that returns: %+v", got)
			}

			applyMain("a")
			p.env = append(p.env, "GITHUB_TOKEN="+readToken, "GITLAB_TOKEN="+readToken)
			if _, err := kv.Put(&api.KVPair{Key: "apps/a/limits", Value: []byte(`{"rate": 2}`)}, nil); err != nil {
				t.Fatal(err)
			}
			drift(true, "was refused by the API", "403", "drift_one failed for: teams/a/specs")
		})
	}
}

// between is the text of s between from and to.
func between(s, from, to string) string {
	_, after, _ := strings.Cut(s, from)
	out, _, _ := strings.Cut(after, to)
	return out
}

// kvIndices are the modify indices of every key of the store, by key.
func kvIndices(t *testing.T, kv *api.KV) map[string]uint64 {
	t.Helper()
	pairs, _, err := kv.List("", nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]uint64{}
	for _, p := range pairs {
		out[p.Key] = p.ModifyIndex
	}
	return out
}

func consulKV(t *testing.T, addr string) *api.KV {
	client, err := api.NewClient(&api.Config{Address: addr})
	if err != nil {
		t.Fatal(err)
	}
	return client.KV()
}

// TestPipelineDriftDocument: a dashboard saved in the dashboard tool (as
// Kibana 4.x saves it, on a real Elasticsearch) is drift whose issue says
// how to bring it into the specs: provision pull, and the diff it would
// write.
func TestPipelineDriftDocument(t *testing.T) {
	agent := servers.NewConsul(t) // the project's lock
	search := servers.NewCluster(t, "t1")
	p := newPipeline(t, "GITHUB_ACTIONS=true", "GITHUB_REPOSITORY=acme/specs", "GITHUB_SHA=main2", "PROVISION_DIR=dash", "CONSUL_HTTP_ADDR="+agent.Addr)
	spec := `project = "dash"

search "t1" {
  url          = "` + search.URL + `"
  cluster_name = "t1"
}

index ".dashboard" {
  search = "t1"
  mapping "dashboard" {
    properties = { title = "string", hits = "integer", description = "string", panelsJSON = "string", version = "integer" }
  }
}

document "dashboard" "edge" {
  source = {
    title      = "Edge"
    hits       = 0
    version    = 1
    panelsJSON = []
  }
}
`
	os.MkdirAll(filepath.Join(p.work, "dash"), 0o755)
	if err := os.WriteFile(filepath.Join(p.work, "dash", "main.hcl"), []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := p.provision("apply", "-auto-approve", "dash"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	servers.KibanaSave(t, search.URL+"/.dashboard/dashboard/edge", func(b map[string]any) { b["title"] = "Edge (saved in the tool)" })
	out, err := p.run("drift")
	if err != nil || !strings.Contains(out, "opened #") {
		t.Fatalf("the drift job: %v\n%s", err, out)
	}
	got := p.api.issued()
	if len(got) != 1 {
		t.Fatalf("issues: %+v", got)
	}
	for _, want := range []string{`document[".dashboard/dashboard/edge"]`, "`provision pull dash` writes what was edited live", "<summary>provision pull -diff dash</summary>",
		`+    title      = "Edge (saved in the tool)"`} {
		if !strings.Contains(got[0].Body, want) {
			t.Errorf("the issue lacks %q:\n%s", want, got[0].Body)
		}
	}
}

// TestPipelineDriftFailsLoudly: a project whose servers cannot be read,
// and one whose specs do not load, fail the drift job naming each, and no
// issue is searched for or written: drift not known is never "no drift".
func TestPipelineDriftFailsLoudly(t *testing.T) {
	for _, system := range ciSystems(8) {
		t.Run(system.name, func(t *testing.T) {
			p := newPipeline(t, append(system.env, "PROVISION_DIR=specs broken")...)
			os.MkdirAll(filepath.Join(p.work, "broken"), 0o755)
			if err := os.WriteFile(filepath.Join(p.work, "broken", "main.hcl"), []byte("project = \"broken\"\nkey \"k\" {\n  value = var.nope\n}\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			out, err := p.run("drift")
			if err == nil {
				t.Fatalf("the drift job passed:\n%s", out)
			}
			logSays(t, "the drift job", out, "planning specs against live failed", "planning broken against live failed", "Reference to undeclared input variable",
				"drift_one failed for: broken specs")
			if took := p.api.took(); strings.Contains(took, "issues") {
				t.Errorf("requests of a job whose plans failed:\n%s", took)
			}
		})
	}
}
