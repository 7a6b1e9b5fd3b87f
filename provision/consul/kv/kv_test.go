package kv_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/hashicorp/consul/api"
	"github.com/provision-dev/provision/provision/adapter"
	"github.com/provision-dev/provision/provision/consul/client"
	"github.com/provision-dev/provision/provision/consul/kv"
	"github.com/provision-dev/provision/provision/plans"
	"github.com/provision-dev/provision/provision/servers"
	"github.com/provision-dev/provision/schema"
)

// store is the KV backend of the specs src on the agent at addr.
func store(t *testing.T, addr, src string) *kv.Store {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.hcl"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, diags := schema.NewParser().LoadDir(dir, schema.Inputs{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	conf := api.DefaultNonPooledConfig()
	conf.Address = addr
	a, err := client.Open(conf, adapter.Deadlines{}.OrDefault(), "", cfg.ProjectRange)
	if err != nil {
		t.Fatal(err)
	}
	s := kv.New(cfg)
	s.Open(a)
	return s
}

// plan reads the store and plans it: the changes that do something.
func plan(t *testing.T, s *kv.Store) []*plans.Change {
	t.Helper()
	st, diags := s.Read(context.Background(), plans.Converge)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	planned, diags := s.Plan(st, plans.Converge)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	var out []*plans.Change
	for _, c := range planned.Changes {
		if c.Action != plans.NoOp {
			out = append(out, c)
		}
	}
	return out
}

func apply(t *testing.T, s *kv.Store, changes []*plans.Change) {
	t.Helper()
	for _, c := range changes {
		for _, r := range c.Requests {
			if err := s.Send(context.Background(), r); err != nil {
				t.Fatalf("%s: %s %s: %v", c.Addr, r.Method, r.Path, err)
			}
		}
	}
}

// TestKeyLife: on a real agent, a declared key is created and then left
// alone; a value written by hand (consul kv put, which drops the flags
// that mark it) is still the project's by its record and is set back; a
// key another project wrote is refused; a key removed from the specs is
// deleted with its record.
func TestKeyLife(t *testing.T) {
	agent := servers.NewConsul(t)
	addr := "http://" + agent.Addr
	s := store(t, addr, "project = \"p\"\nkey \"app/x\" {\n  value = \"1\"\n  flags = 3\n}\n")
	changes := plan(t, s)
	if len(changes) != 1 || changes[0].Action != plans.Create || changes[0].Addr.String() != `key["app/x"]` {
		t.Fatalf("a new key: %v", changes)
	}
	apply(t, s, changes)
	if changes := plan(t, s); len(changes) != 0 {
		t.Fatalf("converged: %v", changes)
	}
	c, err := api.NewClient(&api.Config{Address: agent.Addr})
	if err != nil {
		t.Fatal(err)
	}
	kvAPI := c.KV()
	pair, _, err := kvAPI.Get("app/x", nil)
	if err != nil || string(pair.Value) != "1" || pair.Flags&0xffffffff != 3 || pair.Flags>>48 != 0x5052 {
		t.Fatalf("the key as written: %+v %v", pair, err)
	}
	if _, err := kvAPI.Put(&api.KVPair{Key: "app/x", Value: []byte("2")}, nil); err != nil {
		t.Fatal(err)
	}
	changes = plan(t, s)
	if len(changes) != 1 || changes[0].Action != plans.Update {
		t.Fatalf("edited by hand: %v", changes)
	}
	apply(t, s, changes)
	if pair, _, _ := kvAPI.Get("app/x", nil); string(pair.Value) != "1" {
		t.Errorf("set back: %q", pair.Value)
	}

	other := store(t, addr, "project = \"q\"\nkey \"app/x\" {\n  value = \"9\"\n}\n")
	st, _ := other.Read(context.Background(), plans.Converge)
	if _, diags := other.Plan(st, plans.Converge); !diags.HasErrors() {
		t.Error("project q plans over project p's key")
	}

	gone := store(t, addr, "project = \"p\"\nkey \"app/y\" {\n  value = \"1\"\n}\nremoved {\n  from = key[\"app/x\"]\n}\n")
	changes = plan(t, gone)
	var deleted bool
	for _, c := range changes {
		deleted = deleted || c.Action == plans.Delete && c.Addr.Name == "app/x"
	}
	if !deleted {
		t.Fatalf("a removed key: %v", changes)
	}
	apply(t, gone, changes)
	if pair, _, _ := kvAPI.Get("app/x", nil); pair != nil {
		t.Errorf("the removed key is still there: %+v", pair)
	}
	if pair, _, _ := kvAPI.Get(kv.KeysPrefix+"p/app/x", nil); pair != nil {
		t.Errorf("its record is still there: %+v", pair)
	}
}
