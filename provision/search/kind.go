package search

import (
	"github.com/provision-dev/provision/provision/addrs"
	"github.com/provision-dev/provision/schema"
)

// Index and Document are the kinds of a search cluster's objects: an
// index (index "<name>" { ... }, index["<name>"]) and a document in one
// (document "<type>" "<label>" { ... }, document["<index>/<type>/<id>"]),
// after search.<name>. where several clusters are declared.
var (
	Index    = schema.Define(addrs.KindSpec{Name: "index", Place: "search", Form: `index["<name>"] (index.<name> for a name without dots)`, Order: 20}, schema.IndexSchema)
	Document = schema.Define(addrs.KindSpec{Name: "document", Place: "search", Form: `document["<index>/<type>/<id>"]`, Order: 30}, schema.DocumentSchema)
)
