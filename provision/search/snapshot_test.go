package search

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/provision-dev/provision/provision"
	"github.com/provision-dev/provision/provision/plans"
	"github.com/provision-dev/provision/schema"
)

// plansAsLive reads the cluster of cfg (and its tribe node) once, records
// what it read in a snapshot file, reads the file back and plans from it:
// the plan, in text and JSON, and its diagnostics are the plan made live
// from the same read, and a plan read live again gives the same.
func plansAsLive(t *testing.T, cfg *schema.Config) {
	t.Helper()
	bs, diags := New(cfg, Options{Env: noEnv})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	live, ldiags := makePlan(context.Background(), cfg.Project, bs)
	snap, err := provision.TakeSnapshot(cfg.Project, bs, live.Live, nil, time.Unix(1764028800, 0), cfg.Secrets)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "snap.json")
	if err := provision.WriteSnapshot(path, snap); err != nil {
		t.Fatal(err)
	}
	read, diags := provision.ReadSnapshot(path)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	states, diags := read.Live(cfg.Project, bs)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	offline, odiags := provision.PlanFrom(cfg.Project, plans.Converge, bs, states)
	if diff := cmp.Diff(diagLines(ldiags), diagLines(odiags)); diff != "" {
		t.Errorf("diagnostics of the plan from the snapshot (-live +snapshot):\n%s", diff)
	}
	if diff := cmp.Diff(text(t, live), text(t, offline)); diff != "" {
		t.Errorf("the plan from the snapshot (-live +snapshot):\n%s", diff)
	}
	lj, _ := json.Marshal(live.Redacted())
	oj, _ := json.Marshal(offline.Redacted())
	if diff := cmp.Diff(string(lj), string(oj)); diff != "" {
		t.Errorf("the JSON plan from the snapshot (-live +snapshot):\n%s", diff)
	}
}

// TestSnapshotOfAnUnknownServer: a snapshot that records a server whose
// version provision has no fidelity rules for is refused at its line,
// and nothing is planned.
func TestSnapshotOfAnUnknownServer(t *testing.T) {
	cfg := load(t, map[string]string{"main.hcl": `project = "unknown"

search "t1" {
  url          = "http://127.0.0.1:1"
  cluster_name = "t1"
}

index "logs" {
  search = "t1"
  mapping "doc" {
    properties = { title = "string" }
  }
}
`})
	bs, diags := New(cfg, Options{Env: noEnv})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	for version, want := range map[string]string{
		"9.0.0": "Snapshot of a server provision does not know",
		"2.4.1": "",
	} {
		path := filepath.Join(t.TempDir(), "snap.json")
		src := `{
  "format_version": "1.0",
  "project": "unknown",
  "taken_at": "2025-11-25T00:00:00Z",
  "backends": [
    {
      "name": "search.t1",
      "kind": "search",
      "address": "http://127.0.0.1:1",
      "state": {"version": "` + version + `", "cluster_name": "t1", "indices": {}}
    }
  ]
}
`
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		snap, diags := provision.ReadSnapshot(path)
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		_, diags = snap.Live(cfg.Project, bs)
		switch {
		case want == "" && diags.HasErrors():
			t.Errorf("%s: %v", version, diags)
		case want != "" && (len(diags) != 1 || diags[0].Summary != want || diags[0].Subject.Start.Line != 10):
			t.Errorf("%s: %v, want %q at line 10", version, diags, want)
		}
	}
}
