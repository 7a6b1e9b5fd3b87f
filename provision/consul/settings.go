package consul

import (
	"cmp"
	"fmt"
	"regexp"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision/consul/kv"
	"github.com/provision-dev/provision/provision/traefik/labels"
	"github.com/provision-dev/provision/schema"
)

// SettingsPlace is the consul block: the connection settings of the
// Consul agent, or, when agent blocks are declared, of the cluster (its
// datacenter, and the agent that holds the apply lock). Secrets (the ACL
// token) come from the environment only, never from a spec.
//
// The block without a label is the project's own datacenter. A project
// that spans datacenters declares each other one with a label, as a
// Terraform provider block's alias: consul "dc2" { address = ... }, its
// datacenter the label unless it says another. An agent or a key block
// names it (consul = consul.dc2); the project's lock is taken in each.
var SettingsPlace = &schema.PlaceSchema{Type: settingsType, Label: "name", Unlabelled: true, Decode: decodeSettings, Check: checkDatacenters}

// settingsType is SettingsPlace, which its own check cannot name.
const settingsType = "consul"

// Settings is one consul block.
type Settings struct {
	schema.PlaceDecl
	Address    string
	Datacenter string
}

// SettingsOf is the consul block without a label; nil when there is none,
// and the environment decides.
func SettingsOf(cfg *schema.Config) *Settings {
	if s := schema.PlacesOf[*Settings](cfg, settingsType); len(s) > 0 && s[0].Name == "" {
		return s[0]
	}
	return nil
}

// Datacenters are the consul blocks with a label, the project's other
// datacenters, in block and key order.
func Datacenters(cfg *schema.Config) []*Settings {
	s := schema.PlacesOf[*Settings](cfg, settingsType)
	if SettingsOf(cfg) != nil {
		s = s[1:]
	}
	return s
}

// datacenterNamed is the consul block of the label name (consul.<name>);
// for "", the block without a label, nil when there is none.
func datacenterNamed(cfg *schema.Config, name string) *Settings {
	if name == "" {
		return SettingsOf(cfg)
	}
	for _, s := range Datacenters(cfg) {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// settingsFor is the consul block of the agent a's datacenter; for nil
// (Consul's one agent), the block without a label.
func settingsFor(cfg *schema.Config, a *Agent) *Settings {
	if a == nil {
		return SettingsOf(cfg)
	}
	return datacenterNamed(cfg, a.Consul)
}

var settingsSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "address"}, {Name: "datacenter"}},
}

func decodeSettings(d schema.Decoder, b schema.Block) schema.Place {
	c := d.Content(b.Body, settingsSchema)
	s := &Settings{Datacenter: d.Str(c.Attributes["datacenter"])}
	if attr, ok := c.Attributes["address"]; ok {
		s.Address = d.Str(attr)
		d.NoCredentials(attr, s.Address)
	}
	if len(b.Labels) == 0 {
		return s
	}
	label := b.Labels[0]
	if !schema.PlaceLabel.MatchString(label) {
		d.Errorf(b.LabelRanges[0], b.DefRange, "Invalid datacenter name",
			"The name %q is how agent and key blocks name this datacenter (consul = consul.%s), and part of its keys' addresses (consul.%s.key[\"<path>\"]); use letters, digits, \"_\" and \"-\", starting with a letter.", label, label, label)
	}
	if s.Address == "" {
		d.Errorf(b.DefRange, b.DefRange, "Missing datacenter address",
			"consul %q { } is another datacenter of the project: its address = \"host:port\" names an agent of that datacenter (its servers', best), which holds the project's lock there and reaches its keys.", label)
	}
	if s.Datacenter == "" {
		s.Datacenter = label
		if b.Each != nil && !b.Each.Counted {
			s.Datacenter = b.Each.Key
		}
	}
	return s
}

// checkDatacenters checks that each agent and key block's consul names
// a consul block with a label: a reference (consul.dc2) is checked as it
// is decoded, a name written as a string only here.
func checkDatacenters(d schema.Decoder, places []schema.Place) {
	cfg := d.Config()
	own, unnamed := SettingsOf(cfg), false
	byDatacenter := map[string]*Settings{}
	for _, p := range places {
		s := p.(*Settings)
		if s.Name == "" {
			byDatacenter[s.Datacenter] = s
			continue
		}
		if (own == nil || own.Datacenter == "") && !unnamed {
			unnamed = true // said once, at the first
			d.Errorf(s.DeclRange, s.DeclRange, "Own datacenter not named",
				"consul %q makes the project span datacenters, so its own is named too, consul { datacenter = \"dc1\" }: each agent is checked to be in its block's datacenter, and the lock is taken once in each.", s.Name)
		}
		if prev, dup := byDatacenter[s.Datacenter]; dup {
			d.Errorf(s.DeclRange, s.DeclRange, "Two consul blocks of one datacenter",
				"consul %q and the consul block at %s both declare the datacenter %q. A datacenter is declared once: its project lock is one key there.", s.Name, prev.DeclRange, s.Datacenter)
			continue
		}
		byDatacenter[s.Datacenter] = s
	}
	check := func(name string, at, context hcl.Range) {
		if name == "" || datacenterNamed(cfg, name) != nil {
			return
		}
		var names []string
		for _, s := range Datacenters(cfg) {
			names = append(names, fmt.Sprintf("%q", s.Name))
		}
		d.Errorf(at, context, "Unknown datacenter",
			"consul = %q names no consul block with that label (%s). Another datacenter of the project is declared as consul \"<name>\" { address = ... } and named consul = consul.<name>; without consul, the block is in the project's own datacenter.", name, cmp.Or(strings.Join(names, ", "), "none is declared"))
	}
	for _, a := range Agents(cfg) {
		check(a.Consul, a.ConsulRange, a.DeclRange)
	}
	for _, k := range kv.Keys(cfg) {
		check(k.Consul, k.ConsulRange, k.DeclRange)
	}
}

// ProxyPlace is the proxy block: how a service's frontends become the
// Consul tags that Traefik reads, proxy { dialect = "traefik-v2",
// prefix = "traefik" }. It is decoded last (Late): its prefix may be a
// module's output, or name a traefik block.
var ProxyPlace = &schema.PlaceSchema{Type: "proxy", Late: true, Decode: decodeProxy}

// Proxy is the proxy block, or its defaults.
type Proxy struct {
	schema.PlaceDecl
	Dialect labels.Dialect
	Prefix  string
}

// ProxyOf is the proxy block; without one, the defaults, declared at the
// project attribute.
func ProxyOf(cfg *schema.Config) Proxy {
	if p := schema.PlacesOf[*Proxy](cfg, ProxyPlace.Type); len(p) > 0 {
		return *p[0]
	}
	p := defaultProxy()
	p.DeclRange = cfg.ProjectRange
	return p
}

func defaultProxy() Proxy { return Proxy{Dialect: labels.DialectTraefik, Prefix: "traefik"} }

var proxySchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "dialect"}, {Name: "prefix"}},
}

func decodeProxy(d schema.Decoder, b schema.Block) schema.Place {
	p := defaultProxy()
	c := d.Content(b.Body, proxySchema)
	if attr, ok := c.Attributes["dialect"]; ok {
		switch dl := labels.Dialect(d.Str(attr)); dl {
		case labels.DialectTraefik, labels.DialectTraefikV1, labels.DialectTraefikV2, labels.DialectTraefikV3:
			p.Dialect = dl
		case "":
		default:
			d.Errorf(attr.Expr.Range(), b.DefRange, "Unsupported proxy dialect",
				"The dialect %q is not known; use \"traefik\" (Traefik 1 tags and tags both Traefik 2 and 3 accept, the default), \"traefik-v1\", \"traefik-v2\" or \"traefik-v3\".", dl)
		}
	}
	if attr, ok := c.Attributes["prefix"]; ok {
		p.Prefix = d.Str(attr)
		if !tagPrefix.MatchString(p.Prefix) {
			d.Errorf(attr.Expr.Range(), b.DefRange, "Invalid tag prefix",
				"The tag prefix %q must be letters, digits, \"-\" or \"_\", as in \"traefik\".", p.Prefix)
		}
	}
	return &p
}

var tagPrefix = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)
