package consul

import (
	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision/consul/client"
	"github.com/provision-dev/provision/schema"
)

// AgentPlace is the place of a node's Consul agent, agent "<name>" {
// address = "host:port" }. A service registered through an agent lives
// on its node, is health-checked by it and can only be deregistered
// through it. Its TLS settings and ACL token follow Consul's environment
// (CONSUL_CACERT, CONSUL_HTTP_TOKEN, ...), as the consul block's do. A
// fleet is one block with for_each: agent.fleet["node7"].
var AgentPlace = &schema.PlaceSchema{Type: "agent", Label: "name", Decode: decodeAgent, Check: checkAgents}

// Agent is one instance of an agent block.
type Agent struct {
	schema.PlaceDecl
	Address      string // host:port, or scheme://host:port
	AddressRange hcl.Range
	// Consul names the consul block of the agent's datacenter (consul =
	// consul.dc2); "" for the project's own.
	Consul      string
	ConsulRange hcl.Range
}

// Agents are the agent blocks' instances, in block and key order. None
// means the one agent of Consul.
func Agents(cfg *schema.Config) []*Agent { return schema.PlacesOf[*Agent](cfg, AgentPlace.Type) }

// place is the agent's address as a place: agent.<name>, the name of its
// backend.
func (a *Agent) place() string { return "agent." + a.Name }

var agentSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "address", Required: true}, {Name: "consul"}},
}

func decodeAgent(d schema.Decoder, b schema.Block) schema.Place {
	a := &Agent{}
	label := b.Labels[0]
	if !schema.PlaceLabel.MatchString(label) {
		d.Errorf(b.LabelRanges[0], b.DefRange, "Invalid agent name",
			"The agent name %q is part of the addresses of its services (agent.%s.service.<id>); use letters, digits, \"_\" and \"-\", starting with a letter.", label, label)
	}
	c := d.Content(b.Body, agentSchema)
	if attr, ok := c.Attributes["consul"]; ok {
		a.Consul, a.ConsulRange = d.Str(attr), attr.Expr.Range()
	}
	if attr, ok := c.Attributes["address"]; ok {
		a.Address, a.AddressRange = d.Str(attr), attr.Expr.Range()
		d.NoCredentials(attr, a.Address)
		if a.Address == "" {
			d.Errorf(attr.Expr.Range(), b.DefRange, "Invalid agent address",
				"The address of agent %s is empty; write the agent's HTTP API as \"host:port\" (or \"https://host:port\").", client.Named(schema.InstanceName(label, b.Each)))
		}
	}
	return a
}

// checkAgents reports two agents at one address (two blocks of one name
// are the loader's to report).
func checkAgents(d schema.Decoder, places []schema.Place) {
	byAddress := map[string]*Agent{}
	for _, p := range places {
		a := p.(*Agent)
		if prev, dup := byAddress[a.Address]; dup && a.Address != "" {
			d.Errorf(a.AddressRange, a.DeclRange, "Two agents at one address",
				"The agents %s and %s both have the address %q. An agent block is one node's agent: two blocks for one agent would read and write its services twice. Remove one of them.", client.Named(prev.Name), client.Named(a.Name), a.Address)
			continue
		}
		byAddress[a.Address] = a
	}
}
