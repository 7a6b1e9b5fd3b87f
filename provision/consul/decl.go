package consul

import (
	"fmt"

	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision/addrs"
	"github.com/provision-dev/provision/provision/traefik/labels"
	"github.com/provision-dev/provision/schema"
)

// Service is the kind of a service registration in a Consul agent:
// service "<name>" { id = ... } declares one, service.<id> addresses it,
// after agent.<name>. where several agents are declared. Its package
// decodes its block (Decl), side by side: ServiceBlock, which a
// binary's language names.
var Service, ServiceBlock = schema.NewKind(addrs.KindSpec{Name: "service", Place: "agent", Form: "service.<id>", Order: 10, Replace: "registered again in place"}, &schema.KindSchema{
	Noun:   "service block with id",
	Labels: []string{"name"},
	Decode: func(d schema.Decoder, b schema.Block) schema.Decl { return serviceBlock(decoder{d}, b) },
	Check:  func(d schema.Decoder, objs []schema.Decl) { checkServices(decoder{d}, d.Config(), objs) },
	Pulled: servicePulled,
	Places: func(_ *schema.Config, objs []schema.Decl) []string {
		out := make([]string, len(objs))
		for i, o := range objs {
			out[i] = o.(*Decl).Agent
		}
		return out
	},
	Parallel: true,
	Followed: true,
	Nested:   []*hcl.BodySchema{serviceSchema, frontendSchema, forwardAuthSchema},
	Rewrite:  consulDefinition,
	Aliases:  []string{"services"},
	Ungenerable: func(cfg *schema.Config) (string, string) {
		if len(Agents(cfg)) > 1 {
			return "Import of an undeclared service needs one agent", fmt.Sprintf("%d agents are declared, so it is not known which node's agent holds the registration. Declare the service block yourself, with its agent.", len(Agents(cfg)))
		}
		return "", ""
	},
})

// Services are the service blocks cfg declares, in block order.
func Services(cfg *schema.Config) []*Decl { return schema.Decls[*Decl](cfg, Service) }

// Decl is one Consul service registration a service block declares. Its
// Declaration's Name is its ID: the id attribute, or the label
// ("<label>-<each.key>" with for_each); NameRange is the id attribute, or
// the label.
type Decl struct {
	schema.Declaration
	Service string // Consul's service name: the name attribute, or the block label
	// Agent names the agent block of the node the service is registered
	// on; empty when no agent block is declared.
	Agent      string
	AgentRange hcl.Range
	// AgentFailed: the agent attribute did not evaluate (its error is
	// said already, and no other is said of the agent).
	AgentFailed bool
	// Node, for a service of a host that runs no agent, is the external
	// node it is registered on through the catalog (external.go); empty
	// for a service of an agent.
	Node      string
	NodeRange hcl.Range
	Address   string
	Port      int
	Tags      []string // extra tags, kept as written
	Meta      map[string]string
	Frontend  *Frontend
	Checks    []*Check
	// Fields are the registration's other fields (RegistrationFields)
	// that the block declares, in their wire form, by wire name.
	Fields map[string]any
}

// Frontend is the route a reverse proxy claims for a service.
type Frontend struct {
	Rule        *labels.Rule
	RuleRange   hcl.Range
	EntryPoints []string
	ForwardAuth *ForwardAuth
	// ProofToken is a token the auth endpoint accepts (proof { token }),
	// a secret: the proof after an apply expects 200 with it. Empty
	// without a proof block.
	ProofToken string
	ProofRange hcl.Range
	DeclRange  hcl.Range
}

// ForwardAuth makes the proxy ask Address before it performs a request.
type ForwardAuth struct {
	Address                  string
	AuthResponseHeaders      []string
	AuthResponseHeadersRegex string   // Traefik 2 and 3 only
	AuthRequestHeaders       []string // Traefik 2 and 3 only
	TrustForwardHeader       bool
	TLS                      *ForwardAuthTLS
	DeclRange                hcl.Range
}

// ForwardAuthTLS is how the proxy reaches an https auth address: paths of
// PEM files on the proxy's host, never key material.
type ForwardAuthTLS struct {
	CA, Cert, Key      string
	InsecureSkipVerify bool
}

// Check is a Consul health check of a service.
type Check struct {
	Name string
	// Def is the check's fields (CheckFields) in their wire form, by
	// wire name.
	Def       map[string]any
	DeclRange hcl.Range
}

// serviceIgnorable are a service's attributes that ignore_changes may
// name: its own and, whole, the registration's other fields.
var serviceIgnorable = func() schema.Ignorable {
	roots := map[string]int{"tags": 0, "meta": 1, "address": 0, "port": 0}
	for _, a := range RegistrationFields {
		if !a.Enterprise {
			roots[a.Name] = 0
		}
	}
	return schema.Ignorable{Noun: "service", Roots: roots}
}()
