// Package addrs names the objects provision manages: their kinds, the
// module instances that declare them, and their addresses as a person
// writes them after -target, in a plan and in an import block. It is a
// leaf: it imports nothing of provision's, and every other package takes
// its addresses from here.
package addrs

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Kind is one kind of object: a service registration, an index, a key.
// A Kind is made only by NewKind, by the package that owns the kind
// (consul.Service, kv.Key, search.Index, search.Document); code compares
// kinds as values (a.Kind == consul.Service), never by their names. The
// zero Kind is no kind: the address of a module instance alone has it.
type Kind struct{ k *KindSpec }

// KindSpec is what NewKind is told of a kind.
type KindSpec struct {
	// Name is the kind as addresses and blocks write it: service.<id>,
	// service "<name>" { ... }.
	Name string
	// Place is the block type that qualifies the kind's addresses when
	// several of it are declared ("agent", "search"); "" for a kind with
	// one place.
	Place string
	// Form is how an address of the kind is written, for a person.
	Form string
	// Order places the kind in a plan: kinds are listed by it, lowest
	// first.
	Order int
	// Replace says what -replace does to an owned object of the kind
	// ("registered again in place"); "" for a kind -replace does not take.
	Replace string
	// DefaultPlace: an address written without its place names the object
	// of the place's default instance (key["x"]: the key of the project's
	// own datacenter, consul.dc2.key["x"] another's), not the object of
	// that name in any place (service.web, on whichever agent).
	DefaultPlace bool
}

// NewKind makes the kind spec describes: once per kind, in a
// package-level var of the package that owns it. It registers nothing: a
// binary knows the kinds of the Set its main builds.
func NewKind(spec KindSpec) Kind { return Kind{&spec} }

// Set is the kinds a binary (or a test) knows, in the order a plan lists
// them: built once, in main, from the kinds it names, and handed to what
// reads addresses and specs. A kind left out of it is no kind there.
type Set struct{ kinds []Kind }

// NewSet is the set of kinds. Two kinds of one name or one order are a
// programming error, and panic.
func NewSet(kinds ...Kind) Set {
	kinds = slices.Clone(kinds)
	slices.SortFunc(kinds, func(a, b Kind) int { return a.k.Order - b.k.Order })
	for i, k := range kinds {
		for _, o := range kinds[:i] {
			if k.k.Name == o.k.Name || k.k.Order == o.k.Order {
				panic(fmt.Sprintf("addrs: kind %q registered twice in one set (name or order %d taken by %q)", k.k.Name, k.k.Order, o.k.Name))
			}
		}
	}
	return Set{kinds}
}

// All are the set's kinds, in the order a plan lists them.
func (s Set) All() []Kind { return slices.Clone(s.kinds) }

// Named is the set's kind of that name.
func (s Set) Named(name string) (Kind, bool) {
	i := slices.IndexFunc(s.kinds, func(k Kind) bool { return k.k.Name == name })
	if i < 0 {
		return Kind{}, false
	}
	return s.kinds[i], true
}

// Name is the kind as addresses write it; "" for no kind.
func (k Kind) Name() string {
	if k.k == nil {
		return ""
	}
	return k.k.Name
}

// Place is the block type that qualifies the kind's addresses when
// several are declared; "" for a kind with one place.
func (k Kind) Place() string {
	if k.k == nil {
		return ""
	}
	return k.k.Place
}

// Form is how an address of the kind is written, for a person.
func (k Kind) Form() string { return k.k.Form }

// Replaces says what -replace does to an owned object of the kind; ""
// when it takes none.
func (k Kind) Replaces() string {
	if k.k == nil {
		return ""
	}
	return k.k.Replace
}

// DefaultPlace says whether an address of the kind written without its
// place names the object of the place's default instance
// (KindSpec.DefaultPlace).
func (k Kind) DefaultPlace() bool { return k.k != nil && k.k.DefaultPlace }

// Equal reports whether k and o are one kind, as k == o does; go-cmp,
// which cannot look into a Kind, compares kinds by it.
func (k Kind) Equal(o Kind) bool { return k == o }

// String is the kind's name.
func (k Kind) String() string { return k.Name() }

// Compare orders kinds as a plan lists them, no kind first.
func (k Kind) Compare(o Kind) int { return cmp.Compare(k.order(), o.order()) }

// order is the kind's place in a plan; no kind comes first.
func (k Kind) order() int {
	if k.k == nil {
		return -1 << 31
	}
	return k.k.Order
}

// MarshalText writes the kind as its name.
func (k Kind) MarshalText() ([]byte, error) { return []byte(k.Name()), nil }

// Names are the kinds' names, for a person: "service, index, document
// and key".
func (s Set) Names() string {
	var names []string
	for _, k := range s.kinds {
		names = append(names, k.k.Name)
	}
	return join(names, "and")
}

// Forms is how the addresses of every kind are written, for a person.
func (s Set) Forms() string {
	var forms []string
	for _, k := range s.kinds {
		forms = append(forms, k.k.Form)
	}
	return join(forms, "or")
}

// join lists words as a sentence does: "a, b and c".
func join(words []string, and string) string {
	switch len(words) {
	case 0:
		return ""
	case 1:
		return words[0]
	}
	return strings.Join(words[:len(words)-1], ", ") + " " + and + " " + words[len(words)-1]
}
