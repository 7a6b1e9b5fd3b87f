package schema

import (
	"fmt"
	"maps"
	"slices"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/provision-dev/provision/provision/addrs"
)

// Language is what specs may declare: the kinds of object and the
// places, each decoded by the package that owns it. A binary's main
// builds it once, from the kinds and places it names (a test, from those
// it needs), and hands it to NewParser; nothing is registered anywhere
// else, and a kind or place left out of it is a block the specs cannot
// write.
type Language struct {
	kinds  []definedKind // in a plan's order
	set    addrs.Set
	places map[string]*PlaceSchema
	// placeTypes are the places' types, sorted: the order the loader
	// decodes and checks them in.
	placeTypes []string
	// nested are the block types the kinds' blocks hold (Nested);
	// rewriters the kinds' Rewrite, by the block types they rewrite;
	// namespaces the kinds of a Namespace, by it.
	nested     map[string]bool
	rewriters  map[string]func(*hclsyntax.Block) hcl.Diagnostics
	namespaces map[string]definedKind
}

// NewLanguage is the language of the kinds and places. A kind's or a
// place's block made twice, or a kind not made by NewKind, is a
// programming error, and panics.
func NewLanguage(kinds []*KindSchema, places []*PlaceSchema) *Language {
	l := &Language{places: map[string]*PlaceSchema{}, nested: map[string]bool{}, rewriters: map[string]func(*hclsyntax.Block) hcl.Diagnostics{}, namespaces: map[string]definedKind{}}
	var ks []addrs.Kind
	for _, s := range kinds {
		if s.kind == (addrs.Kind{}) {
			panic(fmt.Sprintf("schema: the kind of the %q block was not made by NewKind", s.Noun))
		}
		ks = append(ks, s.kind)
	}
	l.set = addrs.NewSet(ks...)
	for _, k := range l.set.All() {
		s := kinds[slices.IndexFunc(kinds, func(s *KindSchema) bool { return s.kind == k })]
		l.kinds = append(l.kinds, definedKind{k, s})
		for _, n := range s.Nested {
			for _, b := range n.Blocks {
				l.nested[b.Type] = true
			}
		}
		if s.Rewrite != nil {
			for _, t := range append([]string{k.Name()}, s.Aliases...) {
				l.rewriters[t] = s.Rewrite
			}
		}
		if s.Namespace != "" && s.CheckRef != nil {
			l.namespaces[s.Namespace] = definedKind{k, s}
		}
	}
	for _, s := range places {
		if _, dup := l.places[s.Type]; dup {
			panic(fmt.Sprintf("schema: place %q defined twice", s.Type))
		}
		l.places[s.Type] = s
	}
	l.placeTypes = slices.Sorted(maps.Keys(l.places))
	return l
}

// Kinds are the language's kinds, which read its addresses.
func (l *Language) Kinds() addrs.Set { return l.set }

// schemaOf is the block of one of cfg's kinds; its KindSchema is nil
// for a kind cfg's language does not have.
func (cfg *Config) schemaOf(k addrs.Kind) definedKind { return kindIn(cfg.kinds(), k) }

// kindIn is the kind k of kinds, with its block; its KindSchema is nil
// when kinds do not have it.
func kindIn(kinds []definedKind, k addrs.Kind) definedKind {
	if i := slices.IndexFunc(kinds, func(d definedKind) bool { return d.Kind == k }); i >= 0 {
		return kinds[i]
	}
	return definedKind{Kind: k}
}
