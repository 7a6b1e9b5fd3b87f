package watch

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision"
)

// TestViewHidesNestedSecrets: a secret that contains another is hidden
// whole, in the log's text and in its JSON form, whatever the order the
// specs give them in.
func TestViewHidesNestedSecrets(t *testing.T) {
	for name, secrets := range map[string][]string{
		"short first": {"s3cret", "s3cret-and-more-tail"},
		"long first":  {"s3cret-and-more-tail", "s3cret"},
	} {
		t.Run(name, func(t *testing.T) {
			var events []Event
			w := New(Options{Log: func(e Event) { events = append(events, e) }}, nil)
			w.reporting = map[string]bool{}
			v := &view{w: w}
			v.Loaded(nil, secrets)
			v.Diagnostics(hcl.Diagnostics{{Severity: hcl.DiagWarning, Summary: "Token s3cret-and-more-tail", Detail: "it holds s3cret"}})
			v.Verified(provision.Verified{Backend: "traefik.edge", Proof: provision.Proof{Line: "traefik.edge: /api?t=s3cret-and-more-tail gated"}})
			if len(events) != 2 {
				t.Fatalf("events: %v", events)
			}
			for _, e := range events {
				js, _ := json.Marshal(e)
				for _, out := range []string{e.Message, string(js)} {
					if strings.Contains(out, "s3cret") || strings.Contains(out, "tail") {
						t.Errorf("a secret shows: %s", out)
					}
				}
			}
		})
	}
}
