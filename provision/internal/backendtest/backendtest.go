// Package backendtest helps the tests of a backend against a real server:
// specs from a string, and a backend's plan read, made and sent as an
// apply would.
package backendtest

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/hashicorp/consul/api"
	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision"
	"github.com/provision-dev/provision/provision/adapter"
	"github.com/provision-dev/provision/provision/consul/client"
	"github.com/provision-dev/provision/provision/plans"
	"github.com/provision-dev/provision/schema"
)

// Config loads the specs src (one main.hcl), in lang, as a run does.
func Config(t testing.TB, lang *schema.Language, src string) *schema.Config {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.hcl"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, diags := schema.NewParser(lang).LoadDir(dir, schema.Inputs{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	return cfg
}

// Changes reads b and plans it: the changes that do something.
func Changes(t testing.TB, b provision.Backend) []*plans.Change {
	t.Helper()
	return Plan(t, b, Read(t, b))
}

// Read reads b's live state.
func Read(t testing.TB, b provision.Backend) plans.State {
	t.Helper()
	st, diags := b.Read(context.Background(), plans.Converge)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	return st
}

// Plan plans b from the state st: the changes that do something.
func Plan(t testing.TB, b provision.Backend, st plans.State) []*plans.Change {
	t.Helper()
	planned, diags := provision.PlanBackend(plans.Converge, b, st)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	return slices.DeleteFunc(planned.Changes, func(c *plans.Change) bool { return c.Action == plans.NoOp })
}

// Send sends the requests of changes to b, in order.
func Send(t testing.TB, b provision.Backend, changes []*plans.Change) {
	t.Helper()
	for _, c := range changes {
		for _, r := range c.Requests {
			if err := b.Send(context.Background(), r); err != nil {
				t.Fatalf("%s: %s %s: %v", c.Addr, r.Method, r.Path, err)
			}
		}
	}
}

// ConsulAgent is the client of the Consul agent at addr (a URL), with
// token, as the specs' consul block (at main.hcl) would open it.
func ConsulAgent(t testing.TB, addr, token string) *client.Agent {
	t.Helper()
	conf := api.DefaultNonPooledConfig()
	conf.Address, conf.Token = addr, token
	a, err := client.Open(conf, adapter.Deadlines{}.OrDefault(), "", hcl.Range{Filename: "main.hcl"})
	if err != nil {
		t.Fatal(err)
	}
	return a
}
