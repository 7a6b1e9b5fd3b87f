package provision

import (
	"testing"

	"github.com/provision-dev/provision/provision/addrs"
	"github.com/provision-dev/provision/provision/plans"
)

// TestReplaced: -replace takes an owned object of a kind it replaces (a
// service, here a kind made as a service is) that the plan updates
// or leaves; an object it creates or deletes, or one of another kind (a
// key), is refused, naming the kinds it takes and what it does to them.
func TestReplaced(t *testing.T) {
	key := addrs.NewKind(addrs.KindSpec{Name: "kept-key", Form: "kept-key.<name>", Order: 91})
	service := addrs.NewKind(addrs.KindSpec{Name: "remade", Form: "remade.<id>", Order: 90, Replace: "registered again in place"})
	svc := func(name string) addrs.Addr { return addrs.Addr{Kind: service, Name: name} }
	p := &plans.Plan{Changes: []*plans.Change{
		{Addr: svc("kept"), Action: plans.NoOp},
		{Addr: svc("new"), Action: plans.Create},
		{Addr: svc("gone"), Action: plans.Delete},
		{Addr: addrs.Addr{Kind: key, Name: "apps/a"}, Action: plans.NoOp},
	}}
	kinds := addrs.NewSet(key, service)
	if err := replaced(p, kinds, []addrs.Addr{svc("kept")}); err != nil {
		t.Errorf("an owned service the plan leaves: %v", err)
	}
	for _, a := range []addrs.Addr{svc("new"), svc("gone"), svc("undeclared"), {Kind: key, Name: "apps/a"}} {
		err := replaced(p, kinds, []addrs.Addr{a})
		if want := "-replace " + a.String() + " names no remade that the specs declare and the project owns: only such a remade is registered again in place"; err == nil || err.Error() != want {
			t.Errorf("-replace %s: %v", a, err)
		}
	}
}
