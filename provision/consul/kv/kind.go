package kv

import (
	"github.com/provision-dev/provision/provision/addrs"
	"github.com/provision-dev/provision/schema"
)

// Key is the kind of a Consul KV entry: key "<path>" { value = ... }
// declares one, key["<path>"] addresses it.
var Key = schema.Define(addrs.KindSpec{Name: "key", Form: `key["<path>"]`, Order: 40}, schema.KeySchema)
