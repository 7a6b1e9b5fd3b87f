package kv_test

import (
	"context"
	"testing"

	"github.com/hashicorp/consul/api"
	"github.com/provision-dev/provision/provision/consul/kv"
	"github.com/provision-dev/provision/provision/internal/backendtest"
	"github.com/provision-dev/provision/provision/plans"
	"github.com/provision-dev/provision/provision/servers"
)

// store is the KV backend of the specs src on the agent at addr.
func store(t *testing.T, addr, src string) *kv.Store {
	t.Helper()
	s := kv.New(backendtest.Config(t, src))
	s.Open(backendtest.ConsulAgent(t, addr, ""))
	return s
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
	changes := backendtest.Changes(t, s)
	if len(changes) != 1 || changes[0].Action != plans.Create || changes[0].Addr.String() != `key["app/x"]` {
		t.Fatalf("a new key: %v", changes)
	}
	backendtest.Send(t, s, changes)
	if changes := backendtest.Changes(t, s); len(changes) != 0 {
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
	changes = backendtest.Changes(t, s)
	if len(changes) != 1 || changes[0].Action != plans.Update {
		t.Fatalf("edited by hand: %v", changes)
	}
	backendtest.Send(t, s, changes)
	if pair, _, _ := kvAPI.Get("app/x", nil); string(pair.Value) != "1" {
		t.Errorf("set back: %q", pair.Value)
	}

	other := store(t, addr, "project = \"q\"\nkey \"app/x\" {\n  value = \"9\"\n}\n")
	st, _ := other.Read(context.Background(), plans.Converge)
	if _, diags := other.Plan(st, plans.Converge); !diags.HasErrors() {
		t.Error("project q plans over project p's key")
	}

	gone := store(t, addr, "project = \"p\"\nkey \"app/y\" {\n  value = \"1\"\n}\nremoved {\n  from = key[\"app/x\"]\n}\n")
	changes = backendtest.Changes(t, gone)
	var deleted bool
	for _, c := range changes {
		deleted = deleted || c.Action == plans.Delete && c.Addr.Name == "app/x"
	}
	if !deleted {
		t.Fatalf("a removed key: %v", changes)
	}
	backendtest.Send(t, gone, changes)
	if pair, _, _ := kvAPI.Get("app/x", nil); pair != nil {
		t.Errorf("the removed key is still there: %+v", pair)
	}
	if pair, _, _ := kvAPI.Get(kv.KeysPrefix+"p/app/x", nil); pair != nil {
		t.Errorf("its record is still there: %+v", pair)
	}
}
