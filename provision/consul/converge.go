package consul

import (
	"encoding/json"
	"fmt"
	"maps"
	"strings"

	"github.com/provision-dev/provision/provision"
	"github.com/provision-dev/provision/provision/plans"
)

var _ provision.Converger = (*Backend)(nil)

// Converge is the agent's state once changes are done, as Consul 1.15
// answers GET /v1/agent/services and /v1/agent/checks after them: a
// registration replaces the service and (with replace-existing-checks, or
// when new) its checks; a deregistration removes both.
func (b *Backend) Converge(st plans.State, changes []*plans.Change) (plans.State, error) {
	as := st.(agentState)
	next := agentState{Services: maps.Clone(as.Services), Checks: maps.Clone(as.Checks), ACL: as.ACL}
	if next.Checks == nil {
		next.Checks = map[string]map[string]liveCheck{}
	}
	for _, c := range changes {
		for _, r := range c.Requests {
			switch {
			case strings.HasPrefix(r.Path, registerAPI):
				var reg registration
				if err := json.Unmarshal(r.Body, &reg); err != nil {
					return nil, fmt.Errorf("%s: %s %s: %w", c.Addr, r.Method, r.Path, err)
				}
				next.Services[reg.ID] = &agentService{ID: reg.ID, Service: reg.Name, Tags: reg.Tags, Meta: reg.Meta, Port: reg.Port, Address: reg.Address}
				checks := map[string]liveCheck{}
				for _, ch := range reg.Checks {
					typ := "http"
					if ch.TCP != "" {
						typ = "tcp"
					}
					checks[ch.CheckID] = liveCheck{Name: ch.Name, ServiceID: reg.ID, Type: typ, Interval: ch.Interval, Timeout: ch.Timeout}
				}
				next.Checks[reg.ID] = checks
			case strings.HasPrefix(r.Path, "/v1/agent/service/deregister/"):
				id := c.Addr.Name
				delete(next.Services, id)
				delete(next.Checks, id)
			default:
				return nil, fmt.Errorf("%s: %s %s is no request this backend plans", c.Addr, r.Method, r.Path)
			}
		}
	}
	return next, nil
}
