package search

import (
	"github.com/provision-dev/provision/provision/consul"
	"github.com/provision-dev/provision/provision/consul/kv"
	"github.com/provision-dev/provision/schema"
)

// testLanguage is what the specs of these tests declare: this package's
// kinds and place, and the consul package's (the shipped specs'
// project.hcl holds a proxy block, and their services sit beside the
// indices).
var testLanguage = schema.NewLanguage(
	[]*schema.KindSchema{consul.ServiceBlock, IndexBlock, DocumentBlock, kv.KeyBlock},
	[]*schema.PlaceSchema{consul.SettingsPlace, consul.AgentPlace, consul.ProxyPlace, SearchPlace},
)
