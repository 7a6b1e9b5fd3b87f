package search

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/provision-dev/provision/provision"
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
	live, ldiags := provision.MakePlan(context.Background(), cfg.Project, provision.Converge, bs)
	snap, err := provision.TakeSnapshot(cfg.Project, bs, live.Live, time.Unix(1764028800, 0), cfg.Secrets)
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
	offline, odiags := provision.PlanFrom(cfg.Project, provision.Converge, bs, states)
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
