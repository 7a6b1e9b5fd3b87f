package run

import (
	"strings"
	"testing"

	"github.com/provision-dev/provision/provision/addrs"
	"github.com/provision-dev/provision/provision/consul"
	"github.com/provision-dev/provision/provision/langtest"
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
		a, err := langtest.Kinds.ParseTarget(tt.in)
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
