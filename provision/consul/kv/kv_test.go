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
	"github.com/provision-dev/provision/provision"
	"github.com/provision-dev/provision/provision/consul/kv"
	"github.com/provision-dev/provision/provision/internal/backendtest"
	"github.com/provision-dev/provision/provision/langtest"
	"github.com/provision-dev/provision/provision/plans"
	"github.com/provision-dev/provision/provision/servers"
)

// store is the KV backend of the specs src on the agent at addr.
func store(t *testing.T, addr, src string) *kv.Store {
	t.Helper()
	s := kv.New(backendtest.Config(t, langtest.Language, src), "")
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
	if _, diags := provision.PlanBackend(plans.Converge, other, st); !diags.HasErrors() {
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
// store fails its check-and-set: Consul refuses its transaction whole
// (409, the failed operation by its index), that key's change says so,
// the other keys of the transaction say they were not written, and no
// transaction follows (as after any failure of an apply); a new plan and
// its batch write the rest, and leave the hand-made key alone. Values
// too long for a transaction's 512 KiB are written by themselves, and
// transactions are cut by size as well as by operations.
func TestKeysInTransactions(t *testing.T) {
	agent := servers.NewConsul(t)
	var txns, puts atomic.Int32
	target, _ := url.Parse("http://" + agent.Addr)
	proxy := httputil.NewSingleHostReverseProxy(target)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodPut && r.URL.Path == "/v1/txn":
			txns.Add(1)
		case r.Method == http.MethodPut:
			puts.Add(1)
		}
		proxy.ServeHTTP(w, r)
	}))
	defer front.Close()
	const specs = "project = \"p\"\nkey \"app\" {\n  for_each = { for i in range(50) : format(\"k%02d\", i) => i }\n  value    = each.value\n}\n"
	send := func(changes []*plans.Change) []error {
		items := make([]plans.Request, len(changes))
		for i, c := range changes {
			if len(c.Requests) != 1 || !c.Requests[0].Batch || c.Requests[0].Path != "/v1/txn" {
				t.Fatalf("%s: %d requests, want one batch item of /v1/txn: %+v", c.Addr, len(c.Requests), c.Requests)
			}
			items[i] = c.Requests[0]
		}
		return store(t, front.URL, specs).SendBatch(context.Background(), nil, items)
	}
	changes := backendtest.Changes(t, store(t, front.URL, specs))
	if len(changes) != 50 {
		t.Fatalf("%d changes, want 50", len(changes))
	}
	c, err := api.NewClient(&api.Config{Address: agent.Addr})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.KV().Put(&api.KVPair{Key: "app/k07", Value: []byte("by hand")}, nil); err != nil {
		t.Fatal(err)
	}
	errs := send(changes)
	for i, err := range errs {
		var want string
		switch n := changes[i].Addr.Name; {
		case n == "app/k07":
			want = "the key app/k07 changed since the plan read it"
		case n < "app/k21":
			want = "not written: another key of its transaction changed since the plan read it"
		default:
			want = "not sent: consul answered 409"
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v; want %q", changes[i].Addr.Name, err, want)
		}
	}
	if n := txns.Load(); n != 1 {
		t.Errorf("%d transactions, want 1 (none after the refused one)", n)
	}
	if pairs, _, _ := c.KV().List("app/", nil); len(pairs) != 1 {
		t.Errorf("%d keys under app/, want the hand-made one alone", len(pairs))
	}

	txns.Store(0)
	without := strings.Replace(specs, "=> i }", "=> i if i != 7 }", 1)
	creates := backendtest.Changes(t, store(t, front.URL, without))
	for i, err := range send(creates) {
		if err != nil {
			t.Errorf("%s, planned again: %v", creates[i].Addr.Name, err)
		}
	}
	// 147 operations: transactions of 21 keys (63 operations), 21, 7.
	if n := txns.Load(); n != 3 {
		t.Errorf("%d transactions for 49 keys, want 3", n)
	}
	pairs, _, err := c.KV().List("app/", nil)
	if err != nil || len(pairs) != 50 {
		t.Fatalf("%d keys under app/ (%v), want 50", len(pairs), err)
	}
	for _, p := range pairs {
		if mine := p.Flags>>48 == 0x5052; mine == (p.Key == "app/k07") {
			t.Errorf("%s: flags %x, value %q", p.Key, p.Flags, p.Value)
		}
	}

	// Three values of 200 KiB: a transaction each (two would pass 480 KiB
	// of base64); one of 300 KiB: its own PUT, then its record's
	// transaction.
	txns.Store(0)
	long := "project = \"q\"\nkey \"big\" {\n  for_each = { a = 200, b = 200, c = 200, d = 300 }\n  value    = format(\"%0${each.value * 1024}d\", 0)\n}\n"
	big := store(t, front.URL, long)
	changes = backendtest.Changes(t, big)
	var items []plans.Request
	for _, ch := range changes {
		if ch.Addr.Name == "big/d" {
			if len(ch.Requests) != 2 || ch.Requests[0].Path != "/v1/kv/big/d?cas=0&flags="+strings.TrimPrefix(ch.Requests[0].Path, "/v1/kv/big/d?cas=0&flags=") || ch.Requests[1].Path != "/v1/txn" {
				t.Fatalf("a 300 KiB value: %+v", ch.Requests)
			}
			for _, r := range ch.Requests {
				if err := big.Send(context.Background(), r); err != nil {
					t.Fatalf("%s %s: %v", r.Method, r.Path, err)
				}
			}
			continue
		}
		items = append(items, ch.Requests[0])
	}
	for i, err := range big.SendBatch(context.Background(), nil, items) {
		if err != nil {
			t.Errorf("a 200 KiB value (%d): %v", i, err)
		}
	}
	if n, p := txns.Load(), puts.Load(); n != 4 || p != 1 {
		t.Errorf("%d transactions and %d PUTs for three values of 200 KiB and one of 300 KiB, want 4 and 1", n, p)
	}
	if left := backendtest.Changes(t, store(t, front.URL, long)); len(left) != 0 {
		t.Errorf("the long values are not converged: %v", left)
	}
}
