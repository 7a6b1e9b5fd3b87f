package run

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision"
	"github.com/provision-dev/provision/provision/addrs"
	"github.com/provision-dev/provision/provision/consul"
	"github.com/provision-dev/provision/provision/langtest"
	"github.com/provision-dev/provision/provision/plans"
)

// recorder is a View that keeps what a run reports, and runs after each
// phase the hooks given for it.
type recorder struct {
	hooks  map[Phase][]func(*Run) hcl.Diagnostics
	diags  hcl.Diagnostics
	plans  []*plans.Plan
	result bool
	asked  int
	answer bool
}

func (v *recorder) Loaded(map[string]*hcl.File, []string) {}
func (v *recorder) Diagnostics(d hcl.Diagnostics)         { v.diags = append(v.diags, d...) }
func (v *recorder) Plan(p *plans.Plan, w hcl.Diagnostics) {
	v.plans = append(v.plans, p)
	v.diags = append(v.diags, w...)
}
func (v *recorder) Progress(Progress)                                     {}
func (v *recorder) Verified(provision.Verified)                           {}
func (v *recorder) Result(*plans.Plan, provision.Result, hcl.Diagnostics) { v.result = true }
func (v *recorder) PostPhase(_ context.Context, ph Phase, r *Run) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, h := range v.hooks[ph] {
		if diags = append(diags, h(r)...); diags.HasErrors() {
			break
		}
	}
	return diags
}

// asking is a recorder that can be asked for approval.
type asking struct{ recorder }

func (v *asking) Confirm(context.Context, *plans.Plan) bool { v.asked++; return v.answer }

// specs writes a spec directory that names no backend: every phase runs,
// against no server.
func specs(t *testing.T, src string) string {
	t.Helper()
	t.Setenv("CONSUL_HTTP_ADDR", "")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.hcl"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func summaries(diags hcl.Diagnostics) []string {
	var out []string
	for _, d := range diags {
		out = append(out, d.Summary)
	}
	return out
}

// TestPhases: each type of operation runs its phases in order, leaving
// out confirm and apply when nothing is to be sent.
func TestPhases(t *testing.T) {
	dir := specs(t, `project = "unit"`)
	for _, tt := range []struct {
		op   Operation
		want []Phase
	}{
		{Operation{Language: langtest.Language, Type: Validate}, []Phase{Load}},
		{Operation{Language: langtest.Language, Type: Plan}, []Phase{Load, Open, Read, Diff}},
		{Operation{Language: langtest.Language, Type: Apply, AutoApprove: true}, []Phase{Load, Open, CheckPermissions, Lock, Read, Diff, Record, Verify}},
		{Operation{Language: langtest.Language, Type: Destroy, Lock: true}, []Phase{Load, Open, CheckPermissions, Lock, Read, Diff, Record, Verify}},
		{Operation{Language: langtest.Language, Type: Policy}, []Phase{Load, Open, MakePolicy}},
		{Operation{Language: langtest.Language, Type: Plan, GenerateConfigOut: filepath.Join(dir, "generated.hcl")}, []Phase{Load, Open, MakeConfig, Read, Diff}},
		{Operation{Language: langtest.Language, Type: Pull}, []Phase{Load, Open, Read, Diff, MakePull}},
	} {
		t.Run(tt.op.Type.String(), func(t *testing.T) {
			tt.op.Dir = dir
			v := &asking{}
			r := tt.op.Start(context.Background(), v)
			if r.Failed() {
				t.Fatalf("failed: %v", v.diags)
			}
			if diff := cmp.Diff(tt.want, r.Ran); diff != "" {
				t.Errorf("phases (-want +got):\n%s", diff)
			}
			if v.asked != 0 {
				t.Errorf("asked %d times for a plan without changes", v.asked)
			}
			if tt.op.Lock && !strings.Contains(strings.Join(summaries(v.diags), ","), "Running without the lock") {
				t.Errorf("no warning that no agent holds the lock: %v", v.diags)
			}
		})
	}
}

// TestHookStops: an error of what runs after a phase (View.PostPhase)
// stops the run after it, and the view gets the error; the next phases
// never run.
func TestHookStops(t *testing.T) {
	var seen []Phase
	hook := func(ph Phase, fail bool) func(*Run) hcl.Diagnostics {
		return func(*Run) hcl.Diagnostics {
			seen = append(seen, ph)
			if fail {
				return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Stopped by a hook"}}
			}
			return hcl.Diagnostics{{Severity: hcl.DiagWarning, Summary: "Seen by a hook"}}
		}
	}
	op := Operation{Language: langtest.Language, Type: Apply, AutoApprove: true, Dir: specs(t, `project = "unit"`)}
	v := &recorder{hooks: map[Phase][]func(*Run) hcl.Diagnostics{
		Open: {hook(Open, false)}, Read: {hook(Read, true), hook(Read, false)}, Diff: {hook(Diff, false)},
	}}
	r := op.Start(context.Background(), v)
	if !r.Failed() {
		t.Fatal("the run went on after a hook's error")
	}
	if diff := cmp.Diff([]Phase{Load, Open, CheckPermissions, Lock, Read}, r.Ran); diff != "" {
		t.Errorf("phases (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]Phase{Open, Read}, seen); diff != "" {
		t.Errorf("hooks run (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"Seen by a hook", "Stopped by a hook"}, summaries(v.diags)); diff != "" {
		t.Errorf("diagnostics (-want +got):\n%s", diff)
	}
	if len(v.plans) != 0 || v.result {
		t.Error("a stopped run showed a plan or a result")
	}
}

// TestConfirmationNeeded: a run that must ask, with a view that cannot,
// is refused before anything is loaded.
func TestConfirmationNeeded(t *testing.T) {
	v := &recorder{}
	r := Operation{Language: langtest.Language, Type: Destroy, Dir: specs(t, `project = "unit"`)}.Start(context.Background(), v)
	if !r.Failed() || len(r.Ran) != 0 {
		t.Fatalf("failed %v after %v", r.Failed(), r.Ran)
	}
	if len(v.diags) != 1 || v.diags[0].Detail != "destroy -json needs -auto-approve: a JSON stream cannot ask for confirmation." {
		t.Errorf("diagnostics: %v", v.diags)
	}
}

// TestInvalidSpecs: a load error stops the run at load, with the error
// at its file and line.
func TestInvalidSpecs(t *testing.T) {
	v := &recorder{}
	r := Operation{Language: langtest.Language, Type: Plan, Dir: specs(t, "project = \"unit\"\nservice \"a\" {\n  port = \"x\"\n}\n")}.Start(context.Background(), v)
	if !r.Failed() || len(r.Ran) != 1 {
		t.Fatalf("failed %v after %v", r.Failed(), r.Ran)
	}
	if !v.diags.HasErrors() || v.diags[0].Subject == nil || v.diags[0].Subject.Start.Line != 3 {
		t.Errorf("diagnostics: %v", v.diags)
	}
}

// TestSavedPlanChecked: a saved plan that names a backend the specs do
// not is refused after the fresh plan, before anything is sent.
func TestSavedPlanChecked(t *testing.T) {
	dir := specs(t, `project = "unit"`)
	saved := &plans.Plan{FormatVersion: plans.FormatVersion, Project: "unit", Dir: dir,
		Backends: []plans.BackendInfo{{Name: "consul", Kind: "consul", Address: "http://127.0.0.1:1"}},
		Changes: []*plans.Change{{Addr: addrs.Addr{Kind: consul.Service, Name: "a"}, Backend: "consul", Action: plans.Create,
			Requests: []plans.Request{{Method: "PUT", Path: "/v1/agent/service/register"}}}},
		Summary: plans.Summary{Create: 1}}
	file := filepath.Join(t.TempDir(), "plan.json")
	if err := plans.WritePlanFile(file, saved); err != nil {
		t.Fatal(err)
	}
	v := &recorder{}
	r := Operation{Language: langtest.Language, Type: ApplySaved, PlanFile: file}.Start(context.Background(), v)
	if !r.Failed() {
		t.Fatal("a saved plan naming another backend was applied")
	}
	if diff := cmp.Diff([]Phase{Load, Open, CheckPermissions, Lock, Read, Diff, CheckSaved}, r.Ran); diff != "" {
		t.Errorf("phases (-want +got):\n%s", diff)
	}
	if len(v.diags) != 1 || v.diags[0].Summary != "Saved plan cannot be applied" || !strings.Contains(v.diags[0].Detail, "which the specs no longer declare") {
		t.Errorf("diagnostics: %v", v.diags)
	}
	if len(v.plans) != 0 || v.result {
		t.Error("a refused saved plan was shown or applied")
	}
}

// TestSameNodes: a saved plan's backend address is compared with the one
// the specs resolve to now as a set of nodes.
func TestSameNodes(t *testing.T) {
	for _, c := range []struct {
		a, b string
		same bool
	}{
		{"http://a:9200", "http://a:9200", true},
		{"http://a:9200,http://b:9200", "http://b:9200,http://a:9200", true},
		{"http://a:9200,http://b:9200", "http://a:9200", false},
		{"http://a:9200,http://b:9200", "http://a:9200,http://c:9200", false},
	} {
		if got := sameNodes(c.a, c.b); got != c.same {
			t.Errorf("sameNodes(%q, %q) = %t, want %t", c.a, c.b, got, c.same)
		}
	}
}

// TestReadsAfterLoad: a plan, a snapshot and an apply ask the Consul
// agent for its services once, after the specs have loaded; specs that
// fail to load (their last block does not parse) send no request at all.
func TestReadsAfterLoad(t *testing.T) {
	valid := "project = \"unit\"\n\nconsul {\n  address = %q\n}\n\nservice \"api\" {\n  port = 8080\n}\n"
	for _, typ := range []Type{Plan, Snapshot, Apply} {
		for name, tail := range map[string]string{"valid": "", "last block broken": "\nservice \"web\" {\n  port = \n}\n"} {
			t.Run(typ.String()+"/"+name, func(t *testing.T) {
				var requests, services atomic.Int32
				var loaded atomic.Bool
				agent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
					requests.Add(1)
					if !loaded.Load() {
						t.Errorf("%s %s before the specs loaded", req.Method, req.URL.Path)
					}
					switch req.URL.Path {
					case "/v1/agent/services":
						services.Add(1)
						fmt.Fprint(w, "{}")
					case "/v1/agent/checks":
						fmt.Fprint(w, "{}")
					default:
						http.NotFound(w, req)
					}
				}))
				defer agent.Close()
				dir := specs(t, fmt.Sprintf(valid, strings.TrimPrefix(agent.URL, "http://"))+tail)
				op := Operation{Language: langtest.Language, Type: typ, Dir: dir, AutoApprove: true}
				r := op.Start(context.Background(), &recorder{hooks: map[Phase][]func(*Run) hcl.Diagnostics{Load: {func(*Run) hcl.Diagnostics {
					loaded.Store(true)
					return nil
				}}}})
				switch {
				case tail != "" && (!r.Failed() || requests.Load() != 0):
					t.Errorf("specs that do not load: failed %v, %d requests, want a failure and none", r.Failed(), requests.Load())
				case tail == "" && (r.Live == nil || services.Load() != 1):
					t.Errorf("the agent was asked %d times for its services, live state %v, want once", services.Load(), r.Live)
				}
			})
		}
	}
}
