package labels_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/provision-dev/provision/provision/traefik/labels"
)

// TestClaims: which live routers serve a probe's request, for the rule
// forms Traefik 2 and 3 list (the rules provision writes, a rogue one, the
// default Host routers, and rules it cannot read).
func TestClaims(t *testing.T) {
	api, hp := labels.Probe{Path: "/api"}, labels.Probe{Path: "/hp", Host: "a.example.com"}
	tests := map[string]struct {
		rule    string
		api, hp bool
	}{
		"Path":                            {"Path(`/api`)", true, false},
		"Path, another path":              {"Path(`/v2/api`)", false, false},
		"two paths (the common form)":     {"(Path(`/two`) || Path(`/api`))", true, false},
		"Traefik 2 list of paths":         {"Path(`/two`, `/api`)", true, false},
		"PathPrefix":                      {"PathPrefix(`/a`)", true, false},
		"PathPrefix /":                    {"PathPrefix(`/`)", true, true},
		"Host and PathPrefix":             {"Host(`a.example.com`) && PathPrefix(`/hp`)", false, true},
		"Host in another case":            {"Host(`A.Example.com`) && PathPrefix(`/hp`)", false, true},
		"default router of a service":     {"Host(`gated-api`)", false, false},
		"a rule with no path, no host":    {"Method(`GET`)", true, true},
		"a regexp it does not read":       {"PathRegexp(`^/api`)", false, false},
		"api@internal (other entrypoint)": {"PathPrefix(`/api`) || PathPrefix(`/dashboard`)", true, false},
		"a host or a prefix":              {"Host(`other`) || PathPrefix(`/api`)", true, false},
		"a host and either path":          {"Host(`a.example.com`) && (Path(`/x`) || PathPrefix(`/hp`))", false, true},
		"not the prefix":                  {"!PathPrefix(`/api`)", false, false},
		"a quoted parenthesis":            {"Path(`/a(b`) || Path(`/api`)", true, false},
		"a group, or a path":              {"(Path(`/a`) && Method(`GET`)) || Path(`/api`)", true, false},
	}
	for name, tt := range tests {
		c := labels.ReadRule(tt.rule)
		if got := [2]bool{c.Claims(api), c.Claims(hp)}; got != [2]bool{tt.api, tt.hp} {
			t.Errorf("%s: %s claims /api, /hp (Host a.example.com) = %v, want %v", name, tt.rule, got, [2]bool{tt.api, tt.hp})
		}
	}
}

// TestProbes: each path of a rule, with the Host of a Host matcher; a
// PathPrefix at the prefix itself; "/" for a rule without a path.
func TestProbes(t *testing.T) {
	tests := map[string][]labels.Probe{
		"Path:/api":                         {{Path: "/api"}},
		"Path:/two,/v2/two":                 {{Path: "/two"}, {Path: "/v2/two"}},
		"Host:a.example.com;PathPrefix:/hp": {{Path: "/hp", Host: "a.example.com"}},
		"Host:a.example.com,b.example.com":  {{Path: "/", Host: "a.example.com"}, {Path: "/", Host: "b.example.com"}},
	}
	for rule, want := range tests {
		r, err := labels.ParseRule(rule)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, r.Probes()); diff != "" {
			t.Errorf("%s (-want +got):\n%s", rule, diff)
		}
	}
}

// TestClaimsV1: the same question for the rules of Traefik 1.7's
// frontends, the routes of one frontend joined by ";" as readV1 joins
// them.
func TestClaimsV1(t *testing.T) {
	api, hp := labels.Probe{Path: "/api"}, labels.Probe{Path: "/hp", Host: "a.example.com"}
	tests := map[string]struct {
		rule    string
		api, hp bool
	}{
		"Path":                           {"Path:/api", true, false},
		"Path, another path":             {"Path:/v2/api", false, false},
		"several paths":                  {"Path:/two,/api", true, false},
		"PathPrefix":                     {"PathPrefix:/a", true, false},
		"PathPrefixStrip":                {"PathPrefixStrip:/api", true, false},
		"PathPrefix /":                   {"PathPrefix:/", true, true},
		"Host and PathPrefix":            {"Host:a.example.com;PathPrefix:/hp", false, true},
		"Host in another case":           {"Host:A.Example.com;PathPrefix:/hp", false, true},
		"two routes of one frontend":     {"Host:a.example.com;PathPrefix:/hp", false, true},
		"default frontend of a service":  {"Host:gated-api.service.consul", false, false},
		"a path with a template":         {"Path:/api/{id:[0-9]+}", false, false},
		"a matcher it does not read":     {"PathPrefix:/api;Method:GET", false, false},
		"a modifier beside the matcher":  {"PathPrefix:/api;AddPrefix:/v1", true, false},
		"spaces around terms and values": {" Path: /two , /api ", true, false},
	}
	for name, tt := range tests {
		c := labels.ReadRuleV1(tt.rule)
		if got := [2]bool{c.Claims(api), c.Claims(hp)}; got != [2]bool{tt.api, tt.hp} {
			t.Errorf("%s: %s claims /api, /hp (Host a.example.com) = %v, want %v", name, tt.rule, got, [2]bool{tt.api, tt.hp})
		}
	}
}
