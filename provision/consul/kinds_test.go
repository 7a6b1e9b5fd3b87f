package consul

import (
	"github.com/provision-dev/provision/provision/consul/kv"
	"github.com/provision-dev/provision/provision/search"
	"github.com/provision-dev/provision/schema"
)

// testLanguage is what the specs of these tests declare: this package's
// kinds and places, the keys', and, for the shipped specs, the indices'
// and documents' (the traefik package imports this one, so its place is
// not among them).
var testLanguage = schema.NewLanguage(
	[]*schema.KindSchema{ServiceBlock, search.IndexBlock, search.DocumentBlock, kv.KeyBlock},
	[]*schema.PlaceSchema{SettingsPlace, AgentPlace, ProxyPlace, search.SearchPlace},
)
