package labels_test

import (
	"testing"

	"github.com/provision-dev/provision/provision/fuzzing"
	"github.com/provision-dev/provision/provision/traefik/labels"
)

// TestParseRule reads rules in the Traefik 1.7 grammar and renders them
// back normalised (the other grammars are provision/consul's RuleIn).
func TestParseRule(t *testing.T) {
	for rule, want := range map[string]string{
		"Path:/api":                          "Path:/api",
		"Host: a.example.com, b.example.com": "Host:a.example.com,b.example.com",
		"Method:GET,POST; Path:/api":         "Method:GET,POST;Path:/api",
	} {
		r, err := labels.ParseRule(rule)
		if err != nil || r.String() != want {
			t.Errorf("ParseRule(%q) = %v, %v; want %s", rule, r, err, want)
		}
	}
}

// FuzzParseRule: a rule that parses renders back to a rule that parses
// to the same.
func FuzzParseRule(f *testing.F) {
	for _, s := range []string{"Path:/api", "Host:a.example.com;PathPrefix:/api", "Path:/a,/b", "Headers:X-Env,prod", "PathStrip:/x", "Method:GET,POST;Path:/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fuzzing.Bounded(t, s, func(t testing.TB) {
			r, err := labels.ParseRule(s)
			if err != nil {
				return
			}
			again, err := labels.ParseRule(r.String())
			if err != nil || again.String() != r.String() {
				t.Fatalf("%q renders as %q, which parses as %v, %v", s, r.String(), again, err)
			}
			for _, g := range []labels.Grammar{labels.GrammarV2, labels.GrammarV3, labels.GrammarCommon} {
				r.Check(g)
			}
		})
	})
}
