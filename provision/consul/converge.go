package consul

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"strings"

	"github.com/provision-dev/provision/provision/plans"
)

// Converge is the agent's state once changes are done, as Consul 1.15
// answers GET /v1/agent/services and /v1/agent/checks after them: a
// registration replaces the service (its fields as the agent reports
// them: normalize), registers its sidecar when it carries one, and adds
// its checks to the agent's (with replace-existing-checks, replaces
// them); a check's deregistration removes it; a service's deregistration
// removes it, its checks and its sidecar.
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
				// The agent registers the sidecar on its own and reports the
				// service without it, and without the empty values it
				// drops (connect = { native = false }).
				fields, _ := pruneEmpty(withoutSidecar(reg.Fields)).(map[string]any)
				next.Services[reg.ID] = &agentService{ID: reg.ID, Service: reg.Name, Tags: reg.Tags, Meta: reg.Meta, Port: reg.Port, Address: reg.Address,
					Fields: normalize(fields, reg.Address, reg.Port)}
				checks := map[string]liveCheck{}
				if !strings.HasSuffix(r.Path, "?replace-existing-checks=true") {
					maps.Copy(checks, next.Checks[reg.ID])
				}
				next.Checks[reg.ID] = reported(reg.ID, reg.Checks, checks)
				if sc := SidecarOf(reg.Fields); sc != nil {
					sidecar, checks := convergedSidecar(reg, sc)
					next.Services[sidecar.ID] = sidecar
					next.Checks[sidecar.ID] = reported(sidecar.ID, checks, map[string]liveCheck{})
				}
			case strings.HasPrefix(r.Path, checkDeregisterAPI):
				id, _ := url.PathUnescape(strings.TrimPrefix(r.Path, checkDeregisterAPI))
				delete(next.Checks[c.Addr.Name], id)
			case strings.HasPrefix(r.Path, serviceDeregisterAPI):
				id, _ := url.PathUnescape(strings.TrimPrefix(r.Path, serviceDeregisterAPI))
				if l := next.Services[id]; l != nil {
					if sc := sidecarOf(next.Services, l); sc != nil {
						delete(next.Services, sc.ID)
						delete(next.Checks, sc.ID)
					}
				}
				delete(next.Services, id)
				delete(next.Checks, id)
			default:
				return nil, fmt.Errorf("%s: %s %s is no request this backend plans", c.Addr, r.Method, r.Path)
			}
		}
	}
	return next, nil
}

// reported adds the checks of the service id to into, as GET
// /v1/agent/checks reports them once registered, and returns into.
func reported(id string, checks []check, into map[string]liveCheck) map[string]liveCheck {
	for _, ch := range checks {
		into[ch.CheckID] = liveCheck{Name: ch.Name, ServiceID: id, Type: CheckType(ch.Def), Interval: str(ch.Def["Interval"]), Timeout: str(ch.Def["Timeout"]), Notes: str(ch.Def["Notes"])}
	}
	return into
}
