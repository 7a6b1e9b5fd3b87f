package main

import (
	"github.com/provision-dev/provision/provision/cli"
	"github.com/provision-dev/provision/provision/connect"
	"github.com/provision-dev/provision/schema"
)

// options are what this binary hands its CLI. Its language is what its
// specs may declare: the kinds and places of the backends it opens, named
// here and handed on to the loader, the runs and the address flags. A
// kind left out is a block the specs cannot write, and an address no flag
// takes. Its policy kinds are what policies see of each kind of object it
// plans.
func options() cli.Options {
	return cli.Options{Language: schema.NewLanguage(connect.Kinds(), connect.Places()), PolicyKinds: connect.PolicyKinds(), Version: version}
}
