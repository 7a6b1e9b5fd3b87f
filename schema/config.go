package schema

import (
	"maps"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision/addrs"
)

// Config is the desired state declared by every file of one directory.
type Config struct {
	// Project names the owner written on everything provision creates.
	Project      string
	ProjectRange hcl.Range

	// places are the instances of the places' blocks (an agent's, the
	// consul block's), by type, in block and key order: PlacesOf gives
	// them.
	places map[string][]Place
	// placeSchemas are the places' blocks, by type: the language's, or
	// those DeclarePlace was given.
	placeSchemas map[string]*PlaceSchema
	// lang is the language cfg was loaded in (NewConfig); nil for a
	// Config a program builds without one, which knows only the kinds
	// it declares objects of, not their blocks.
	lang *Language
	// objects are the declared objects, by kind (consul.Service's,
	// kv.Key's, ...), in block order: Decls gives them.
	objects map[addrs.Kind][]Decl

	Variables map[string]*Variable
	Locals    map[string]*Local
	// Scope is the root specs' scope once loaded: var, local, module,
	// path and the functions, as console evaluates expressions in it
	// (sensitive values marked).
	Scope *hcl.EvalContext
	// Secrets are the values of sensitive variables and the strings
	// computed from them: every view shows them as "(sensitive)".
	Secrets []string
	// Imports are the import blocks, each attached to the declaration it
	// names (its Declaration.Import) when there is one.
	Imports []*Import
	// Removed are the removed blocks.
	Removed []*Removed
	// Outputs are the root's output blocks.
	Outputs []*Output
}

// NewConfig is an empty configuration of specs in lang, to which a
// program (a benchmark, a test) adds what it declares (Declare,
// DeclarePlace), as the loader adds what blocks declare.
func NewConfig(lang *Language) *Config {
	return &Config{Variables: map[string]*Variable{}, lang: lang, placeSchemas: lang.places}
}

// Declare adds objs, declared objects of kind k, to cfg, after those it
// has, as the loader adds what blocks declare: a configuration that a
// program builds (a benchmark's) rather than loads.
func (cfg *Config) Declare(k addrs.Kind, objs ...Decl) {
	if cfg.objects == nil {
		cfg.objects = map[addrs.Kind][]Decl{}
	}
	cfg.objects[k] = append(cfg.objects[k], objs...)
}

// DeclarePlace adds instances of the place s to cfg, after those it
// has: a configuration that a program builds rather than loads.
func (cfg *Config) DeclarePlace(s *PlaceSchema, instances ...Place) {
	if cfg.places == nil {
		cfg.places = map[string][]Place{}
	}
	cfg.places[s.Type] = append(cfg.places[s.Type], instances...)
	if cfg.placeSchemas[s.Type] != s { // a copy: the language's is shared
		cfg.placeSchemas = maps.Clone(cfg.placeSchemas)
		if cfg.placeSchemas == nil {
			cfg.placeSchemas = map[string]*PlaceSchema{}
		}
		cfg.placeSchemas[s.Type] = s
	}
}

// MetaPrefix starts the Consul meta keys provision writes to mark what it
// owns; a spec may not set them itself. ManagedByKey is the one key outside
// the prefix, the ecosystem's usual "managed-by".
const (
	MetaPrefix   = "provision-"
	ManagedByKey = "managed-by"
)

// ProvisionMeta reports whether a meta key is one provision writes itself
// (its marks, the checks' digest), which a spec may not set.
func ProvisionMeta(key string) bool {
	return key == ManagedByKey || strings.HasPrefix(key, MetaPrefix)
}
