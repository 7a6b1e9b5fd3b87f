package consul_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/provision-dev/provision/provision/consul"
	"github.com/provision-dev/provision/provision/internal/golden"
	"github.com/provision-dev/provision/provision/langtest"
	"github.com/provision-dev/provision/provision/traefik/labels"
	"github.com/provision-dev/provision/schema"
)

// TestTags pins the exact tag strings of every dialect: the Traefik 1.7
// Consul catalog grammar, which no server here can check, and Traefik 2's,
// which the end-to-end test also runs through a real Traefik.
func TestTags(t *testing.T) {
	cfg, diags := schema.NewParser(langtest.Language).LoadDir("../../testdata/tags", schema.Inputs{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	for _, d := range []labels.Dialect{labels.DialectTraefik, labels.DialectTraefikV1, labels.DialectTraefikV2, labels.DialectTraefikV3} {
		t.Run(string(d), func(t *testing.T) {
			var out bytes.Buffer
			for _, s := range consul.Services(cfg) {
				fmt.Fprintf(&out, "service %q:\n", s.Service)
				for _, tag := range consul.Tags(consul.Proxy{Dialect: d, Prefix: "traefik"}, s) {
					fmt.Fprintf(&out, "  %s\n", tag)
				}
			}
			golden.Check(t, "../../testdata/golden/tags/"+string(d)+".txt", out.Bytes())
		})
	}
}

// TestRuleIn renders rules in the grammars of the http.* tags: Traefik 2's
// (values inside one matcher), Traefik 3's and the common one (one value
// a matcher, || groups), or says which generation refuses which form.
func TestRuleIn(t *testing.T) {
	tests := []struct{ rule, v2, v3, common string }{
		{"Path:/api", "Path(`/api`)", "Path(`/api`)", "Path(`/api`)"},
		{"Host:a.example.com;PathPrefix:/api", "Host(`a.example.com`) && PathPrefix(`/api`)", "Host(`a.example.com`) && PathPrefix(`/api`)", "Host(`a.example.com`) && PathPrefix(`/api`)"},
		{"Path:/api,/v2/api", "Path(`/api`, `/v2/api`)", "(Path(`/api`) || Path(`/v2/api`))", "(Path(`/api`) || Path(`/v2/api`))"},
		{"Method:GET,POST;Path:/api", "Method(`GET`, `POST`) && Path(`/api`)", "(Method(`GET`) || Method(`POST`)) && Path(`/api`)", "(Method(`GET`) || Method(`POST`)) && Path(`/api`)"},
		{"PathPrefix:/h;Headers:X-Env,prod", "PathPrefix(`/h`) && Headers(`X-Env`, `prod`)", "PathPrefix(`/h`) && Header(`X-Env`, `prod`)", "error: Headers has no form that both Traefik 2 and Traefik 3 accept alike"},
		{"Query:env=prod,env=stage", "Query(`env=prod`, `env=stage`)", "(Query(`env`, `prod`) || Query(`env`, `stage`))", "error: Query has no form"},
		{"HostRegexp:{sub:[a-z]+}.example.com", "HostRegexp(`{sub:[a-z]+}.example.com`)", "error: the matcher HostRegexp with a {name:regexp} placeholder is Traefik 2 syntax", "error: HostRegexp has no form"},
		{"PathPrefix:/api/{id:[0-9]+}", "PathPrefix(`/api/{id:[0-9]+}`)", "error: PathPrefix with a {name:regexp} placeholder", "error: PathPrefix with a {name:regexp} placeholder"},
		{"PathStrip:/api", "error: PathStrip is a Traefik 1 modifier", "error: PathStrip is a Traefik 1 modifier", "error: PathStrip is a Traefik 1 modifier"},
	}
	for _, tt := range tests {
		r, err := labels.ParseRule(tt.rule)
		if err != nil {
			t.Fatal(err)
		}
		for g, want := range map[labels.Grammar]string{labels.GrammarV2: tt.v2, labels.GrammarV3: tt.v3, labels.GrammarCommon: tt.common} {
			got, err := consul.RuleIn(r, g)
			if err != nil {
				got = "error: " + err.Error()
			}
			if !strings.HasPrefix(got, want) {
				t.Errorf("%s in grammar %d: got %q, want %q", tt.rule, g, got, want)
			}
		}
	}
}

// TestRouterChanges: the words a plan says of the routers a take-over
// changes, and whether a live router goes.
func TestRouterChanges(t *testing.T) {
	for _, tc := range []struct {
		have, want []string
		words      string
		removes    bool
	}{
		{[]string{"traefik.http.routers.Router1.rule=Host(`foo.com`)"}, []string{"traefik.http.routers.Test.rule=Host(`foo.com`)", "traefik.frontend.rule=Host:foo.com"},
			"the proxy's routers change: http router Router1 renamed Test, Traefik 1 frontend added", true},
		{[]string{"traefik.frontend.rule=Path:/api"}, []string{"traefik.frontend.rule=Path:/api", "traefik.http.routers.api.rule=Path(`/api`)"},
			"the proxy's routers change: http router api added", false},
		{[]string{"traefik.tcp.routers.db.rule=HostSNI(`*`)", "traefik.enable=true"}, []string{"traefik.enable=true"},
			"the proxy's routers change: tcp router db removed", true},
		{[]string{"traefik.http.routers.a.rule=Path(`/a`)"}, []string{"traefik.http.routers.a.rule=Path(`/b`)"}, "", false},
	} {
		words, removes := consul.RouterChanges("traefik", tc.have, tc.want)
		if words != tc.words || removes != tc.removes {
			t.Errorf("RouterChanges(%q, %q) = %q, %t; want %q, %t", tc.have, tc.want, words, removes, tc.words, tc.removes)
		}
	}
}
