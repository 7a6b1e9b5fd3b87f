// Package planstest makes plans for the tests of the packages that
// read, render and apply them.
package planstest

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/provision-dev/provision/provision/addrs"
	"github.com/provision-dev/provision/provision/plans"
)

// Plan is a plan of n objects of kind to create (services, as their
// bodies say), each with a body padded to about bodySize bytes, in apply
// order.
func Plan(kind addrs.Kind, n, bodySize int) *plans.Plan {
	p := &plans.Plan{FormatVersion: plans.FormatVersion, Project: "edge"}
	for i := range n {
		body, _ := json.Marshal(map[string]string{"ID": fmt.Sprintf("svc-%04d", i), "pad": strings.Repeat("x", bodySize)})
		p.Changes = append(p.Changes, &plans.Change{
			Addr:     addrs.Addr{Kind: kind, Name: fmt.Sprintf("svc-%04d", i)},
			Action:   plans.Create,
			After:    plans.ViewOf(body),
			Requests: []plans.Request{{Method: "PUT", Path: "/v1/agent/service/register", Body: body}},
		})
	}
	p.Sort()
	return p
}

// Change is a change of the object of kind and name on the backend "b",
// with a PUT to each of paths.
func Change(kind addrs.Kind, name string, action plans.Action, paths ...string) *plans.Change {
	c := &plans.Change{Addr: addrs.Addr{Kind: kind, Name: name}, Backend: "b", Action: action}
	for _, p := range paths {
		c.Requests = append(c.Requests, plans.Request{Method: "PUT", Path: p})
	}
	return c
}
