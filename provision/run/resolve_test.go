package run

import (
	"strings"
	"testing"

	"github.com/provision-dev/provision/provision/addrs"
	"github.com/provision-dev/provision/provision/consul"
	_ "github.com/provision-dev/provision/provision/consul/kv"
	"github.com/provision-dev/provision/provision/plans"
)

// TestResolve: an address without its module or place names the one
// declared object of that kind and name; with several it is refused
// naming each full address, with none too.
func TestResolve(t *testing.T) {
	declared := []addrs.Addr{
		{Module: `module.gated_api["edge"]`, Kind: consul.Service, Name: "gated-api-1"},
		{Module: `module.a`, In: "agent.n1", Kind: consul.Service, Name: "web"},
		{Module: `module.b`, In: "agent.n2", Kind: consul.Service, Name: "web"},
		{Module: `module.counted[1]`, Kind: consul.Service, Name: "c-1"},
		{Module: `module.outer["x"].module.inner`, Kind: consul.Service, Name: "nested"},
	}
	for _, tt := range []struct{ in, want string }{
		{"service.gated-api-1", `module.gated_api["edge"].service.gated-api-1`},
		{`module.gated_api["edge"].service.gated-api-1`, `module.gated_api["edge"].service.gated-api-1`},
		{"agent.n2.service.web", "module.b.agent.n2.service.web"},
		{"service.web", "error: service.web names 2 objects the specs declare: write one of module.a.agent.n1.service.web, module.b.agent.n2.service.web"},
		{"service.nope", "error: service.nope names no object the specs declare"},
		{"service.c-1", `module.counted[1].service.c-1`},
		{`module.counted[1].service.c-1`, `module.counted[1].service.c-1`},
		{"service.nested", `module.outer["x"].module.inner.service.nested`},
		{`module.outer["x"].module.inner.service.nested`, `module.outer["x"].module.inner.service.nested`},
		{`module.other.service.gated-api-1`, "error: module.other.service.gated-api-1 names no object"},
	} {
		a, err := addrs.ParseTarget(tt.in)
		if err != nil {
			t.Fatal(err)
		}
		got, err := resolve([]addrs.Addr{a}, declared)
		switch {
		case strings.HasPrefix(tt.want, "error: "):
			if err == nil || !strings.HasPrefix(err.Error(), strings.TrimPrefix(tt.want, "error: ")) {
				t.Errorf("%s: %v, %v; want %s", tt.in, got, err, tt.want)
			}
		case err != nil || len(got) != 1 || got[0].String() != tt.want:
			t.Errorf("%s: %v, %v; want %s", tt.in, got, err, tt.want)
		}
	}
}

// TestReplaced: -replace takes an owned object of a kind it replaces (a
// service) that the plan updates or leaves; an object it creates or
// deletes, or one of another kind (a key), is refused, naming the kinds
// it takes and what it does to them.
func TestReplaced(t *testing.T) {
	key, _ := addrs.KindNamed("key")
	svc := func(name string) addrs.Addr { return addrs.Addr{Kind: consul.Service, Name: name} }
	p := &plans.Plan{Changes: []*plans.Change{
		{Addr: svc("kept"), Action: plans.NoOp},
		{Addr: svc("new"), Action: plans.Create},
		{Addr: svc("gone"), Action: plans.Delete},
		{Addr: addrs.Addr{Kind: key, Name: "apps/a"}, Action: plans.NoOp},
	}}
	if err := replaced(p, []addrs.Addr{svc("kept")}); err != nil {
		t.Errorf("an owned service the plan leaves: %v", err)
	}
	for _, a := range []addrs.Addr{svc("new"), svc("gone"), svc("undeclared"), {Kind: key, Name: "apps/a"}} {
		err := replaced(p, []addrs.Addr{a})
		if want := "-replace " + a.String() + " names no service that the specs declare and the project owns: only such a service is registered again in place"; err == nil || err.Error() != want {
			t.Errorf("-replace %s: %v", a, err)
		}
	}
}
