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
// go: its alternatives (the parts of a top-level ||), each the Path,
// PathPrefix and Host matchers that must all hold, in either generation's
// form.
type claim []alternative

type alternative struct {
	paths, prefixes, hosts []string
	// opaque is true when the alternative has a matcher that is not read
	// here (PathRegexp, HostRegexp, ...) or a negation: what it claims is
	// not known, and it is not counted.
	opaque bool
}

var matcherCall = regexp.MustCompile(`(Path|PathPrefix|Host|PathRegexp|HostRegexp|HostSNI)\(([^)]*)\)`)
var quoted = regexp.MustCompile("`([^`]*)`|\"([^\"]*)\"")

// readRule reads the path and host matchers of a router's rule.
func readRule(rule string) claim {
	var c claim
	for _, part := range alternatives(rule) {
		var a alternative
		a.opaque = strings.Contains(part, "!")
		for _, m := range matcherCall.FindAllStringSubmatch(part, -1) {
			var args []string
			for _, q := range quoted.FindAllStringSubmatch(m[2], -1) {
				args = append(args, q[1]+q[2])
			}
			switch m[1] {
			case "Path":
				a.paths = append(a.paths, args...)
			case "PathPrefix":
				a.prefixes = append(a.prefixes, args...)
			case "Host":
				a.hosts = append(a.hosts, args...)
			default:
				a.opaque = true
			}
		}
		c = append(c, a)
	}
	return c
}

// alternatives splits a rule at its top-level ||, outer parentheses
// dropped: "(A || B)" and "A || B" are A and B; "H && (A || B)" stays one
// alternative, whose paths are then any of A's and B's.
func alternatives(rule string) []string {
	rule = strings.TrimSpace(rule)
	for strings.HasPrefix(rule, "(") && closing(rule) == len(rule)-1 {
		rule = strings.TrimSpace(rule[1 : len(rule)-1])
	}
	var out []string
	from := 0
	unquoted(rule, func(i, depth int) bool {
		if depth == 0 && i >= from && strings.HasPrefix(rule[i:], "||") {
			out = append(out, rule[from:i])
			from = i + 2
		}
		return true
	})
	return append(out, rule[from:])
}

// closing is the index of the parenthesis that closes the one s starts
// with; -1 when none does.
func closing(s string) int {
	at := -1
	unquoted(s, func(i, depth int) bool {
		if s[i] == ')' && depth == 1 {
			at = i
			return false
		}
		return true
	})
	return at
}

// unquoted calls f for every byte of s outside quotes, with the depth of
// the parentheses around it (an opening one counts itself, a closing one
// too); f ends the walk by returning false.
func unquoted(s string, f func(i, depth int) bool) {
	depth := 0
	var quote byte
	for i := 0; i < len(s); i++ {
		switch ch := s[i]; {
		case quote != 0:
			if ch == quote {
				quote = 0
			}
			continue
		case ch == '`' || ch == '"':
			quote = ch
			continue
		case ch == '(':
			depth++
		}
		if !f(i, depth) {
			return
		}
		if s[i] == ')' {
			depth--
		}
	}
}

// claims reports whether a router with this rule would serve the probe's
// request: some alternative of it names the probe's path or a prefix of
// it (or no path), and its host (or no host). An alternative with
// matchers not read here claims nothing it cannot be shown to claim.
func (c claim) claims(p probe) bool {
	return slices.ContainsFunc(c, func(a alternative) bool { return a.claims(p) })
}

func (a alternative) claims(p probe) bool {
	pathOK := len(a.paths)+len(a.prefixes) == 0 || slices.Contains(a.paths, p.path) ||
		slices.ContainsFunc(a.prefixes, func(pre string) bool { return strings.HasPrefix(p.path, pre) })
	hostOK := len(a.hosts) == 0 || slices.ContainsFunc(a.hosts, func(h string) bool { return strings.EqualFold(h, p.host) })
	return pathOK && hostOK && !a.opaque
}
