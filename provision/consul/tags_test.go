package consul_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/provision-dev/provision/provision/consul"
	"github.com/provision-dev/provision/provision/internal/golden"
	"github.com/provision-dev/provision/schema"
)

// TestTags pins the exact tag strings of every dialect: the Traefik 1.7
// Consul catalog grammar, which no server here can check, and Traefik 2's,
// which the end-to-end test also runs through a real Traefik.
func TestTags(t *testing.T) {
	cfg, diags := schema.NewParser().LoadDir("../../testdata/tags", schema.Inputs{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	for _, d := range []schema.Dialect{schema.DialectTraefik, schema.DialectTraefikV1, schema.DialectTraefikV2} {
		t.Run(string(d), func(t *testing.T) {
			var out bytes.Buffer
			for _, s := range cfg.Services {
				fmt.Fprintf(&out, "service %q:\n", s.Name)
				for _, tag := range consul.Tags(schema.Proxy{Dialect: d, Prefix: "traefik"}, s) {
					fmt.Fprintf(&out, "  %s\n", tag)
				}
			}
			golden.Check(t, "../../testdata/golden/tags/"+string(d)+".txt", out.Bytes())
		})
	}
}
