package schema

import (
	"fmt"
	"slices"
	"strings"
)

// Kind is one kind of object the specs declare, as the language knows it:
// the one place where a kind is declared (its block is decoded in its own
// file). The engine takes a kind's address form and order from here.
type Kind struct {
	// Name is the kind as addresses write it: service.<id>.
	Name string
	// Place is the block type that qualifies its addresses when several
	// are declared ("agent", "search"); "" for a kind with one place.
	Place string
	// Form is how an address of the kind is written, for a person.
	Form string
	// block names a declaration for a person ("service block with id").
	block string
	// badName says what is wrong with an imported object's name.
	badName func(name string) string
	// attach attaches an import to the declarations it names, at the
	// positions (in declared's order, one or more) its name has there.
	attach func(cfg *Config, im *Import, at []int)
	// ungenerable says why the declaration of an undeclared import cannot
	// be generated; "" when it can.
	ungenerable func(cfg *Config) (summary, detail string)
	// declared lists the kind's declared objects: each one's place block
	// (its name, "" for the one place), name and module instance.
	declared func(cfg *Config) []object
	// ignorable are the attributes that ignore_changes may name, and how
	// deep a path under each may go (-1: any depth).
	ignorable map[string]int
	// pulled are the attributes pull may write into the declaration of
	// the object named name in module, from its live and declared views
	// (a plan's before and after, as JSON decodes them); nil for a kind
	// that pull leaves alone.
	pulled func(cfg *Config, module, name string, live, declared map[string]any) []PullAttr
	// labels, decode and check are the kind's block: its labels, how the
	// blocks of one module instance (module, "" for the root), for_each
	// and dynamic blocks expanded, are decoded into cfg, and what is
	// checked of them all once every block is decoded.
	labels []string
	decode func(d *decoder, cfg *Config, units []unit, module string)
	check  func(d *decoder, cfg *Config)
	// early kinds are decoded before the module calls and the other
	// kinds, whose blocks name them (a document names its index).
	early bool
}

// Kinds are the kinds, in the order a plan lists them.
var Kinds = []Kind{
	{
		Name: "service", Place: "agent", Form: "service.<id>", block: "service block with id",
		badName: func(string) string { return "" },
		attach:  func(cfg *Config, im *Import, at []int) { cfg.Services[at[0]].Import = im },
		ungenerable: func(cfg *Config) (string, string) {
			if len(cfg.Agents) > 1 {
				return "Import of an undeclared service needs one agent", fmt.Sprintf("%d agent blocks are declared, so it is not known which node's agent holds the registration. Declare the service block yourself, with its agent.", len(cfg.Agents))
			}
			return "", ""
		},
		declared: func(cfg *Config) []object {
			out := make([]object, 0, len(cfg.Services))
			for _, s := range cfg.Services {
				out = append(out, object{s.Agent, s.ID, s.Module})
			}
			return out
		},
		ignorable: serviceIgnorable(),
		pulled:    servicePulled,
		labels:    []string{"name"},
		decode: func(d *decoder, cfg *Config, units []unit, module string) {
			for _, s := range d.serviceBlocks(units) {
				s.Module = module
				cfg.Services = append(cfg.Services, s)
			}
		},
		check: (*decoder).checkServices,
	},
	{
		Name: "index", Place: "search", Form: `index["<name>"] (index.<name> for a name without dots)`, block: "index block named",
		badName: func(string) string { return "" },
		attach: func(cfg *Config, im *Import, at []int) {
			for _, i := range at {
				cfg.Indices[i].Import = im
			}
		},
		ungenerable: oneSearch("index"),
		declared: func(cfg *Config) []object {
			var out []object
			for _, ix := range cfg.Indices {
				out = append(out, object{ix.Search, ix.Name, ix.Module})
			}
			return out
		},
		ignorable: map[string]int{"settings": 1},
		labels:    []string{"name"},
		decode: func(d *decoder, cfg *Config, units []unit, module string) {
			for _, u := range units {
				ix := d.indexBlock(u)
				ix.Module = module
				cfg.Indices = append(cfg.Indices, ix)
			}
		},
		check: (*decoder).checkIndices,
		early: true,
	},
	{
		Name: "document", Place: "search", Form: `document["<index>/<type>/<id>"]`, block: "document block at",
		badName: func(name string) string {
			if parts := strings.SplitN(name, "/", 3); len(parts) != 3 || slices.Contains(parts, "") {
				return fmt.Sprintf("%q is not a document's <index>/<type>/<id>.", name)
			}
			return ""
		},
		attach:      func(cfg *Config, im *Import, at []int) { cfg.Documents[at[0]].Import = im },
		ungenerable: oneSearch("document"),
		declared: func(cfg *Config) []object {
			search := map[string]string{}
			for _, ix := range cfg.Indices {
				search[ix.Name] = ix.Search
			}
			var out []object
			for _, doc := range cfg.Documents {
				out = append(out, object{search[doc.Index], doc.Path(), doc.Module})
			}
			return out
		},
		ignorable: map[string]int{"source": -1},
		pulled: func(_ *Config, _, _ string, live, declared map[string]any) []PullAttr {
			return []PullAttr{{Name: "source", Live: live, Decl: declared}}
		},
		labels: []string{"type", "name"},
		decode: func(d *decoder, cfg *Config, units []unit, module string) {
			for _, doc := range d.documentBlocks(units, cfg.Indices) {
				doc.Module = module
				cfg.Documents = append(cfg.Documents, doc)
			}
		},
		check: (*decoder).checkDocuments,
	},
	{
		Name: "key", Form: `key["<path>"]`, block: "key block at",
		badName: func(name string) string {
			if why := badKeyPath(name); why != "" {
				return fmt.Sprintf("The key path %q %s.", name, why)
			}
			return ""
		},
		attach:      func(cfg *Config, im *Import, at []int) { cfg.Keys[at[0]].Import = im },
		ungenerable: func(*Config) (string, string) { return "", "" },
		declared: func(cfg *Config) []object {
			var out []object
			for _, k := range cfg.Keys {
				out = append(out, object{"", k.Path, k.Module})
			}
			return out
		},
		ignorable: map[string]int{"value": 0, "flags": 0},
		pulled: func(_ *Config, _, _ string, live, declared map[string]any) []PullAttr {
			return []PullAttr{{Name: "value", Live: live["value"], Decl: declared["value"]}, {Name: "flags", Live: live["flags"], Decl: declared["flags"]}}
		},
		labels: []string{"path"},
		decode: func(d *decoder, cfg *Config, units []unit, module string) {
			for _, u := range units {
				d.instance(u, func() {
					k := d.keyBlock(u)
					k.Module = module
					cfg.Keys = append(cfg.Keys, k)
				})
			}
		},
		check: (*decoder).checkKeys,
	},
}

// PullAttr is one attribute pull may write into a declaration: its name
// in the block, and its live and declared values as JSON decodes them.
// Frontend says that the declaration's frontend block writes some of the
// live value (a service's tags), which pull does not rewrite.
type PullAttr struct {
	Name       string
	Live, Decl any
	Frontend   bool
}

// Pulled are the attributes pull may write into the declaration of an
// object of kind (its name and module instance), from its live and
// declared views: a document's source, a key's value and flags, a
// service's address, port, meta, tags and the other fields it declares;
// none for an index.
func (cfg *Config) Pulled(kind, module, name string, live, declared map[string]any) []PullAttr {
	if k, ok := kindOf(kind); ok && k.pulled != nil {
		return k.pulled(cfg, module, name, live, declared)
	}
	return nil
}

// ignorables are each kind's ignorable attributes (Kind.ignorable) by the
// kind's name, for decoding a lifecycle block (which a kind's decoding
// does: looking the kind up in Kinds would make Kinds its own
// initializer's dependency).
var ignorables = map[string]map[string]int{}

func init() {
	for _, k := range Kinds {
		ignorables[k.Name] = k.ignorable
	}
}

// oneSearch: the declaration of an undeclared object of a search cluster
// is generated only when one search block is declared.
func oneSearch(noun string) func(cfg *Config) (string, string) {
	return func(cfg *Config) (string, string) {
		if len(cfg.Searches) != 1 {
			return "Import of an undeclared " + noun + " needs one search cluster",
				fmt.Sprintf("%d search blocks are declared, so it is not known which cluster holds the %s. Declare exactly one search block, or declare the %s block yourself.", len(cfg.Searches), noun, noun)
		}
		return "", ""
	}
}

func kindOf(name string) (Kind, bool) {
	i := slices.IndexFunc(Kinds, func(k Kind) bool { return k.Name == name })
	if i < 0 {
		return Kind{}, false
	}
	return Kinds[i], true
}

// kindNames are the kinds' names, for a person: "service, index,
// document and key".
func kindNames() string {
	var names []string
	for _, k := range Kinds {
		names = append(names, k.Name)
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// AddrForms is how the addresses of every kind are written, for a
// person.
func AddrForms() string {
	var forms []string
	for _, k := range Kinds {
		forms = append(forms, k.Form)
	}
	return strings.Join(forms[:len(forms)-1], ", ") + " or " + forms[len(forms)-1]
}

// Modules are the module instances that declare objects, by kind and
// name (a service's ID, an index's name, a document's path, a key's path):
// what an address puts before the object's kind.
func (cfg *Config) Modules() map[[2]string]string {
	out := map[[2]string]string{}
	for _, k := range Kinds {
		for _, o := range k.declared(cfg) {
			if o.module != "" {
				out[[2]string{k.Name, o.name}] = o.module
			}
		}
	}
	return out
}

// object is a declared object as its kind lists it: its place block's
// name ("" for the one place), its name, and the module instance that
// declares it ("" in the root).
type object struct{ place, name, module string }

// Declared is an object the specs declare, as an address names it: In is
// its place block ("agent.node-a") when several of that block are
// declared, as addresses write it, and "" otherwise; Module the module
// instance that declares it ("" in the root).
type Declared struct{ Module, In, Kind, Name string }

// Declared lists the objects the specs declare, kind by kind in Kinds'
// order.
func (cfg *Config) Declared() []Declared {
	places := map[string]int{"agent": len(cfg.Agents), "search": len(cfg.Searches)}
	var out []Declared
	for _, k := range Kinds {
		for _, o := range k.declared(cfg) {
			d := Declared{Module: o.module, Kind: k.Name, Name: o.name}
			if o.place != "" && places[k.Place] > 1 {
				d.In = k.Place + "." + o.place
			}
			out = append(out, d)
		}
	}
	return out
}
