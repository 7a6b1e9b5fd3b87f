package consul

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision/traefik/labels"
)

// keepRoute keeps, in the state, a registration outside the project's
// scope whose tags route through the proxy: a route made by hand may open
// a gate the specs declare, and the plan judges it with the rest.
func (b *Backend) keepRoute(st *agentState, s *agentService) {
	if !slices.ContainsFunc(s.Tags, func(t string) bool { return strings.HasPrefix(t, b.proxy.Prefix) }) {
		return
	}
	if st.Routes == nil {
		st.Routes = map[string]*agentService{}
	}
	st.Routes[s.ID] = &agentService{ID: s.ID, Service: s.Service, Tags: s.Tags}
}

// judgeRoutes judges the live registrations of the agent, as Traefik
// reads their tags (labels.Judge, the judge of validate and of the
// proof), against the gates the specs declare: a route that reaches a
// gated request without the gate is a warning at the gated service, and
// an apply's proof fails while the proxy serves it. A declared service is
// not judged by its live tags: the plan writes the tags the specs give
// it, and those were judged at validate (a change of the gate's own
// address makes the live tags of every gated service differ from it
// until the apply).
func (b *Backend) judgeRoutes(as agentState) hcl.Diagnostics {
	gates := b.gates
	if len(gates) == 0 {
		return nil
	}
	declared := map[string]bool{}
	for _, s := range b.services {
		if s.Agent == b.agentName() {
			declared[s.Name] = true
		}
	}
	var regs []labels.Registration
	for _, m := range []map[string]*agentService{as.Services, as.Routes} {
		for id, s := range m {
			if !declared[id] {
				regs = append(regs, labels.Registration{ID: id, Service: s.Service, Tags: s.Tags})
			}
		}
	}
	slices.SortFunc(regs, func(a, b labels.Registration) int { return strings.Compare(a.ID, b.ID) })
	open, unread := labels.Judge(b.proxy.Prefix, gates, regs)
	var diags hcl.Diagnostics
	for _, o := range open {
		diags = append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagWarning,
			Summary:  "A registration opens the gate",
			Detail: fmt.Sprintf("On the agent %s, %s, as Traefik reads its tags: requests there reach what %s gates without the auth check. "+
				"Find who registered %q (its tags are in the Consul catalog) and remove the route or give it the forward-auth middleware; an apply's proof fails while the proxy serves it.",
				b.c.Address(), o, o.Gate.Service, o.ID),
			Subject: b.gateRange(o.Gate.Service).Ptr(),
		})
	}
	for _, u := range unread {
		diags = append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagWarning,
			Summary:  "Tags Traefik cannot read",
			Detail:   fmt.Sprintf("On the agent %s, the tags of %q do not decode as Traefik's label parser reads them (%s): Traefik drops that service's configuration.", b.c.Address(), u.ID, u.Err),
			Subject:  b.gateRange("").Ptr(),
		})
	}
	return diags
}

// agentName is the agent block of this backend; "" for the one agent.
func (b *Backend) agentName() string {
	if b.agent == nil {
		return ""
	}
	return b.agent.Name
}

// gateRange is the declaration of the first gated service of that name
// (of any, for ""), where a diagnostic of its gate points.
func (b *Backend) gateRange(name string) hcl.Range {
	for _, s := range b.services {
		if s.Frontend != nil && s.Frontend.ForwardAuth != nil && (name == "" || s.Service == name) {
			return s.DeclRange
		}
	}
	return hcl.Range{}
}
