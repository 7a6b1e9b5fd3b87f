package labels_test

import (
	"strings"
	"testing"

	"github.com/provision-dev/provision/provision/traefik/labels"
)

// gatedAPI are the tags the default dialect writes for the shipped specs'
// gated /api (consul.Tags), as the agent holds them.
var gatedAPI = []string{
	"traefik.enable=true",
	"traefik.frontend.rule=Path:/api",
	"traefik.frontend.auth.forward.address=http://127.0.0.1:8080/auth",
	"traefik.http.routers.gated-api.rule=Path(`/api`)",
	"traefik.http.routers.gated-api.middlewares=gated-api-auth",
	"traefik.http.middlewares.gated-api-auth.forwardauth.address=http://127.0.0.1:8080/auth",
	"traefik.http.middlewares.gated-api-auth.forwardauth.trustForwardHeader=false",
}

var apiGate = labels.Gate{Service: "gated-api", Probe: labels.Probe{Path: "/api"}, Auth: "http://127.0.0.1:8080/auth"}

// TestJudge: the routes that open the gate, decoded as Traefik decodes the
// tags (issue 72's bypasses among them), and those that do not.
func TestJudge(t *testing.T) {
	tests := map[string]struct {
		service string
		tags    []string
		// want is the route judged open ("" for none).
		want string
	}{
		"the generated tags":                   {"gated-api", gatedAPI, ""},
		"one TCP router, HostSNI *":            {"other", []string{"traefik.tcp.routers.raw.rule=HostSNI(`*`)", "traefik.tcp.routers.raw.entrypoints=web"}, `tcp router "raw"`},
		"an HTTP router in another case":       {"gated-api", []string{"traefik.HTTP.Routers.open.rule=PathPrefix(`/`)"}, `http router "open"`},
		"a middleware list in another case":    {"other", []string{"traefik.http.routers.r.rule=PathPrefix(`/api`)", "traefik.http.routers.r.MIDDLEWARES=gated-api-auth@consulcatalog"}, ""},
		"PathPrefix / of another service":      {"other", []string{"traefik.http.routers.all.rule=PathPrefix(`/`)"}, `http router "all"`},
		"a regexp that may claim /api":         {"other", []string{"traefik.http.routers.re.rule=PathRegexp(`^/a.i`)"}, `http router "re"`},
		"another host of another service":      {"other", []string{"traefik.http.routers.o.rule=Host(`other.example`) && PathPrefix(`/api`)"}, ""},
		"a router sent to the gated service":   {"other", []string{"traefik.http.routers.o.rule=Host(`other.example`)", "traefik.http.routers.o.service=gated-api@consulcatalog"}, `http router "o"`},
		"the gated service's own default rule": {"gated-api", []string{"traefik.http.routers.extra.entrypoints=web"}, `http router "extra"`},
		"a UDP router of the gated service":    {"gated-api", []string{"traefik.udp.routers.u.entrypoints=dns"}, `udp router "u"`},
		"a UDP router of another service":      {"other", []string{"traefik.udp.routers.u.entrypoints=dns"}, ""},
		"a middleware of another address":      {"other", []string{"traefik.http.routers.r.rule=PathPrefix(`/`)", "traefik.http.routers.r.middlewares=fake", "traefik.http.middlewares.fake.forwardauth.address=http://evil.example/auth"}, `http router "r"`},
		"a middleware of a file":               {"other", []string{"traefik.http.routers.r.rule=PathPrefix(`/`)", "traefik.http.routers.r.middlewares=gated-api-auth@file"}, `http router "r"`},
		"a Traefik 1 frontend":                 {"other", []string{"traefik.frontend.rule=PathPrefix:/"}, "Traefik 1 frontend"},
		"a Traefik 1 segment":                  {"other", []string{"traefik.open.frontend.rule=Path:/api"}, "Traefik 1 frontend open"},
		"a prefix Traefik does not read":       {"other", []string{"Traefik.http.routers.r.rule=PathPrefix(`/`)"}, ""},
	}
	for name, tt := range tests {
		// tags are the gated service's extra tags, or another service's.
		regs := []labels.Registration{{ID: "gated-api-1", Service: "gated-api", Tags: gatedAPI}}
		if tt.service == "gated-api" {
			regs[0].Tags = append(tt.tags, gatedAPI...)
		} else {
			regs = append(regs, labels.Registration{ID: tt.service + "-1", Service: tt.service, Tags: tt.tags})
		}
		open, unread := labels.Judge("traefik", []labels.Gate{apiGate}, regs)
		if len(unread) > 0 {
			t.Errorf("%s: unread %v", name, unread)
		}
		var got string
		if len(open) > 0 {
			got = open[0].Route
		}
		if got != tt.want || len(open) > 1 {
			t.Errorf("%s: judged open %v, want %q", name, open, tt.want)
		}
	}
}

// TestJudgeEntrypoints: a TCP router on another entrypoint than the
// gate's leaves it alone; on none (every one), it does not.
func TestJudgeEntrypoints(t *testing.T) {
	g := apiGate
	g.EntryPoints = []string{"web"}
	tcp := func(ep ...string) []labels.Registration {
		tags := []string{"traefik.tcp.routers.db.rule=HostSNI(`*`)"}
		if len(ep) > 0 {
			tags = append(tags, "traefik.tcp.routers.db.entrypoints="+strings.Join(ep, ","))
		}
		return []labels.Registration{{ID: "db-1", Service: "db", Tags: tags}}
	}
	for _, tt := range []struct {
		eps  []string
		open bool
	}{{[]string{"postgres"}, false}, {[]string{"postgres", "web"}, true}, {nil, true}} {
		open, _ := labels.Judge("traefik", []labels.Gate{g}, tcp(tt.eps...))
		if (len(open) > 0) != tt.open {
			t.Errorf("TCP router on %v: open %v, want %t", tt.eps, open, tt.open)
		}
	}
}

// TestDecodeRefused: tags Traefik's label parser refuses are said, not
// judged as harmless in silence.
func TestDecodeRefused(t *testing.T) {
	_, unread := labels.Judge("traefik", []labels.Gate{apiGate}, []labels.Registration{{ID: "x", Service: "x", Tags: []string{"traefik.http.routers..rule=Path(`/`)"}}})
	if len(unread) != 1 {
		t.Fatalf("unread = %v, want the empty router name refused", unread)
	}
}
