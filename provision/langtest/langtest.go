// Package langtest is, for tests, the language of every kind of object
// and every place provision has, as the CLI's main builds its own: a test
// of specs that declare them all loads them in it.
package langtest

import (
	"github.com/provision-dev/provision/provision/connect"
	"github.com/provision-dev/provision/schema"
)

// Language has every kind and place.
var Language = schema.NewLanguage(connect.Kinds(), connect.Places())

// Kinds are its kinds, which read addresses.
var Kinds = Language.Kinds()
