package provision

import "github.com/provision-dev/provision/provision/addrs"

// The engine's tests plan and apply objects of kinds of their own: the
// engine never asks an object's kind what it is, and the kinds' packages
// (consul, search), which import the engine, cannot be imported here.
var (
	testService  = addrs.NewKind(addrs.KindSpec{Name: "service", Form: "service.<id>", Order: 10})
	testIndex    = addrs.NewKind(addrs.KindSpec{Name: "index", Form: `index["<name>"]`, Order: 20})
	testDocument = addrs.NewKind(addrs.KindSpec{Name: "document", Form: `document["<path>"]`, Order: 30})
)
