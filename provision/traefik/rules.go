package traefik

import (
	"regexp"
	"slices"
	"strings"

	"github.com/provision-dev/provision/schema"
)

// probe is one request that proves a gated path: the path (a
// PathPrefix's prefix itself) and the Host header of a Host matcher.
type probe struct {
	path, host string
}

// probes are the requests that prove a frontend's rule: each path with
// each host (no host when the rule has no Host matcher), or "/" when the
// rule names no path.
func probes(r *schema.Rule) []probe {
	var paths, hosts []string
	for _, m := range r.Matchers {
		switch m.Name {
		case "Path", "PathPrefix", "PathStrip", "PathPrefixStrip":
			paths = append(paths, m.Values...)
		case "Host":
			hosts = append(hosts, m.Values...)
		}
	}
	if len(paths) == 0 {
		paths = []string{"/"}
	}
	if len(hosts) == 0 {
		hosts = []string{""}
	}
	var out []probe
	for _, p := range paths {
		for _, h := range hosts {
			out = append(out, probe{path: p, host: h})
		}
	}
	return out
}

// claim is what a live router's rule matches, as far as paths and hosts
// go: Path, PathPrefix and Host matchers, in either generation's form.
type claim struct {
	paths, prefixes, hosts []string
	// opaque is true when the rule has a matcher that is not read here
	// (PathRegexp, HostRegexp, ...) on paths or hosts: it may claim more.
	opaque bool
}

var matcherCall = regexp.MustCompile(`(Path|PathPrefix|Host|PathRegexp|HostRegexp|HostSNI)\(([^)]*)\)`)
var quoted = regexp.MustCompile("`([^`]*)`|\"([^\"]*)\"")

// readRule reads the path and host matchers of a router's rule.
func readRule(rule string) claim {
	var c claim
	for _, m := range matcherCall.FindAllStringSubmatch(rule, -1) {
		var args []string
		for _, q := range quoted.FindAllStringSubmatch(m[2], -1) {
			args = append(args, q[1]+q[2])
		}
		switch m[1] {
		case "Path":
			c.paths = append(c.paths, args...)
		case "PathPrefix":
			c.prefixes = append(c.prefixes, args...)
		case "Host":
			c.hosts = append(c.hosts, args...)
		default:
			c.opaque = true
		}
	}
	return c
}

// claims reports whether a router with this rule would serve the probe's
// request: its path is one the rule names or under one of its prefixes
// (or the rule names no path), and its host is one the rule names (or the
// rule names no host). A rule with matchers not read here claims nothing
// it cannot be shown to claim.
func (c claim) claims(p probe) bool {
	pathOK := len(c.paths)+len(c.prefixes) == 0 || slices.Contains(c.paths, p.path) ||
		slices.ContainsFunc(c.prefixes, func(pre string) bool { return strings.HasPrefix(p.path, pre) })
	hostOK := len(c.hosts) == 0 || slices.ContainsFunc(c.hosts, func(h string) bool { return strings.EqualFold(h, p.host) })
	return pathOK && hostOK && !c.opaque
}
