package traefik

import (
	"net/url"

	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/schema"
)

// ProxyPlace is the place of a live proxy that reads the Consul catalog,
// traefik "<name>" { api = ...; url = ... }: apply proves through it that
// every gated frontend is served behind its forward-auth middleware, and
// by nothing else. Its package decodes it; the loader expands it as any
// place.
var ProxyPlace = &schema.PlaceSchema{Type: "traefik", Label: "name", Decode: decodeProxy, Polled: true}

// Proxy is one instance of a traefik block.
type Proxy struct {
	schema.PlaceDecl
	// API is the proxy's API (api.insecure, or a router to api@internal),
	// read for its routers and middlewares.
	API string
	// URL is an entrypoint clients use, where each gated path is probed
	// without a token and with a wrong one.
	URL      string
	APIRange hcl.Range
	URLRange hcl.Range
}

// Proxies are the traefik blocks' instances, in block and key order.
func Proxies(cfg *schema.Config) []*Proxy { return schema.PlacesOf[*Proxy](cfg, ProxyPlace.Type) }

var proxySchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "api", Required: true}, {Name: "url", Required: true}},
}

func decodeProxy(d schema.Decoder, b schema.Block) schema.Place {
	t := &Proxy{}
	proxy := schema.InstanceName(b.Labels[0], b.Each)
	if !schema.PlaceLabel.MatchString(b.Labels[0]) {
		d.Errorf(b.LabelRanges[0], b.DefRange, "Invalid traefik name",
			"The name %q is the proxy's address (traefik.%s) in plans and reports; use letters, digits, \"_\" and \"-\", starting with a letter.", b.Labels[0], b.Labels[0])
	}
	c := d.Content(b.Body, proxySchema)
	for name, to := range map[string]*struct {
		s   *string
		rng *hcl.Range
	}{"api": {&t.API, &t.APIRange}, "url": {&t.URL, &t.URLRange}} {
		attr, ok := c.Attributes[name]
		if !ok {
			continue
		}
		*to.s, *to.rng = d.Str(attr), attr.Expr.Range()
		if *to.s == "" {
			continue
		}
		if err := schema.AbsoluteHTTPURL(*to.s); err != nil {
			d.Errorf(attr.Expr.Range(), b.DefRange, "Invalid traefik URL",
				"The %s of traefik %q, %q, %s; write an absolute http:// or https:// URL, such as \"http://127.0.0.1:8080\".", name, proxy, *to.s, err)
			continue
		}
		if schema.Credentials(*to.s) {
			d.Errorf(attr.Expr.Range(), b.DefRange, "Credentials in a spec",
				"The %s of traefik %q carries credentials. Specs are committed and plans are shared: a proxy API behind basic auth takes its user and password from TRAEFIK_API_USERNAME and TRAEFIK_API_PASSWORD.", name, proxy)
		}
		if u, _ := url.Parse(*to.s); name == "url" && u.Path != "" && u.Path != "/" {
			d.Errorf(attr.Expr.Range(), b.DefRange, "Invalid traefik URL",
				"The url of traefik %q is an entrypoint, scheme, host and port only (the gated paths are probed under it); %q has the path %q.", proxy, *to.s, u.Path)
		}
	}
	return t
}
