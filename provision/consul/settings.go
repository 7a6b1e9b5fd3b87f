package consul

import (
	"regexp"

	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision/traefik/labels"
	"github.com/provision-dev/provision/schema"
)

// SettingsPlace is the consul block: the connection settings of the
// Consul agent, or, when agent blocks are declared, of the cluster (its
// datacenter, and the agent that holds the apply lock). Secrets (the ACL
// token) come from the environment only, never from a spec.
var SettingsPlace = schema.DefinePlace(&schema.PlaceSchema{Type: "consul", Decode: decodeSettings})

// Settings is the consul block.
type Settings struct {
	schema.PlaceDecl
	Address    string
	Datacenter string
}

// SettingsOf is the consul block; nil when there is none, and the
// environment decides.
func SettingsOf(cfg *schema.Config) *Settings {
	if s := schema.PlacesOf[*Settings](cfg, SettingsPlace); len(s) > 0 {
		return s[0]
	}
	return nil
}

var settingsSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "address"}, {Name: "datacenter"}},
}

func decodeSettings(d schema.Decoder, b schema.Block) schema.Place {
	c := d.Content(b.Body, settingsSchema)
	if attr, ok := c.Attributes["address"]; ok {
		d.NoCredentials(attr, d.Str(attr))
	}
	return &Settings{Address: d.Str(c.Attributes["address"]), Datacenter: d.Str(c.Attributes["datacenter"])}
}

// ProxyPlace is the proxy block: how a service's frontends become the
// Consul tags that Traefik reads, proxy { dialect = "traefik-v2",
// prefix = "traefik" }. It is decoded last (Late): its prefix may be a
// module's output, or name a traefik block.
var ProxyPlace = schema.DefinePlace(&schema.PlaceSchema{Type: "proxy", Late: true, Decode: decodeProxy})

// Proxy is the proxy block, or its defaults.
type Proxy struct {
	schema.PlaceDecl
	Dialect labels.Dialect
	Prefix  string
}

// ProxyOf is the proxy block; without one, the defaults, declared at the
// project attribute.
func ProxyOf(cfg *schema.Config) Proxy {
	if p := schema.PlacesOf[*Proxy](cfg, ProxyPlace); len(p) > 0 {
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
