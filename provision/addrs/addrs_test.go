package addrs_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/provision-dev/provision/provision/addrs"
	"github.com/provision-dev/provision/provision/consul"
	"github.com/provision-dev/provision/provision/consul/kv"
	"github.com/provision-dev/provision/provision/search"
)

func TestAddrRoundTrip(t *testing.T) {
	for _, tt := range []struct {
		addr addrs.Addr
		text string
	}{
		{addrs.Addr{Kind: consul.Service, Name: "gated-api-1"}, "service.gated-api-1"},
		{addrs.Addr{Kind: search.Index, Name: ".dashboard"}, `index[".dashboard"]`},
		{addrs.Addr{Kind: search.Index, Name: "logs"}, "index.logs"},
		{addrs.Addr{In: "agent.node-a", Kind: consul.Service, Name: "gated-api-1"}, "agent.node-a.service.gated-api-1"},
		{addrs.Addr{In: `agent.fleet["node7"]`, Kind: consul.Service, Name: "web"}, `agent.fleet["node7"].service.web`},
		{addrs.Addr{In: `agent.fleet["rack.1/b"]`, Kind: consul.Service, Name: "web"}, `agent.fleet["rack.1/b"].service.web`},
		{addrs.Addr{In: `agent.pool[12]`, Kind: consul.Service, Name: "web"}, `agent.pool[12].service.web`},
		{addrs.Addr{In: `agent.pool[0]`}, `agent.pool[0]`},
		{addrs.Addr{In: "search.t2", Kind: search.Index, Name: ".dashboard"}, `search.t2.index[".dashboard"]`},
		{addrs.Addr{In: "search.t1", Kind: search.Index, Name: "logs.2026"}, `search.t1.index["logs.2026"]`},
		{addrs.Addr{Kind: search.Document, Name: ".dashboard/index-pattern/logs-*"}, `document[".dashboard/index-pattern/logs-*"]`},
		{addrs.Addr{In: "search.t2", Kind: search.Document, Name: ".dashboard/search/errors"}, `search.t2.document[".dashboard/search/errors"]`},
		{addrs.Addr{Module: `module.gated["a"]`, Kind: consul.Service, Name: "api-a"}, `module.gated["a"].service.api-a`},
		{addrs.Addr{Module: `module.many[1].module.inner`, Kind: kv.Key, Name: "apps/c1/x"}, `module.many[1].module.inner.key["apps/c1/x"]`},
		{addrs.Addr{Module: `module.gated["a.b"]`}, `module.gated["a.b"]`},
	} {
		if got := tt.addr.String(); got != tt.text {
			t.Errorf("%v.String() = %q, want %q", tt.addr, got, tt.text)
		}
		back, err := kinds.ParseTarget(tt.text)
		if err != nil || back != tt.addr {
			t.Errorf("ParseTarget(%q) = %v, %v", tt.text, back, err)
		}
	}
	// A user may also write the dotted form of a dotted name.
	if a, err := kinds.ParseTarget("index..dashboard"); err != nil || a != (addrs.Addr{Kind: search.Index, Name: ".dashboard"}) {
		t.Errorf("ParseTarget(index..dashboard) = %v, %v", a, err)
	}
	// An instance's key is read as any Go-quoted string, and printed back
	// as addresses print it.
	if a, err := kinds.ParseTarget(`agent.fleet["\x6e7"].service.web`); err != nil || a.In != `agent.fleet["n7"]` {
		t.Errorf("ParseTarget of an escaped key = %v, %v", a, err)
	}
	for _, bad := range []string{"", "service", "cluster.x", `index[".dashboard"`, "service.", "module.", `module.m["a"`, "module.m[a].service.x", `agent.fleet["a".service.x`, `agent.fleet[a].service.x`, `agent.pool[01].service.x`, `agent.pool[-1].service.x`} {
		if _, err := kinds.ParseTarget(bad); err == nil {
			t.Errorf("ParseTarget(%q) accepted", bad)
		}
	}
}

// kinds are the kinds of these tests' addresses, given out of order.
var kinds = addrs.NewSet(kv.Key, search.Document, consul.Service, search.Index)

// TestKinds: a set lists its kinds in their order, whatever order it was
// given them in, and a second kind of a name or an order in one set is
// refused.
func TestKinds(t *testing.T) {
	var names []string
	for _, k := range kinds.All() {
		names = append(names, k.Name())
	}
	if want := []string{"service", "index", "document", "key"}; !slices.Equal(names, want) {
		t.Errorf("kinds %q, want %q", names, want)
	}
	if got := kinds.Names(); got != "service, index, document and key" {
		t.Errorf("Names() = %q", got)
	}
	if k, ok := kinds.Named("index"); !ok || k != search.Index {
		t.Errorf("Named(index) = %v, %v", k, ok)
	}
	for _, spec := range []addrs.KindSpec{{Name: "service", Order: 999}, {Name: "new", Order: 10}} {
		func() {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(r.(string), "registered twice") {
					t.Errorf("NewSet with %+v: %v, want a panic", spec, r)
				}
			}()
			addrs.NewSet(append(kinds.All(), addrs.NewKind(spec))...)
		}()
	}
}

// TestLessAndMatches: addresses sort by kind, name and place; a target
// written without its module or place matches the object in any, and a
// module instance's address every object it declares, at any depth, but
// not a sibling whose name it starts.
func TestLessAndMatches(t *testing.T) {
	ordered := []addrs.Addr{
		{Kind: consul.Service, Name: "b"},
		{In: "agent.n1", Kind: consul.Service, Name: "c"},
		{In: "agent.n2", Kind: consul.Service, Name: "c"},
		{Kind: search.Index, Name: "a"},
		{Kind: kv.Key, Name: "a"},
	}
	if !slices.IsSortedFunc(ordered, func(a, b addrs.Addr) int {
		if a.Less(b) {
			return -1
		}
		return 1
	}) {
		t.Errorf("not in order: %v", ordered)
	}
	obj := addrs.Addr{Module: `module.gated["a"].module.inner`, In: "agent.n1", Kind: consul.Service, Name: "api"}
	for target, want := range map[string]bool{
		"service.api":                                true,
		"agent.n1.service.api":                       true,
		"agent.n2.service.api":                       false,
		`module.gated["a"].module.inner.service.api`: true,
		`module.gated["a"].service.api`:              false,
		`module.gated["a"]`:                          true,
		`module.gated`:                               true,
		`module.gated["ab"]`:                         false,
		"key.api":                                    false,
	} {
		a, err := kinds.ParseTarget(target)
		if err != nil {
			t.Fatal(err)
		}
		if got := obj.Matches(a); got != want {
			t.Errorf("%s matches %s: %v, want %v", target, obj, got, want)
		}
	}
}

// TestResolve: the addresses JSON decoded (kept as text: JSON cannot be
// handed the kinds) are read by the set wherever they are, in an
// embedded struct's promoted fields and a map's keys too; two keys that
// are one address, and an empty one, are refused as ParseTarget refuses
// them.
func TestResolve(t *testing.T) {
	type inner struct{ A addrs.Addr }
	var got struct {
		inner
		M map[addrs.Addr]int
		L []*addrs.Addr
	}
	if err := json.Unmarshal([]byte(`{"A":"service.x","M":{"agent.n1.service.y":1},"L":["key[\"a/b\"]"]}`), &got); err != nil {
		t.Fatal(err)
	}
	if err := kinds.Resolve(&got); err != nil {
		t.Fatal(err)
	}
	if got.A != (addrs.Addr{Kind: consul.Service, Name: "x"}) || got.M[addrs.Addr{In: "agent.n1", Kind: consul.Service, Name: "y"}] != 1 || *got.L[0] != (addrs.Addr{Kind: kv.Key, Name: "a/b"}) {
		t.Errorf("resolved: %+v", got)
	}
	for src, want := range map[string]string{
		`{"M":{"index..d":1,"index[\".d\"]":2}}`: `index[".d"] is written twice`,
		`{"A":""}`:                               `"" is not an address; write service.<id>`,
	} {
		var bad struct {
			A addrs.Addr
			M map[addrs.Addr]int
		}
		if err := json.Unmarshal([]byte(src), &bad); err != nil {
			t.Fatal(err)
		}
		if err := kinds.Resolve(&bad); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("Resolve(%s): %v, want %s...", src, err, want)
		}
	}
}
