package schema

import (
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision/addrs"
)

// Config is the desired state declared by every file of one directory.
type Config struct {
	// Project names the owner written on everything provision creates.
	Project      string
	ProjectRange hcl.Range

	Proxy  Proxy
	Consul *Consul // nil when no consul block: the environment decides
	// places are the instances of the places' blocks (an agent's), by
	// type, in block and key order: PlacesOf gives them.
	places map[string][]Place
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

// Declare adds objs, declared objects of kind k, to cfg, after those it
// has, as the loader adds what blocks declare: a configuration that a
// program builds (a benchmark's) rather than loads.
func (cfg *Config) Declare(k addrs.Kind, objs ...Decl) {
	if cfg.objects == nil {
		cfg.objects = map[addrs.Kind][]Decl{}
	}
	cfg.objects[k] = append(cfg.objects[k], objs...)
}

// DeclarePlace adds instances of the place typ to cfg, after those it
// has: a configuration that a program builds rather than loads.
func (cfg *Config) DeclarePlace(typ string, instances ...Place) {
	if cfg.places == nil {
		cfg.places = map[string][]Place{}
	}
	cfg.places[typ] = append(cfg.places[typ], instances...)
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

// Dialect says which Traefik generations read a service's tags.
type Dialect string

const (
	// DialectTraefik writes the Traefik 1 tags and one set of http.* tags
	// in the grammar Traefik 2 and Traefik 3 both accept, so that a gated
	// frontend is gated whichever generation reads the catalog.
	DialectTraefik   Dialect = "traefik"
	DialectTraefikV1 Dialect = "traefik-v1"
	DialectTraefikV2 Dialect = "traefik-v2"
	DialectTraefikV3 Dialect = "traefik-v3"
)

// V1 reports whether Traefik 1 tags are written.
func (d Dialect) V1() bool { return d == DialectTraefik || d == DialectTraefikV1 }

// HTTP reports whether the http.* tags of Traefik 2 and 3 are written.
func (d Dialect) HTTP() bool { return d != DialectTraefikV1 }

// Grammar is the rule grammar of the http.* tags.
func (d Dialect) Grammar() Grammar {
	switch d {
	case DialectTraefikV2:
		return GrammarV2
	case DialectTraefikV3:
		return GrammarV3
	}
	return GrammarCommon
}

// Proxy says how frontends become Consul tags.
type Proxy struct {
	Dialect Dialect
	Prefix  string
	// DeclRange is the proxy block, or the project attribute when the block
	// is absent and the defaults apply.
	DeclRange hcl.Range
}

// Consul holds the connection settings of the Consul agent, or, when
// agent blocks are declared, of the cluster: its datacenter and the agent
// that holds the apply lock. Secrets (the ACL token) come from the
// environment only, never from a spec.
type Consul struct {
	Address    string
	Datacenter string
	DeclRange  hcl.Range
}
