package schema

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// A place is a backend's block that says where a live system is (the
// Consul agent of a node: agent "node-a" { address = ... }). The package
// that owns the backend makes its PlaceSchema and decodes it; the
// language expands it as it expands a kind's block: one instance per
// element of its for_each, named <label>["<key>"] (agent.fleet["node7"]),
// each.key and each.value in its scope. An expression refers to an
// instance by <type>.<label> or <type>.<label>["<key>"], whose value is
// the instance's name: a service's agent = agent.fleet[each.value.node].

// PlaceSchema is what a place's definition says of its block.
type PlaceSchema struct {
	// Type is the block's type, and the namespace of references to its
	// instances.
	Type string
	// Label names the block's one label, for a person ("name"); "" for a
	// block without a label, which is declared at most once, not
	// expanded, and no namespace of references (a proxy block): it is
	// decoded before the others, which it cannot name.
	Label string
	// Unlabelled lets a place with a label be written without one too:
	// that block is the place's default (consul { ... } beside consul
	// "dc2" { ... }, as a Terraform provider block beside its aliases),
	// declared at most once and decoded as a block without a label; PlacesOf
	// gives it first, its Name "". Such a place is decoded before the
	// other places, which may name it (agent "a" { consul = consul.dc2 }).
	Unlabelled bool
	// Late decodes a block without a label once every object is decoded,
	// in the scope of the module outputs and the locals that read them (a
	// proxy block's prefix may be a module's output).
	Late bool
	// Decode decodes one instance of the block: the rest of the place's
	// own declaration, PlaceDecl being the loader's.
	Decode func(d Decoder, b Block) Place
	// Check checks the instances once every one is decoded (two at one
	// address); nil for none.
	Check func(d Decoder, places []Place)
	// Polled: the place's live system has no change feed (a search
	// cluster, a proxy), so a watcher of specs that declare it polls it
	// at its interval (Config.Followed).
	Polled bool
}

// Place is one instance of a place's block, as its package decoded it.
type Place interface {
	Place() *PlaceDecl
}

// PlaceDecl is what the language knows of a place instance: a place's
// own declaration embeds it.
type PlaceDecl struct {
	// Name is the instance as addresses write it after <type>.: its
	// label, followed by ["<key>"] for an instance of for_each.
	Name string
	// Label is the block's label, and LabelRange where it is written.
	Label      string
	LabelRange hcl.Range
	DeclRange  hcl.Range
	// Instance is the for_each instance, nil for a block without.
	Instance *Instance
}

// Place is the declaration itself, which makes a place's declaration
// that embeds it a Place.
func (p *PlaceDecl) Place() *PlaceDecl { return p }

// Followed reports whether change feeds see every change of what cfg
// declares: it declares objects, each of a kind whose backend follows its
// live state (KindSchema.Followed), and no place whose live system has
// no change feed (PlaceSchema.Polled). A watcher polls such specs less
// often.
func (cfg *Config) Followed() bool {
	declares := false
	for k, objs := range cfg.objects {
		if s := cfg.schemaOf(k).KindSchema; len(objs) > 0 && (s == nil || !s.Followed) {
			return false
		}
		declares = declares || len(objs) > 0
	}
	for typ, instances := range cfg.places {
		if s := cfg.placeSchemas[typ]; s != nil && s.Polled && len(instances) > 0 {
			return false
		}
	}
	return declares
}

// PlacesOf are the instances of the place of type typ, in block and key
// order, as its package decoded them (T is its declaration's type).
func PlacesOf[T Place](cfg *Config, typ string) []T {
	out := make([]T, len(cfg.places[typ]))
	for i, p := range cfg.places[typ] {
		out[i] = p.(T)
	}
	return out
}

// placeBlocks decodes the blocks of each place (blocks, by type), each
// instance of a for_each apart, and defines the namespace of references
// to them.
func (d *decoder) placeBlocks(cfg *Config, blocks map[string][]*hcl.Block) {
	lang := d.lang
	d.late = map[*PlaceSchema][]*hcl.Block{}
	for _, typ := range lang.placeTypes {
		switch s := lang.places[typ]; {
		case s.Label == "" && s.Late:
			d.late[s] = blocks[typ]
		case s.Label == "":
			d.singlePlace(cfg, s, blocks[typ])
		case s.Unlabelled:
			bare := slices.DeleteFunc(slices.Clone(blocks[typ]), func(b *hcl.Block) bool { return len(b.Labels) > 0 })
			blocks[typ] = slices.DeleteFunc(blocks[typ], func(b *hcl.Block) bool { return len(b.Labels) == 0 })
			d.singlePlace(cfg, s, bare)
		}
	}
	d.placed = map[string][]string{}
	labelled := slices.DeleteFunc(slices.Clone(lang.placeTypes), func(typ string) bool { return lang.places[typ].Label == "" })
	slices.SortStableFunc(labelled, func(a, b string) int { return cmpBool(lang.places[b].Unlabelled, lang.places[a].Unlabelled) })
	for _, typ := range labelled {
		s := lang.places[typ]
		var decoded []Place
		blocks[typ] = d.distinctLabels(typ, blocks[typ])
		for _, b := range blocks[typ] {
			d.placed[typ] = append(d.placed[typ], b.Labels[0])
		}
		ctx, each := d.ctx, d.each
		for _, u := range d.expandPlaces(blocks[typ]) {
			d.instance(u, func() {
				p := s.Decode(Decoder{d: d, cfg: cfg}, u.asBlock())
				decl := p.Place()
				decl.Label, decl.LabelRange, decl.DeclRange, decl.Instance = u.block.Labels[0], u.block.LabelRanges[0], u.block.DefRange, u.each
				decl.Name = InstanceName(decl.Label, u.each)
				decoded = append(decoded, p)
			})
		}
		d.ctx, d.each = ctx, each
		if cfg.places == nil {
			cfg.places = map[string][]Place{}
		}
		cfg.places[typ] = append(cfg.places[typ], decoded...)
		d.ctx.Variables[typ] = placeNamespace(blocks[typ], decoded)
	}
}

// cmpBool orders false before true.
func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// latePlaces decodes the blocks of the Late places, once every object
// is decoded.
func (d *decoder) latePlaces(cfg *Config) {
	for _, typ := range d.lang.placeTypes {
		if s := d.lang.places[typ]; s.Late {
			d.singlePlace(cfg, s, d.late[s])
		}
	}
}

// singlePlace decodes the one block of a place without a label, and
// refuses every block after the first.
func (d *decoder) singlePlace(cfg *Config, s *PlaceSchema, blocks []*hcl.Block) {
	if len(blocks) == 0 {
		return
	}
	for _, b := range blocks[1:] {
		d.diags = append(d.diags, duplicate(fmt.Sprintf("Duplicate %s block", s.Type), s.Type+" block", b.DefRange, blocks[0].DefRange))
	}
	b := blocks[0]
	p := s.Decode(Decoder{d: d, cfg: cfg}, Block{Block: b, Body: b.Body, ctx: d.ctx})
	p.Place().DeclRange = b.DefRange
	if cfg.places == nil {
		cfg.places = map[string][]Place{}
	}
	cfg.places[s.Type] = []Place{p}
}

// distinctLabels are blocks less each whose label an earlier one has,
// which is an error: an instance of the one would be named as an
// instance of the other.
func (d *decoder) distinctLabels(typ string, blocks []*hcl.Block) []*hcl.Block {
	first := map[string]*hcl.Block{}
	return slices.DeleteFunc(blocks, func(b *hcl.Block) bool {
		if prev, dup := first[b.Labels[0]]; dup {
			d.diags = append(d.diags, duplicate(fmt.Sprintf("Duplicate %s block", typ), fmt.Sprintf("%s %q", typ, b.Labels[0]), b.DefRange, prev.DefRange))
			return true
		}
		first[b.Labels[0]] = b
		return false
	})
}

// expandPlaces turns place blocks into units as expand does, and a block
// with count into one unit per index, count.index in its scope.
func (d *decoder) expandPlaces(blocks []*hcl.Block) []unit {
	var out []unit
	for _, b := range blocks {
		c, body, diags := b.Body.PartialContent(countSchema)
		attr, counted := c.Attributes["count"]
		if !counted {
			out = append(out, d.expand([]*hcl.Block{b})...)
			continue
		}
		d.diags = append(d.diags, diags...)
		if attrs, _ := body.JustAttributes(); attrs["for_each"] != nil {
			d.errorf(attr.NameRange, b.DefRange, "Invalid combination of count and for_each", "The %s block takes for_each or count, not both.", b.Type)
			continue
		}
		n, ok := d.count(attr, b)
		if !ok {
			continue
		}
		for i := range n {
			ctx := d.ctx.NewChild()
			ctx.Variables = map[string]cty.Value{"count": cty.ObjectVal(map[string]cty.Value{"index": cty.NumberIntVal(int64(i))})}
			out = append(out, unit{block: b, body: d.expandDynamic(body, ctx), ctx: ctx, each: &Instance{Key: strconv.Itoa(i), Counted: true}})
		}
	}
	return out
}

var countSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "count"}}}

// InstanceName is the name of the instance each of a block labelled
// label, as addresses write it: label, label["<key>"], or label[<index>]
// for one of a count.
func InstanceName(label string, each *Instance) string {
	switch {
	case each == nil:
		return label
	case each.Counted:
		return label + "[" + each.Key + "]"
	}
	return label + "[" + strconv.Quote(each.Key) + "]"
}

// placeNamespace is the value of <type>: each label's instance name, or,
// for a block with for_each, its instances' names by key, and for one
// with count, a list of them.
func placeNamespace(blocks []*hcl.Block, decoded []Place) cty.Value {
	byLabel := map[string]cty.Value{}
	instances := map[string]map[string]cty.Value{}
	counted := map[string][]cty.Value{}
	for _, b := range blocks {
		attrs, _ := b.Body.JustAttributes()
		switch {
		case attrs["count"] != nil:
			counted[b.Labels[0]] = []cty.Value{}
		case attrs["for_each"] != nil:
			instances[b.Labels[0]] = map[string]cty.Value{}
		}
	}
	for _, p := range decoded {
		decl := p.Place()
		switch {
		case decl.Instance == nil:
			byLabel[decl.Label] = cty.StringVal(decl.Name)
		case decl.Instance.Counted:
			counted[decl.Label] = append(counted[decl.Label], cty.StringVal(decl.Name))
		default:
			instances[decl.Label][decl.Instance.Key] = cty.StringVal(decl.Name)
		}
	}
	for label, keys := range instances {
		byLabel[label] = cty.ObjectVal(keys)
	}
	for label, names := range counted {
		byLabel[label] = cty.TupleVal(names)
	}
	return cty.ObjectVal(byLabel)
}

// checkPlaces checks each place's instances, once all are decoded.
func (d *decoder) checkPlaces(cfg *Config) {
	for _, typ := range d.lang.placeTypes {
		if s := d.lang.places[typ]; s.Check != nil {
			s.Check(Decoder{d: d, cfg: cfg}, cfg.places[typ])
		}
	}
}

// checkPlaceRef checks a reference to a place's instance, <type>.<label>:
// the label must be a block's (labels, the place's); "" when it is,
// else what is wrong.
func checkPlaceRef(typ, label string, labels []string) string {
	if slices.Contains(labels, label) {
		return ""
	}
	byLabel := map[string]bool{}
	for _, l := range labels {
		byLabel[l] = true
	}
	return fmt.Sprintf("There is no %s %q {} block (%s); %s.<name> is the name of the %s block of that label, and %s.<name>[<key>] that of one instance of a block with for_each.", typ, label, DeclaredNames(byLabel), typ, typ, typ)
}

// PlaceLabel is what a place block's label may be: it is a step of the
// addresses of what lives there (agent.<name>.service.<id>).
var PlaceLabel = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)

// DeclaredNames lists the names of the declared blocks for a diagnostic.
func DeclaredNames[T any](m map[string]T) string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, fmt.Sprintf("%q", n))
	}
	sort.Strings(names)
	if len(names) == 0 {
		return "none is declared"
	}
	return "declared: " + strings.Join(names, ", ")
}
