// Package planstest makes plans for the tests of the packages that
// read, render and apply them.
package planstest

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/provision-dev/provision/provision/plans"
)

// Plan is a plan of n services to create, each with a body padded to
// about bodySize bytes, in apply order.
func Plan(n, bodySize int) *plans.Plan {
	p := &plans.Plan{FormatVersion: plans.FormatVersion, Project: "edge"}
	for i := range n {
		body, _ := json.Marshal(map[string]string{"ID": fmt.Sprintf("svc-%04d", i), "pad": strings.Repeat("x", bodySize)})
		p.Changes = append(p.Changes, &plans.Change{
			Addr:     plans.Addr{Kind: "service", Name: fmt.Sprintf("svc-%04d", i)},
			Action:   plans.Create,
			After:    body,
			Requests: []plans.Request{{Method: "PUT", Path: "/v1/agent/service/register", Body: body}},
		})
	}
	p.Sort()
	return p
}

// Change is a change of the service name on the backend "b", with a PUT
// to each of paths.
func Change(name string, action plans.Action, paths ...string) *plans.Change {
	c := &plans.Change{Addr: plans.Addr{Kind: "service", Name: name}, Backend: "b", Action: action}
	for _, p := range paths {
		c.Requests = append(c.Requests, plans.Request{Method: "PUT", Path: p})
	}
	return c
}
