package schema_test

// The kinds the specs of these tests declare are registered by the
// packages that own them, as the CLI's are.
import (
	_ "github.com/provision-dev/provision/provision/consul"
	_ "github.com/provision-dev/provision/provision/consul/kv"
	_ "github.com/provision-dev/provision/provision/search"
	_ "github.com/provision-dev/provision/provision/traefik"
)
