package main

import (
	"github.com/provision-dev/provision/provision/connect"
	"github.com/provision-dev/provision/schema"
)

// language is what this binary's specs may declare: the kinds and places
// of the backends it opens, named here and handed on to the loader, the
// runs and the address flags. A kind left out is a block the specs cannot
// write, and an address no flag takes.
var language = schema.NewLanguage(connect.Kinds(), connect.Places())

// policyKinds are what policies see of each kind of object this binary
// plans.
var policyKinds = connect.PolicyKinds()
