package addrs

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Module is a module instance, as addresses write it: module.gated["a"],
// module.a.module.b[0] when nested; the root's is "" (Root).
type Module string

// Root is the root module's instance.
const Root Module = ""

// Call is the instance of the module call name made by m, with key the
// instance's key as written in brackets (`"a"`, `0`), or "" for a call
// without for_each or count.
func (m Module) Call(name, key string) Module {
	step := "module." + name
	if key != "" {
		step += "[" + key + "]"
	}
	if m == Root {
		return Module(step)
	}
	return m + "." + Module(step)
}

// within reports whether m is o, an instance of o (o written without its
// key) or a module instance that o calls, at any depth.
func (m Module) within(o Module) bool {
	return m == o || strings.HasPrefix(string(m), string(o)+".") || strings.HasPrefix(string(m), string(o)+"[")
}

// String is the instance as addresses write it.
func (m Module) String() string { return string(m) }

// Addr names one managed object (a service registration, an index, a
// document, a key), or, with no Kind, a module instance alone (-target
// module.gated["a"] names every object of that instance).
type Addr struct {
	// Module is the module instance that declares the object; Root for
	// the root's.
	Module Module
	// In is the block of the place the object lives in, "agent.node-a" or
	// "search.t1", when the specs declare several places of its kind;
	// empty otherwise. Two objects of one plan never share an address.
	In   string
	Kind Kind
	// Name is the service ID, the index name, a document's
	// <index>/<type>/<id>, a key's path.
	Name string
	// text is the address as JSON gave it, while pending, until a Set
	// reads it (Set.Resolve).
	text    string
	pending bool
}

// IsModule reports whether the address names a module instance alone.
func (a Addr) IsModule() bool { return a.Kind == Kind{} && a.In == "" }

// IsPlace reports whether the address names a place alone, an agent
// block's instance (-exclude agent.fleet["node7"] leaves out every
// object there).
func (a Addr) IsPlace() bool { return a.Kind == Kind{} && a.In != "" }

var bareName = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_-]*$`)

// String renders the address as a user writes it after -target:
// service.gated-api-1, index[".dashboard"] (a name that is not a plain
// identifier is quoted), agent.node-a.service.gated-api-1,
// module.gated["a"].search.t1.index[".dashboard"].
func (a Addr) String() string {
	switch {
	case a.pending:
		return a.text
	case a.IsModule():
		return string(a.Module)
	case a.IsPlace():
		return a.In
	}
	s := a.Kind.Name() + "[" + strconv.Quote(a.Name) + "]"
	if bareName.MatchString(a.Name) {
		s = a.Kind.Name() + "." + a.Name
	}
	if a.In != "" {
		s = a.In + "." + s
	}
	if a.Module != Root {
		s = string(a.Module) + "." + s
	}
	return s
}

// Less orders addresses by kind, then name, then place.
func (a Addr) Less(b Addr) bool {
	if a.Kind != b.Kind {
		return a.Kind.order() < b.Kind.order()
	}
	if a.Name != b.Name {
		return a.Name < b.Name
	}
	return a.In < b.In
}

// Matches reports whether the address a user wrote (target) names a: the
// same object, or, written without its place or its module, the object
// of that kind and name in any of them (but a kind's of DefaultPlace,
// whose address without its place is the default place's); or, with no
// kind, a module instance that declares a or the place it lives in.
func (a Addr) Matches(target Addr) bool {
	switch {
	case target.IsModule():
		return a.Module.within(target.Module)
	case target.IsPlace():
		return a.In == target.In
	}
	anyPlace := target.In == "" && !a.Kind.DefaultPlace()
	return a.Kind == target.Kind && a.Name == target.Name && (anyPlace || target.In == a.In) && (target.Module == Root || target.Module == a.Module)
}

// Equal reports whether a and o are one address, as a == o does; go-cmp,
// which cannot look into an Addr, compares addresses by it.
func (a Addr) Equal(o Addr) bool { return a == o }

// MarshalText makes an Addr a JSON string.
func (a Addr) MarshalText() ([]byte, error) { return []byte(a.String()), nil }

// UnmarshalText keeps what String writes, to be read by the Set of the
// kinds that decode it knows (Set.Resolve): an address's kind is only
// known there.
func (a *Addr) UnmarshalText(b []byte) error {
	*a = Addr{text: string(b), pending: true}
	return nil
}

// Parse parses an address as String writes it (and a dotted name written
// plainly, index..dashboard), optionally after its place (agent.AGENT.,
// search.CLUSTER.) and after the module instances that declare it
// (module.NAME, module.NAME["KEY"], module.NAME[N], repeated); or a
// module instance alone. It is the one parser of addresses: an import
// block's traversal is written out as this text first.
func (set Set) Parse(s string) (Addr, error) {
	module, rest, err := cutModule(s)
	if err != nil {
		return Addr{}, err
	}
	if rest == "" && module != Root {
		return Addr{Module: module}, nil
	}
	if in, ok := set.parsePlace(rest); ok && module == Root {
		return Addr{In: in}, nil
	}
	a, err := set.parseObject(rest)
	a.Module = module
	return a, err
}

// parsePlace reads a place's instance alone, <place>.<name> (or
// <name>["<key>"]), of a kind's place.
func (set Set) parsePlace(s string) (string, bool) {
	for _, k := range set.kinds {
		if rest, ok := strings.CutPrefix(s, k.Place()+"."); ok && k.Place() != "" {
			if name, after, ok := cutPlace(rest + "."); ok && after == "" {
				return k.Place() + "." + name, true
			}
		}
	}
	return "", false
}

// cutModule cuts the module instances off the front of an address.
func cutModule(s string) (module Module, rest string, err error) {
	for strings.HasPrefix(s, "module.") {
		name := strings.TrimPrefix(s, "module.")
		end := strings.IndexAny(name, ".[")
		if end < 0 {
			end = len(name)
		}
		call, key := name[:end], ""
		rest := name[end:]
		if strings.HasPrefix(rest, "[") {
			close := strings.Index(rest, "]")
			if close < 0 {
				return "", "", fmt.Errorf("%q has a module key without its closing bracket", s)
			}
			key = rest[1:close]
			if _, err := strconv.Atoi(key); err != nil {
				if _, err := strconv.Unquote(key); err != nil {
					return "", "", fmt.Errorf("%q has a module key that is neither a quoted string nor a number", s)
				}
			}
			rest = rest[close+1:]
		}
		if call == "" {
			return "", "", fmt.Errorf("%q names a module without a name", s)
		}
		module = module.Call(call, key)
		s = strings.TrimPrefix(rest, ".")
	}
	return module, s, nil
}

// parseObject parses an address without its module instances.
func (set Set) parseObject(s string) (Addr, error) {
	var in string
	for _, k := range set.kinds {
		if rest, ok := strings.CutPrefix(s, k.Place()+"."); ok && k.Place() != "" {
			if name, obj, ok := cutPlace(rest); ok && strings.HasPrefix(obj, k.Name()) {
				in, s = k.Place()+"."+name, obj
			}
		}
	}
	if name, rest, ok := strings.Cut(s, "["); ok && strings.HasSuffix(rest, "]") {
		unquoted, err := strconv.Unquote(strings.TrimSuffix(rest, "]"))
		if k, known := set.Named(name); err == nil && known {
			return Addr{In: in, Kind: k, Name: unquoted}, nil
		}
	}
	name, obj, ok := strings.Cut(s, ".")
	k, known := set.Named(name)
	if known && ok && obj != "" {
		return Addr{In: in, Kind: k, Name: obj}, nil
	}
	if name, _, _ := strings.Cut(name, "["); ok && !known && name != "" {
		return Addr{}, fmt.Errorf("%q is not a kind of object provision manages; the kinds are %s", name, set.Names())
	}
	return Addr{}, fmt.Errorf("%q is not an address", s)
}

// cutPlace cuts the name of a place's instance and the "." after it off
// s: a label, label["<key>"] for an instance of a block with for_each
// (its key quoted as Go quotes it, as addresses print it), or
// label[<index>] for one of a count.
func cutPlace(s string) (name, rest string, ok bool) {
	i := strings.IndexAny(s, ".[")
	if i <= 0 {
		return "", "", false
	}
	name, rest = s[:i], s[i:]
	if key, ok := strings.CutPrefix(rest, "["); ok {
		index, after, closed := strings.Cut(key, "]")
		if n, err := strconv.Atoi(index); closed && err == nil && n >= 0 && strconv.Itoa(n) == index {
			name, rest = name+"["+index+"]", after // one of a count
		} else {
			quoted, err := strconv.QuotedPrefix(key)
			after, closed := strings.CutPrefix(key[len(quoted):], "]")
			if err != nil || !closed {
				return "", "", false
			}
			unquoted, _ := strconv.Unquote(quoted)
			name, rest = name+"["+strconv.Quote(unquoted)+"]", after
		}
	}
	rest, ok = strings.CutPrefix(rest, ".")
	return name, rest, ok
}

// ParseTarget parses an address a person wrote after -target, -exclude or
// -replace, or that a saved plan holds: Parse, with the forms of every
// kind in its error.
func (set Set) ParseTarget(s string) (Addr, error) {
	a, err := set.Parse(s)
	if err != nil {
		var places []string
		for _, k := range set.kinds {
			if p := k.Place() + ".<name>."; k.Place() != "" && !slices.Contains(places, p) {
				places = append(places, p)
			}
		}
		return Addr{}, fmt.Errorf("%w; write %s, after %s where the plan's addresses have it", err, set.Forms(), join(places, "or"))
	}
	return a, nil
}

// Strings are the addresses as they are written, each String's.
func Strings(as []Addr) []string {
	out := make([]string, len(as))
	for i, a := range as {
		out[i] = a.String()
	}
	return out
}
