// Package labels reads a service's Consul tags as Traefik reads them, and
// judges what they route against the gated paths. It is the one judge of
// a tag: schema asks it at validate, the Consul backend at plan of every
// registration an agent holds, and the proxy's proof of what it serves.
//
// Traefik 2 and 3's Consul catalog provider takes the tags that start
// with its prefix (case-sensitive), puts "traefik." in the prefix's place,
// and decodes the labels under traefik.http, traefik.tcp and traefik.udp
// with its label parser, github.com/traefik/paerser, in which the keys'
// parts are case-insensitive: traefik.HTTP.Routers.open.rule is the router
// open of traefik.http.routers (traefik's
// pkg/provider/consulcatalog/config.go, pkg/config/label/label.go;
// paerser's parser/labels_decode.go). Traefik 1.7 reads its frontend
// labels by their exact keys (traefik 1.7's provider/label).
package labels

import (
	"sort"
	"strings"

	"github.com/traefik/paerser/parser"
)

// Protocol is a kind of Traefik 2 and 3 router.
type Protocol string

const (
	HTTP Protocol = "http"
	TCP  Protocol = "tcp"
	UDP  Protocol = "udp"
)

// Router is one router the tags define, as Traefik reads it.
type Router struct {
	Protocol Protocol
	Name     string
	Rule     string
	// EntryPoints are the router's entrypoints; none is every entrypoint.
	EntryPoints []string
	Middlewares []string
	// Service is the service the router sends to; "" is the tags' own.
	Service string
}

// Config is what a service's tags route, as far as a gate goes.
type Config struct {
	Routers []Router
	// ForwardAuth are the addresses of the forwardAuth middlewares the
	// tags define, by middleware name.
	ForwardAuth map[string]string
	// Middlewares names every middleware the tags define.
	Middlewares []string
	// V1 are the tags read as Traefik 1.7 routes: a frontend rule or an
	// auth, in the default frontend or a named one, and traefik.enable.
	V1 []string
}

// Decode reads the tags under prefix as Traefik 2 and 3 read them, and
// the Traefik 1.7 frontend keys as 1.7 reads them. An error is tags
// Traefik's label parser refuses: the provider then drops the service's
// whole configuration.
func Decode(prefix string, tags []string) (Config, error) {
	cfg := Config{ForwardAuth: map[string]string{}}
	neutral := map[string]string{}
	for _, t := range tags {
		if !strings.HasPrefix(t, prefix) {
			continue
		}
		k, v, ok := strings.Cut(t, "=")
		if !ok {
			continue
		}
		rest := strings.TrimPrefix(k, prefix+".")
		neutral[parser.DefaultRootName+"."+rest] = v
		if v1Route(rest) {
			cfg.V1 = append(cfg.V1, t)
		}
	}
	root, err := parser.DecodeToNode(neutral, parser.DefaultRootName, "traefik.http", "traefik.tcp", "traefik.udp")
	if err != nil || root == nil {
		return cfg, err
	}
	for _, proto := range root.Children {
		p := Protocol(strings.ToLower(proto.Name))
		for _, group := range proto.Children {
			switch {
			case strings.EqualFold(group.Name, "routers"):
				for _, r := range group.Children {
					cfg.Routers = append(cfg.Routers, router(p, r))
				}
			case strings.EqualFold(group.Name, "middlewares"):
				for _, m := range group.Children {
					cfg.Middlewares = append(cfg.Middlewares, m.Name)
					if fa := child(m, "forwardAuth"); fa != nil {
						cfg.ForwardAuth[m.Name] = value(fa, "address")
					}
				}
			}
		}
	}
	sort.Slice(cfg.Routers, func(i, j int) bool {
		a, b := cfg.Routers[i], cfg.Routers[j]
		return a.Protocol < b.Protocol || a.Protocol == b.Protocol && a.Name < b.Name
	})
	return cfg, nil
}

// v1Route reports whether a key (after the prefix) is one Traefik 1.7
// routes by: traefik.enable, the default frontend's, or a segment's
// (<segment>.frontend.*). Compared case-insensitively, so that a key in
// another case is refused too, though 1.7 would ignore it.
func v1Route(key string) bool {
	k := strings.ToLower(key)
	return k == "enable" || strings.HasPrefix(k, "frontend.") || strings.HasPrefix(k, "frontends.") ||
		strings.Contains(k, ".frontend.")
}

func router(p Protocol, n *parser.Node) Router {
	r := Router{Protocol: p, Name: n.Name, Rule: value(n, "rule"), Service: value(n, "service")}
	r.EntryPoints = values(n, "entryPoints")
	r.Middlewares = values(n, "middlewares")
	return r
}

// child is n's child of that name, in any case, as paerser matches a
// field.
func child(n *parser.Node, name string) *parser.Node {
	for _, c := range n.Children {
		if strings.EqualFold(c.Name, name) {
			return c
		}
	}
	return nil
}

func value(n *parser.Node, name string) string {
	if c := child(n, name); c != nil {
		return c.Value
	}
	return ""
}

// values is a list label as paerser fills a []string: a comma-separated
// value, or one value an index (name[0]=a, name[1]=b).
func values(n *parser.Node, name string) []string {
	c := child(n, name)
	if c == nil {
		return nil
	}
	var out []string
	for _, s := range append([]*parser.Node{c}, c.Children...) {
		if s.Value == "" {
			continue
		}
		for _, v := range strings.Split(s.Value, ",") {
			out = append(out, strings.TrimSpace(v))
		}
	}
	return out
}
