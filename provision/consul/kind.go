package consul

import (
	"github.com/provision-dev/provision/provision/addrs"
	"github.com/provision-dev/provision/schema"
)

// Service is the kind of a service registration in a Consul agent:
// service "<name>" { id = ... } declares one, service.<id> addresses it,
// after agent.<name>. where several agents are declared.
var Service = schema.Define(addrs.KindSpec{Name: "service", Place: "agent", Form: "service.<id>", Order: 10, Replace: "registered again in place"}, schema.ServiceSchema)
