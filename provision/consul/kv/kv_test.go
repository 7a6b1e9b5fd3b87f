package kv_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
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

// TestKeysInTransactions: on a real agent, behind a front that counts
// the transactions, the creates of 50 keys (three operations each: the
// key's check-and-set, its record's delete and set) go in transactions
// of at most 64 operations. One key made by hand after the plan read the
// store fails its check-and-set: Consul refuses that transaction whole
// (409, the failed operation by its index), and its other keys are sent
// again without it, so that every other key is written and that one is
// left as the hand made it, with an error that says so.
func TestKeysInTransactions(t *testing.T) {
	agent := servers.NewConsul(t)
	var txns atomic.Int32
	target, _ := url.Parse("http://" + agent.Addr)
	proxy := httputil.NewSingleHostReverseProxy(target)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut && r.URL.Path == "/v1/txn" {
			txns.Add(1)
		}
		proxy.ServeHTTP(w, r)
	}))
	defer front.Close()
	s := store(t, front.URL, "project = \"p\"\nkey \"app\" {\n  for_each = { for i in range(50) : format(\"k%02d\", i) => i }\n  value    = each.value\n}\n")
	changes := backendtest.Changes(t, s)
	if len(changes) != 50 {
		t.Fatalf("%d changes, want 50", len(changes))
	}
	items := make([]plans.Request, len(changes))
	for i, c := range changes {
		if len(c.Requests) != 1 || !c.Requests[0].Batch || c.Requests[0].Path != "/v1/txn" {
			t.Fatalf("%s: %d requests, want one batch item of /v1/txn: %+v", c.Addr, len(c.Requests), c.Requests)
		}
		items[i] = c.Requests[0]
	}
	c, err := api.NewClient(&api.Config{Address: agent.Addr})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.KV().Put(&api.KVPair{Key: "app/k07", Value: []byte("by hand")}, nil); err != nil {
		t.Fatal(err)
	}
	errs := s.SendBatch(context.Background(), nil, items)
	for i, err := range errs {
		name := changes[i].Addr.Name
		if name == "app/k07" {
			if err == nil || !strings.Contains(err.Error(), "the key app/k07 changed since the plan read it") {
				t.Errorf("%s, made by hand since the plan: %v", name, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	// 150 operations: transactions of 21 keys (63 operations), 21, 8; the
	// first refused for k07 and sent again without it.
	if n := txns.Load(); n != 4 {
		t.Errorf("%d transactions, want 4", n)
	}
	pairs, _, err := c.KV().List("app/", nil)
	if err != nil || len(pairs) != 50 {
		t.Fatalf("%d keys under app/ (%v), want 50", len(pairs), err)
	}
	for _, p := range pairs {
		mine := p.Flags>>48 == 0x5052
		if mine == (p.Key == "app/k07") {
			t.Errorf("%s: flags %x, value %q", p.Key, p.Flags, p.Value)
		}
	}
	if left := backendtest.Changes(t, store(t, front.URL, "project = \"p\"\nkey \"app\" {\n  for_each = { for i in range(50) : format(\"k%02d\", i) => i }\n  value    = each.value\n}\nimport {\n  to = key[\"app/k07\"]\n}\n")); len(left) != 1 || left[0].Addr.Name != "app/k07" {
		t.Errorf("after the batch, the plan is not the hand-made key alone: %v", left)
	}
}
