package plans

import (
	"fmt"
	"strconv"
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
// placeKind is the block type that qualifies the addresses of a kind.
var kindOrder, placeKind = func() (map[string]int, map[string]string) {
	order, place := map[string]int{}, map[string]string{}
	for i, k := range schema.Kinds {
		order[k.Name], place[k.Name] = i, k.Place
	}
	return order, place
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

// ParseAddr parses service.NAME, index.NAME or KIND["NAME"], each
// optionally after its place: agent.AGENT. or search.CLUSTER., and after
// the module instances that declare it (module.NAME, module.NAME["KEY"],
// module.NAME[N], repeated); or a module instance alone.
func ParseAddr(s string) (Addr, error) {
	module, s, err := cutModule(s)
	if err == nil && s == "" && module != "" {
		return Addr{Module: module}, nil
	}
	if err != nil {
		return Addr{}, err
	}
	a, err := parseObject(s)
	a.Module = module
	return a, err
}

// cutModule cuts the module instances off the front of an address.
func cutModule(s string) (module, rest string, err error) {
	for strings.HasPrefix(s, "module.") {
		name := strings.TrimPrefix(s, "module.")
		end := strings.IndexAny(name, ".[")
		if end < 0 {
			end = len(name)
		}
		step := "module." + name[:end]
		rest := name[end:]
		if strings.HasPrefix(rest, "[") {
			close := strings.Index(rest, "]")
			if close < 0 {
				return "", "", fmt.Errorf("%q has a module key without its closing bracket", s)
			}
			key := rest[1:close]
			if _, err := strconv.Atoi(key); err != nil {
				if _, err := strconv.Unquote(key); err != nil {
					return "", "", fmt.Errorf("%q has a module key that is neither a quoted string nor a number", s)
				}
			}
			step += rest[:close+1]
			rest = rest[close+1:]
		}
		if name[:end] == "" {
			return "", "", fmt.Errorf("%q names a module without a name", s)
		}
		if module != "" {
			module += "."
		}
		module += step
		s = strings.TrimPrefix(rest, ".")
	}
	return module, s, nil
}

// parseObject parses an address without its module instances.
func parseObject(s string) (Addr, error) {
	var in string
	for kind, place := range placeKind {
		if rest, ok := strings.CutPrefix(s, place+"."); ok && place != "" {
			if name, obj, ok := strings.Cut(rest, "."); ok && name != "" && strings.HasPrefix(obj, kind) {
				in, s = place+"."+name, obj
			}
		}
	}
	if kind, rest, ok := strings.Cut(s, "["); ok && strings.HasSuffix(rest, "]") {
		name, err := strconv.Unquote(strings.TrimSuffix(rest, "]"))
		if err == nil && knownKind(kind) {
			return Addr{In: in, Kind: kind, Name: name}, nil
		}
	}
	if kind, name, ok := strings.Cut(s, "."); ok && knownKind(kind) && name != "" {
		return Addr{In: in, Kind: kind, Name: name}, nil
	}
	return Addr{}, fmt.Errorf("%q is not an address; write %s, after agent.<name>. or search.<name>. where the plan's addresses have it", s, schema.AddrForms())
}

func knownKind(k string) bool {
	_, ok := kindOrder[k]
	return ok
}
