package schema

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
)

// Agent is the Consul agent of one node. A service registered through it
// lives on that node, is health-checked by it and can only be deregistered
// through it. Its TLS settings and ACL token follow Consul's environment
// (CONSUL_CACERT, CONSUL_HTTP_TOKEN, ...), as the consul block's do.
type Agent struct {
	Name         string
	Address      string // host:port, or scheme://host:port
	DeclRange    hcl.Range
	AddressRange hcl.Range
}

var agentSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "address", Required: true}},
}

// agentName is what an agent block's label may be: it is a step of the
// addresses of its services (agent.<name>.service.<id>).
var agentName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)

func (d *decoder) agentBlock(b *hcl.Block) *Agent {
	a := &Agent{Name: b.Labels[0], DeclRange: b.DefRange}
	if !agentName.MatchString(a.Name) {
		d.errorf(b.LabelRanges[0], b.DefRange, "Invalid agent name",
			"The agent name %q is part of the addresses of its services (agent.%s.service.<id>); use letters, digits, \"_\" and \"-\", starting with a letter.", a.Name, a.Name)
	}
	c := d.content(b.Body, agentSchema)
	if attr, ok := c.Attributes["address"]; ok {
		a.Address, a.AddressRange = d.str(attr), attr.Expr.Range()
		d.noCredentials(attr, a.Address)
		if a.Address == "" {
			d.errorf(attr.Expr.Range(), b.DefRange, "Invalid agent address",
				"The address of agent %q is empty; write the agent's HTTP API as \"host:port\" (or \"https://host:port\").", a.Name)
		}
	}
	return a
}

// checkAgents reports duplicate agents and two agents at one address.
func (d *decoder) checkAgents(cfg *Config) {
	byName := map[string]*Agent{}
	byAddress := map[string]*Agent{}
	for _, a := range cfg.Agents {
		if prev, dup := byName[a.Name]; dup {
			d.diags = append(d.diags, duplicate("Duplicate agent block", fmt.Sprintf("agent %q", a.Name), a.DeclRange, prev.DeclRange))
			continue
		}
		byName[a.Name] = a
		if prev, dup := byAddress[a.Address]; dup && a.Address != "" {
			d.errorf(a.AddressRange, a.DeclRange, "Two agents at one address",
				"The agents %q and %q both have the address %q. An agent block is one node's agent: two blocks for one agent would read and write its services twice. Remove one of them.", prev.Name, a.Name, a.Address)
			continue
		}
		byAddress[a.Address] = a
	}
}

// DeclaredNames lists the names of the declared blocks for a diagnostic.
func DeclaredNames[T any](m map[string]T) string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, fmt.Sprintf("%q", n))
	}
	sort.Strings(names)
	if len(names) == 0 {
		return "none is declared"
	}
	return "declared: " + strings.Join(names, ", ")
}
