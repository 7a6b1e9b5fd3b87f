package plans

import (
	"fmt"
	"strings"

	"github.com/provision-dev/provision/schema"
)

// Addr names one managed object: a service registration, an index, a
// document, a key.
type Addr struct {
	// Module is the module instance that declares the object, as
	// module.gated["a"] (module.a.module.b when nested); empty for the
	// root's. An address with a Module and no Kind names every object of
	// that instance (-target module.gated["a"]).
	Module string
	// In is the block of the place the object lives in, "agent.node-a" or
	// "search.t1", when the specs declare several places of its kind;
	// empty otherwise. Two objects of one plan never share an address.
	In   string
	Kind string // a kind of schema.Kinds
	Name string // the service ID, the index name, a document's <index>/<type>/<id>, a key's path
}

// kindOrder fixes the order of kinds in a plan: schema.Kinds' order.
var kindOrder = func() map[string]int {
	order := map[string]int{}
	for i, k := range schema.Kinds {
		order[k.Name] = i
	}
	return order
}()

// String renders the address as a user writes it after -target:
// service.gated-api-1, index[".dashboard"] (a name that is not a plain
// identifier is quoted), agent.node-a.service.gated-api-1,
// search.t1.index[".dashboard"].
func (a Addr) String() string {
	if a.Kind == "" {
		return a.Module
	}
	s := schema.FormatAddr(a.Kind, a.Name)
	if a.In != "" {
		s = a.In + "." + s
	}
	if a.Module != "" {
		s = a.Module + "." + s
	}
	return s
}

// Less orders addresses by kind, then name, then place.
func (a Addr) Less(b Addr) bool {
	if a.Kind != b.Kind {
		return kindOrder[a.Kind] < kindOrder[b.Kind]
	}
	if a.Name != b.Name {
		return a.Name < b.Name
	}
	return a.In < b.In
}

// Matches reports whether the address a user wrote names a: the same
// object, or, written without its place, the object of that kind and
// name in any place.
func (a Addr) Matches(target Addr) bool {
	if target.Kind == "" {
		return a.Module == target.Module || strings.HasPrefix(a.Module, target.Module+".") || strings.HasPrefix(a.Module, target.Module+"[")
	}
	return a.Kind == target.Kind && a.Name == target.Name && (target.In == "" || target.In == a.In) && (target.Module == "" || target.Module == a.Module)
}

// MarshalText makes an Addr a JSON string.
func (a Addr) MarshalText() ([]byte, error) { return []byte(a.String()), nil }

// UnmarshalText parses what String writes.
func (a *Addr) UnmarshalText(b []byte) error {
	p, err := ParseAddr(string(b))
	*a = p
	return err
}

// ParseAddr parses an address as String writes it (schema.ParseAddress,
// the one parser of addresses).
func ParseAddr(s string) (Addr, error) {
	a, err := schema.ParseAddress(s)
	if err != nil {
		return Addr{}, fmt.Errorf("%w; write %s, after agent.<name>. or search.<name>. where the plan's addresses have it", err, schema.AddrForms())
	}
	return Addr(a), nil
}
