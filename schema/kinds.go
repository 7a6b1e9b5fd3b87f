package schema

import (
	"maps"
	"slices"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/provision-dev/provision/provision/addrs"
	"github.com/zclconf/go-cty/cty"
)

// KindSchema is one kind's block, as the language decodes it: the
// package that owns the kind makes it with NewKind, with the kind's
// address form and order, and the loader hands it each instance of the
// kind's blocks to decode (as Terraform's core hands a resource's body to
// its provider's schema).
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
	// DecodeAll, in place of Decode, decodes every instance of the kind's
	// blocks in one module instance at once: a kind whose blocks name one
	// another (a document's source names other documents by Namespace),
	// which are then never decoded a piece at a time. It enters each
	// block's scope itself (Decoder.In).
	DecodeAll func(d Decoder, blocks []Block) []Decl
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
	// Places are the names of the place blocks that hold objs, cfg's
	// objects of the kind (a service's agent, the search cluster of a
	// document's index); nil for a kind of one place.
	Places func(cfg *Config, objs []Decl) []string
	// Ungenerable says why the declaration of an undeclared object that
	// an import names cannot be generated ("" when it can); nil when it
	// always can.
	Ungenerable func(cfg *Config) (summary, detail string)
	// Followed: the kind's backend follows its live state (provision
	// watch's change feeds see every change of its objects: a Consul
	// agent's services, the keys of a folder); Config.Followed.
	Followed bool
	// Parallel: the blocks are decoded side by side, on every core, in
	// runs (a spec of 10,000 services spends most of its decoding
	// there); Decode then writes nothing another call reads.
	Parallel bool
	// Nested are the schemas of the blocks inside the kind's block, whose
	// types a dynamic block there may make.
	Nested []*hcl.BodySchema
	// Early kinds are decoded before the module calls and the other
	// kinds, whose blocks name them (a document names its index).
	Early bool
	// Namespace is the name by which expressions refer to the kind's
	// objects once DecodeAll has defined it (document.<type>.<label>);
	// CheckRef says what is wrong with a reference tr to it, ns its value
	// (cty.NilVal where it is not defined): summary "" for nothing.
	Namespace string
	CheckRef  func(tr hcl.Traversal, ns cty.Value) (summary, detail string)
	// Rewrite rewrites, in a file's syntax tree, a top-level block of the
	// kind's type or of one of Aliases, before anything is decoded: the
	// kind's blocks as another tool's files write them (a service as
	// Consul's own definition files do). nil for none.
	Rewrite func(b *hclsyntax.Block) hcl.Diagnostics
	Aliases []string

	// kind is the kind whose blocks these are (NewKind).
	kind addrs.Kind
}

// definedKind is one of a language's kinds with its block.
type definedKind struct {
	addrs.Kind
	*KindSchema
}

// NewKind makes the kind spec describes, whose blocks s decodes: the one
// call that makes a kind of object the specs declare, made by the package
// that owns it in a package-level var (var Key, KeyBlock =
// schema.NewKind(...)). It registers nothing: a Language made with s has
// the kind.
func NewKind(spec addrs.KindSpec, s *KindSchema) (addrs.Kind, *KindSchema) {
	s.kind = addrs.NewKind(spec)
	return s.kind, s
}

// rewrite rewrites the top-level blocks of body that a kind rewrites
// (KindSchema.Rewrite).
func (l *Language) rewrite(body *hclsyntax.Body) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, blk := range body.Blocks {
		if r, ok := l.rewriters[blk.Type]; ok {
			diags = append(diags, r(blk)...)
		}
	}
	return diags
}

// named: the kind's blocks name one another, so they are decoded all at
// once (DecodeAll), never a piece at a time (laterClasses).
func (k definedKind) named() bool { return k.DecodeAll != nil }

// attach attaches an import to the declarations it names, at the
// positions (in declared's order, one or more) its name has there.
func (k definedKind) attach(cfg *Config, im *Import, at []int) {
	for _, i := range at {
		cfg.objects[k.Kind][i].Decl().Import = im
	}
}

// ungenerable says why the declaration of an undeclared import cannot be
// generated; "" when it can.
func (k definedKind) ungenerable(cfg *Config) (string, string) {
	if k.Ungenerable == nil {
		return "", ""
	}
	return k.Ungenerable(cfg)
}

// declared lists the kind's declared objects: each one's place block
// (its name, "" for the one place), name and module instance.
func (k definedKind) declared(cfg *Config) []object {
	objs := cfg.objects[k.Kind]
	var places []string
	if k.KindSchema != nil && k.Places != nil {
		places = k.Places(cfg, objs)
	}
	out := make([]object, len(objs))
	for i, o := range objs {
		out[i] = object{name: o.Decl().Name, module: o.Decl().Module}
		if places != nil {
			out[i].place = places[i]
		}
	}
	return out
}

// decode decodes the blocks of one module instance, for_each and dynamic
// blocks expanded, into cfg.
func (k definedKind) decode(d *decoder, cfg *Config, units []unit, module addrs.Module) {
	var objs []Decl
	if k.DecodeAll != nil {
		blocks := make([]Block, len(units))
		for i, u := range units {
			blocks[i] = u.asBlock()
		}
		objs = k.DecodeAll(Decoder{d: d, cfg: cfg}, blocks)
		for i, o := range objs {
			o.Decl().Module, o.Decl().Instance = module, units[i].each
		}
	} else {
		objs = make([]Decl, len(units))
		decode := func(d *decoder, i int) {
			u := units[i]
			d.instance(u, func() {
				o := k.Decode(Decoder{d: d, cfg: cfg}, u.asBlock())
				o.Decl().Module, o.Decl().Instance = module, u.each
				objs[i] = o
			})
		}
		if k.Parallel {
			d.spread(len(units), decode)
		} else {
			for i := range units {
				decode(d, i)
			}
		}
	}
	cfg.Declare(k.Kind, objs...)
}

// check checks the kind's objects once every block is decoded.
func (k definedKind) check(d *decoder, cfg *Config) {
	if k.Check != nil {
		k.Check(Decoder{d: d, cfg: cfg}, cfg.objects[k.Kind])
	}
}

// kinds are cfg's kinds, in the order a plan lists them: its
// language's, or, for a Config made by hand, the kinds it declares
// objects of, whose blocks are not known.
func (cfg *Config) kinds() []definedKind {
	if cfg.lang != nil {
		return cfg.lang.kinds
	}
	var out []definedKind
	for _, k := range slices.SortedFunc(maps.Keys(cfg.objects), addrs.Kind.Compare) {
		out = append(out, definedKind{Kind: k})
	}
	return out
}

// Kinds are the kinds cfg's objects may be of, which read its addresses.
func (cfg *Config) Kinds() addrs.Set {
	if cfg.lang != nil {
		return cfg.lang.set
	}
	var ks []addrs.Kind
	for _, k := range cfg.kinds() {
		ks = append(ks, k.Kind)
	}
	return addrs.NewSet(ks...)
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
	switch k := cfg.schemaOf(a.Kind); {
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

// Modules are the module instances that declare objects, by their place,
// kind and name alone (a service's ID, an index's name, a document's
// path, a key's path; In as Declared gives it), and by kind and name
// without the place, the first declaration's (the delete of a service
// moved off another agent is its declaration's): what an address puts
// before its place and kind.
func (cfg *Config) Modules() map[addrs.Addr]addrs.Module {
	out := map[addrs.Addr]addrs.Module{}
	for _, a := range cfg.Declared() {
		if a.Module == addrs.Root {
			continue
		}
		out[addrs.Addr{In: a.In, Kind: a.Kind, Name: a.Name}] = a.Module
		if anywhere := (addrs.Addr{Kind: a.Kind, Name: a.Name}); a.In != "" && out[anywhere] == addrs.Root {
			out[anywhere] = a.Module
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
// when several of that block are declared, or when it is a labelled one
// of a place with a default (PlaceSchema.Unlabelled: consul.dc2), and ""
// otherwise.
func (cfg *Config) Declared() []addrs.Addr {
	places := map[string]int{}
	for typ, instances := range cfg.places {
		places[typ] = len(instances)
	}
	var out []addrs.Addr
	for _, k := range cfg.kinds() {
		for _, o := range k.declared(cfg) {
			d := addrs.Addr{Module: o.module, Kind: k.Kind, Name: o.name}
			if s := cfg.placeSchemas[k.Place()]; o.place != "" && (places[k.Place()] > 1 || s != nil && s.Unlabelled) {
				d.In = k.Place() + "." + o.place
			}
			out = append(out, d)
		}
	}
	return out
}
