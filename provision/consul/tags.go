package consul

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/provision-dev/provision/schema"
)

// Tags are the service's Consul tags: its extra tags as written, then the
// tags that make the proxy claim the frontend. For Traefik 1 (the 1.7
// Consul catalog grammar) a gated /api becomes
//
//	traefik.enable=true
//	traefik.frontend.rule=Path:/api
//	traefik.frontend.auth.forward.address=http://127.0.0.1:8080/auth
//	traefik.frontend.auth.forward.authResponseHeaders=X-Auth-User
//
// and for Traefik 2 a router with a forwardAuth middleware. The default
// dialect writes both: Traefik 2 ignores the Traefik 1 tags and, seeing
// traefik.enable=true alone, would serve the service ungated on a default
// router.
func Tags(p schema.Proxy, s *schema.Service) []string {
	tags := append([]string{}, s.Tags...)
	f := s.Frontend
	if f == nil || f.Rule == nil {
		return tags
	}
	tag := func(format string, args ...any) {
		tags = append(tags, p.Prefix+"."+fmt.Sprintf(format, args...))
	}
	tag("enable=true")
	auth := f.ForwardAuth
	if p.Dialect.V1() {
		tag("frontend.rule=%s", f.Rule)
		if len(f.EntryPoints) > 0 {
			tag("frontend.entryPoints=%s", strings.Join(f.EntryPoints, ","))
		}
		if auth != nil {
			tag("frontend.auth.forward.address=%s", auth.Address)
			if len(auth.AuthResponseHeaders) > 0 {
				tag("frontend.auth.forward.authResponseHeaders=%s", strings.Join(auth.AuthResponseHeaders, ","))
			}
			if auth.TrustForwardHeader {
				tag("frontend.auth.forward.trustForwardHeader=true")
			}
		}
	}
	if p.Dialect.V2() {
		router := routerName(s.Name)
		rule, _ := f.Rule.V2() // schema refuses rules without a Traefik 2 form
		tag("http.routers.%s.rule=%s", router, rule)
		if len(f.EntryPoints) > 0 {
			tag("http.routers.%s.entrypoints=%s", router, strings.Join(f.EntryPoints, ","))
		}
		if auth != nil {
			mw := router + "-auth"
			tag("http.routers.%s.middlewares=%s", router, mw)
			tag("http.middlewares.%s.forwardauth.address=%s", mw, auth.Address)
			if len(auth.AuthResponseHeaders) > 0 {
				tag("http.middlewares.%s.forwardauth.authResponseHeaders=%s", mw, strings.Join(auth.AuthResponseHeaders, ","))
			}
			if auth.TrustForwardHeader {
				tag("http.middlewares.%s.forwardauth.trustForwardHeader=true", mw)
			}
		}
	}
	return tags
}

var routerUnsafe = regexp.MustCompile(`[^A-Za-z0-9_-]`)

// routerName is the Traefik 2 router of a service: its name, with anything
// a tag key cannot hold replaced by "-". Instances of one service share it.
func routerName(service string) string {
	return routerUnsafe.ReplaceAllString(service, "-")
}
