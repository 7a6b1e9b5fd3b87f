package schema

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision/addrs"
)

// KindSchema is one kind's block, as the language decodes it: the
// package that owns the kind registers it with Define, with the kind's
// address form and order, and the loader hands it each instance of the
// kind's blocks to decode. The exported fields are the kind's package's
// to set; the unexported ones are those of the kinds whose blocks schema
// still decodes itself (indices, documents), which Define fills in for
// the others from the exported ones.
type KindSchema struct {
	// Noun names a declaration for a person, before its name: "key block
	// at".
	Noun string
	// Labels are the block's labels: key "<path>".
	Labels []string
	// Decode decodes one instance of the kind's block: its Declaration's
	// Name, ranges and lifecycle, and the rest of the kind's own
	// declaration. The loader sets its Module and Instance.
	Decode func(d Decoder, b Block) Decl
	// Check checks the kind's objects once every block is decoded (two
	// that declare one live object); nil for none.
	Check func(d Decoder, objs []Decl)
	// BadName says what is wrong with the name of an object an import or
	// removed block names ("" for nothing); nil for any name.
	BadName func(name string) string
	// Pulled are the attributes pull may write into a declaration, o
	// (nil when no block declares the object), from the live and
	// declared views of its object (a plan's before and after, as JSON
	// decodes them); nil for none.
	Pulled func(o Decl, live, declared map[string]any) []PullAttr
	// In is the name of the place block that holds o (a service's
	// agent), "" for the one place; nil for a kind of one place.
	In func(o Decl) string
	// Ungenerable says why the declaration of an undeclared object that
	// an import names cannot be generated ("" when it can); nil when it
	// always can.
	Ungenerable func(cfg *Config) (summary, detail string)
	// Parallel: the blocks are decoded side by side, on every core, in
	// runs (a spec of 10,000 services spends most of its decoding
	// there); Decode then writes nothing another call reads.
	Parallel bool
	// Nested are the schemas of the blocks inside the kind's block, whose
	// types a dynamic block there may make.
	Nested []*hcl.BodySchema

	// attach attaches an import to the declarations it names, at the
	// positions (in declared's order, one or more) its name has there.
	attach func(cfg *Config, im *Import, at []int)
	// ungenerable says why the declaration of an undeclared import cannot
	// be generated; "" when it can.
	ungenerable func(cfg *Config) (summary, detail string)
	// declared lists the kind's declared objects: each one's place block
	// (its name, "" for the one place), name and module instance.
	declared func(cfg *Config) []object
	// decode and check decode the blocks of one module instance, for_each
	// and dynamic blocks expanded, into cfg, and check them all once
	// every block is decoded.
	decode func(d *decoder, cfg *Config, units []unit, module addrs.Module)
	check  func(d *decoder, cfg *Config)
	// early kinds are decoded before the module calls and the other
	// kinds, whose blocks name them (a document names its index).
	early bool
	// named: the kind's blocks name one another (document.<type>.<label>
	// in a source), so they are decoded all at once, never a piece at a
	// time (laterClasses).
	named bool
}

// definedKind is a registered kind with its block.
type definedKind struct {
	addrs.Kind
	*KindSchema
}

var defined struct {
	sync.Mutex
	byKind map[addrs.Kind]*KindSchema
}

// Define registers the kind spec describes, whose blocks s decodes: the
// one call that makes a kind of object the specs declare, made by the
// package that owns it.
func Define(spec addrs.KindSpec, s *KindSchema) addrs.Kind {
	k := addrs.Register(spec)
	if s.Decode != nil {
		s.byPackage(k)
	}
	defined.Lock()
	defer defined.Unlock()
	if defined.byKind == nil {
		defined.byKind = map[addrs.Kind]*KindSchema{}
	}
	defined.byKind[k] = s
	return k
}

// byPackage fills in the loader's side of a kind whose package decodes
// its blocks: its objects are kept in the Config by kind, each with its
// Declaration.
func (s *KindSchema) byPackage(k addrs.Kind) {
	s.attach = func(cfg *Config, im *Import, at []int) {
		for _, i := range at {
			cfg.objects[k][i].Decl().Import = im
		}
	}
	s.ungenerable = func(cfg *Config) (string, string) {
		if s.Ungenerable == nil {
			return "", ""
		}
		return s.Ungenerable(cfg)
	}
	s.declared = func(cfg *Config) []object {
		out := make([]object, 0, len(cfg.objects[k]))
		for _, o := range cfg.objects[k] {
			place := ""
			if s.In != nil {
				place = s.In(o)
			}
			out = append(out, object{place, o.Decl().Name, o.Decl().Module})
		}
		return out
	}
	s.decode = func(d *decoder, cfg *Config, units []unit, module addrs.Module) {
		objs := make([]Decl, len(units))
		decode := func(d *decoder, i int) {
			u := units[i]
			d.instance(u, func() {
				o := s.Decode(Decoder{d: d}, Block{Block: u.block, Body: u.body, Each: u.each})
				o.Decl().Module, o.Decl().Instance = module, u.each
				objs[i] = o
			})
		}
		if s.Parallel {
			d.spread(len(units), decode)
		} else {
			for i := range units {
				decode(d, i)
			}
		}
		if cfg.objects == nil {
			cfg.objects = map[addrs.Kind][]Decl{}
		}
		cfg.objects[k] = append(cfg.objects[k], objs...)
	}
	s.check = func(d *decoder, cfg *Config) {
		if s.Check != nil {
			s.Check(Decoder{d: d, cfg: cfg}, cfg.objects[k])
		}
	}
}

// kinds are the defined kinds, in the order a plan lists them.
func kinds() []definedKind {
	defined.Lock()
	defer defined.Unlock()
	var out []definedKind
	for _, k := range addrs.Kinds() {
		if s, ok := defined.byKind[k]; ok {
			out = append(out, definedKind{k, s})
		}
	}
	return out
}

// schemaOf is the block of a defined kind.
func schemaOf(k addrs.Kind) definedKind {
	defined.Lock()
	defer defined.Unlock()
	return definedKind{k, defined.byKind[k]}
}

// IndexSchema is the index block: index "<name>" { mapping { ... } }.
var IndexSchema = &KindSchema{
	Noun: "index block named",
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
	Labels: []string{"name"},
	decode: func(d *decoder, cfg *Config, units []unit, module addrs.Module) {
		for _, u := range units {
			ix := d.indexBlock(u)
			ix.Module = module
			cfg.Indices = append(cfg.Indices, ix)
		}
	},
	check:  (*decoder).checkIndices,
	early:  true,
	Nested: []*hcl.BodySchema{indexSchema},
}

// DocumentSchema is the document block: document "<type>" "<label>" {
// index = ..., source = ... }.
var DocumentSchema = &KindSchema{
	Noun: "document block at",
	BadName: func(name string) string {
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
	Pulled: func(_ Decl, live, declared map[string]any) []PullAttr {
		return []PullAttr{{Name: "source", Live: live, Decl: declared, Dotted: true}}
	},
	Labels: []string{"type", "name"},
	decode: func(d *decoder, cfg *Config, units []unit, module addrs.Module) {
		for _, doc := range d.documentBlocks(units, cfg.Indices) {
			doc.Module = module
			cfg.Documents = append(cfg.Documents, doc)
		}
	},
	check: (*decoder).checkDocuments,
	named: true,
}

// PullAttr is one attribute pull may write into a declaration: its name
// in the block, and its live and declared values as JSON decodes them.
// Frontend says that the declaration's frontend block writes some of the
// live value (a service's tags), which pull does not rewrite; Dotted, that
// the keys of the attribute's object are paths, "a.b" for b in a (a
// document's source, as the dashboard tool writes it).
type PullAttr struct {
	Name       string
	Live, Decl any
	Frontend   bool
	Dotted     bool
}

// Pulled are the attributes pull may write into the declaration of the
// object at a (its kind, name and module instance), from its live and
// declared views: a document's source, a key's value and flags, a
// service's address, port, meta, tags and the other fields it declares;
// none for an index.
func (cfg *Config) Pulled(a addrs.Addr, live, declared map[string]any) []PullAttr {
	switch k := schemaOf(a.Kind); {
	case k.KindSchema == nil:
		return nil
	case k.Pulled != nil:
		i := slices.IndexFunc(cfg.objects[a.Kind], func(o Decl) bool { return o.Decl().Name == a.Name && o.Decl().Module == a.Module })
		var o Decl
		if i >= 0 {
			o = cfg.objects[a.Kind][i]
		}
		return k.Pulled(o, live, declared)
	}
	return nil
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

// Modules are the module instances that declare objects, by their kind
// and name alone (a service's ID, an index's name, a document's path, a
// key's path): what an address puts before the object's kind.
func (cfg *Config) Modules() map[addrs.Addr]addrs.Module {
	out := map[addrs.Addr]addrs.Module{}
	for _, k := range kinds() {
		for _, o := range k.declared(cfg) {
			if o.module != addrs.Root {
				out[addrs.Addr{Kind: k.Kind, Name: o.name}] = o.module
			}
		}
	}
	return out
}

// object is a declared object as its kind lists it: its place block's
// name ("" for the one place), its name, and the module instance that
// declares it ("" in the root).
type object struct {
	place, name string
	module      addrs.Module
}

// Declared lists the addresses of the objects the specs declare, kind by
// kind in a plan's order: In is an object's place block ("agent.node-a")
// when several of that block are declared, and "" otherwise.
func (cfg *Config) Declared() []addrs.Addr {
	places := map[string]int{"agent": len(cfg.Agents), "search": len(cfg.Searches)}
	var out []addrs.Addr
	for _, k := range kinds() {
		for _, o := range k.declared(cfg) {
			d := addrs.Addr{Module: o.module, Kind: k.Kind, Name: o.name}
			if o.place != "" && places[k.Place()] > 1 {
				d.In = k.Place() + "." + o.place
			}
			out = append(out, d)
		}
	}
	return out
}
