package schema_test

// The kinds the specs of these tests declare are registered by the
// packages that own them, as the CLI's are.
import (
	_ "github.com/provision-dev/provision/provision/consul"
	"github.com/provision-dev/provision/provision/consul/kv"
	_ "github.com/provision-dev/provision/provision/search"
	"github.com/provision-dev/provision/schema"
)

// keys are the key blocks cfg declares.
func keys(cfg *schema.Config) []*kv.Decl { return schema.Decls[*kv.Decl](cfg, kv.Key) }
