package schema

import (
	"fmt"
	"net/url"

	"github.com/hashicorp/hcl/v2"
)

// Traefik is a live proxy that reads this Consul catalog: apply proves
// through it that every gated frontend is served behind its forward-auth
// middleware, and by nothing else.
type Traefik struct {
	Name string
	// API is the proxy's API (api.insecure, or a router to api@internal),
	// read for its routers and middlewares.
	API string
	// URL is an entrypoint clients use, where each gated path is probed
	// without a token and with a wrong one.
	URL       string
	DeclRange hcl.Range
	APIRange  hcl.Range
	URLRange  hcl.Range
}

var traefikSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "api", Required: true}, {Name: "url", Required: true}},
}

// traefikName is what a traefik block's label may be: it is the proxy's
// address, traefik.<name>.
var traefikName = PlaceLabel

func (d *decoder) traefikBlock(b *hcl.Block) *Traefik {
	t := &Traefik{Name: b.Labels[0], DeclRange: b.DefRange}
	if !traefikName.MatchString(t.Name) {
		d.errorf(b.LabelRanges[0], b.DefRange, "Invalid traefik name",
			"The name %q is the proxy's address (traefik.%s) in plans and reports; use letters, digits, \"_\" and \"-\", starting with a letter.", t.Name, t.Name)
	}
	c := d.content(b.Body, traefikSchema)
	for name, to := range map[string]*struct {
		s   *string
		rng *hcl.Range
	}{"api": {&t.API, &t.APIRange}, "url": {&t.URL, &t.URLRange}} {
		attr, ok := c.Attributes[name]
		if !ok {
			continue
		}
		*to.s, *to.rng = d.str(attr), attr.Expr.Range()
		if *to.s == "" {
			continue
		}
		if err := AbsoluteHTTPURL(*to.s); err != nil {
			d.errorf(attr.Expr.Range(), b.DefRange, "Invalid traefik URL",
				"The %s of traefik %q, %q, %s; write an absolute http:// or https:// URL, such as \"http://127.0.0.1:8080\".", name, t.Name, *to.s, err)
			continue
		}
		if credentials(*to.s) {
			d.errorf(attr.Expr.Range(), b.DefRange, "Credentials in a spec",
				"The %s of traefik %q carries credentials. Specs are committed and plans are shared: a proxy API behind basic auth takes its user and password from TRAEFIK_API_USERNAME and TRAEFIK_API_PASSWORD.", name, t.Name)
		}
		if u, _ := url.Parse(*to.s); name == "url" && u.Path != "" && u.Path != "/" {
			d.errorf(attr.Expr.Range(), b.DefRange, "Invalid traefik URL",
				"The url of traefik %q is an entrypoint, scheme, host and port only (the gated paths are probed under it); %q has the path %q.", t.Name, *to.s, u.Path)
		}
	}
	return t
}

// checkTraefiks reports duplicate traefik blocks.
func (d *decoder) checkTraefiks(cfg *Config) {
	unique(d, "Duplicate traefik block", "traefik", cfg.Traefiks, func(t *Traefik) (string, hcl.Range) { return t.Name, t.DeclRange })
}

// unique indexes blocks by name, and reports each block whose name an
// earlier one has (summary; noun names the kind: "search").
func unique[T any](d *decoder, summary, noun string, blocks []T, name func(T) (string, hcl.Range)) map[string]T {
	seen := map[string]T{}
	for _, b := range blocks {
		n, at := name(b)
		if prev, dup := seen[n]; dup {
			_, prevAt := name(prev)
			d.diags = append(d.diags, duplicate(summary, fmt.Sprintf("%s %q", noun, n), at, prevAt))
			continue
		}
		seen[n] = b
	}
	return seen
}
