package plans_test

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/provision-dev/provision/provision/addrs"
	"github.com/provision-dev/provision/provision/consul"
	"github.com/provision-dev/provision/provision/plans"
	"github.com/provision-dev/provision/provision/plans/planstest"
	"github.com/provision-dev/provision/provision/search"
)

func TestTarget(t *testing.T) {
	p := planstest.Plan(consul.Service, 3, 1)
	if err := p.Target([]addrs.Addr{{Kind: consul.Service, Name: "svc-0001"}, {Kind: consul.Service, Name: "svc-0002"}}, []addrs.Addr{{Kind: consul.Service, Name: "svc-0002"}}); err != nil {
		t.Fatal(err)
	}
	if len(p.Changes) != 1 || p.Changes[0].Addr.Name != "svc-0001" || p.Summary.Create != 1 {
		t.Errorf("targeted plan: %+v", p.Summary)
	}
	if err := planstest.Plan(consul.Service, 3, 1).Target([]addrs.Addr{{Kind: consul.Service, Name: "svc-9"}}, nil); err == nil || !strings.Contains(err.Error(), "service.svc-9 matches no object") {
		t.Errorf("an unknown target: %v", err)
	}
}

// TestTargetModule: a module instance's address targets every object it
// declares, and only those.
func TestTargetModule(t *testing.T) {
	p := planstest.Plan(consul.Service, 4, 1)
	for i, m := range []addrs.Module{`module.gated["a"]`, `module.gated["a"].module.inner`, `module.gated["ab"]`, addrs.Root} {
		p.Changes[i].Addr.Module = m
	}
	if err := p.Target([]addrs.Addr{{Module: `module.gated["a"]`}}, nil); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range p.Changes {
		got = append(got, c.Addr.String())
	}
	if want := []string{`module.gated["a"].service.svc-0000`, `module.gated["a"].module.inner.service.svc-0001`}; !slices.Equal(got, want) {
		t.Errorf("targeted: %q, want %q", got, want)
	}
}

func TestRedacted(t *testing.T) {
	p := planstest.Plan(consul.Service, 1, 1)
	p.Changes[0].After = plans.ViewOf(json.RawMessage(`{"Meta":{"api_token":"s3cr3t","team":"edge"}}`))
	p.Changes[0].Requests[0].Body = json.RawMessage(`{"ID":"x","Meta":{"Password":"s3cr3t"}}`)
	// A KV entry under a path named like a secret keeps its shape (a
	// snapshot of it reads back), its strings hidden.
	p.Changes[0].Before = plans.ViewOf(json.RawMessage(`{"keys":{"apps/edge/token":{"flags":5,"value":"s3cr3t","tags":["a"]}}}`))
	r := p.Redacted()
	got := []string{string(r.Changes[0].After.JSON()), string(r.Changes[0].Requests[0].Body), string(r.Changes[0].Before.JSON())}
	want := []string{`{"Meta":{"api_token":"(sensitive)","team":"edge"}}`, `{"ID":"x","Meta":{"Password":"(sensitive)"}}`,
		`{"keys":{"apps/edge/token":{"flags":5,"tags":["(sensitive)"],"value":"(sensitive)"}}}`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if !strings.Contains(string(p.Changes[0].After.JSON()), "s3cr3t") {
		t.Error("Redacted changed the plan itself; a saved plan needs the real values")
	}
}

// TestTargetNeeds: a targeted document brings the index it is written
// into; excluding that index while keeping the document is an error.
func TestTargetNeeds(t *testing.T) {
	index := &plans.Change{Addr: addrs.Addr{Kind: search.Index, Name: ".dashboard"}, Action: plans.Update, Requests: []plans.Request{{Method: "PUT", Path: "/.dashboard/_mapping/search"}}}
	doc := &plans.Change{Addr: addrs.Addr{Kind: search.Document, Name: ".dashboard/search/errors"}, Action: plans.Create, Requests: []plans.Request{{Method: "PUT", Path: "/.dashboard/search/errors"}},
		Needs: []addrs.Addr{index.Addr}}
	other := &plans.Change{Addr: addrs.Addr{Kind: consul.Service, Name: "api"}, Action: plans.Create, Requests: []plans.Request{{Method: "PUT"}}}
	p := &plans.Plan{Changes: []*plans.Change{other, index, doc}}
	if err := p.Target([]addrs.Addr{doc.Addr}, nil); err != nil || len(p.Changes) != 2 || p.Changes[0] != index || p.Changes[1] != doc {
		t.Errorf("-target the document: %v %v", p.Changes, err)
	}
	p = &plans.Plan{Changes: []*plans.Change{other, index, doc}}
	if err := p.Target(nil, []addrs.Addr{index.Addr}); err == nil || !strings.Contains(err.Error(), `document[".dashboard/search/errors"] needs index[".dashboard"], which -exclude leaves out`) {
		t.Errorf("-exclude the index: %v", err)
	}
}

// TestUnescape: the escapes json.Marshal writes for &, < and > become
// the characters; an escaped backslash before a u stays as it is, and the
// JSON stays the same value.
func TestUnescape(t *testing.T) {
	for in, want := range map[string]string{
		`"Host(\u0060a\u0060) \u0026\u0026 Path(\u0060/api\u0060)"`: "\"Host(\\u0060a\\u0060) && Path(\\u0060/api\\u0060)\"",
		`"a \u003c b \u003e c"`: `"a < b > c"`,
		`"\\u0026 stays"`:       `"\\u0026 stays"`,
		`"\\\u0026"`:            `"\\&"`,
		`{"k":"v"}`:             `{"k":"v"}`,
	} {
		got := string(plans.Unescape([]byte(in)))
		if got != want {
			t.Errorf("Unescape(%s) = %s, want %s", in, got, want)
		}
		var a, b any
		if json.Unmarshal([]byte(in), &a) != nil || json.Unmarshal([]byte(got), &b) != nil || !reflect.DeepEqual(a, b) {
			t.Errorf("Unescape(%s) = %s: not the same JSON value", in, got)
		}
	}
}
