package labels

import (
	"regexp"
	"slices"
	"strings"
)

// Probe is one request that proves a gated path: the path (a
// PathPrefix's prefix itself) and the Host header of a Host matcher.
type Probe struct {
	Path, Host string
}

// Probes are the requests that prove a rule whose Path and PathPrefix
// matchers name paths and whose Host matchers name hosts: each path with
// each host (no host when there is none), or "/" when there is no path.
func Probes(paths, hosts []string) []Probe {
	if len(paths) == 0 {
		paths = []string{"/"}
	}
	if len(hosts) == 0 {
		hosts = []string{""}
	}
	var out []Probe
	for _, p := range paths {
		for _, h := range hosts {
			out = append(out, Probe{Path: p, Host: h})
		}
	}
	return out
}

// Claim is what a live router's rule matches, as far as paths and hosts
// go: its alternatives (the parts of a top-level ||), each the Path,
// PathPrefix and Host matchers that must all hold, in either generation's
// form.
type Claim []alternative

type alternative struct {
	paths, prefixes, hosts []string
	// opaque is true when the alternative has a matcher that is not read
	// here (PathRegexp, HostRegexp, ...) or a negation: what it claims is
	// not known, and it is not counted.
	opaque bool
}

var matcherCall = regexp.MustCompile(`(Path|PathPrefix|Host|PathRegexp|HostRegexp|HostSNI)\(([^)]*)\)`)
var quoted = regexp.MustCompile("`([^`]*)`|\"([^\"]*)\"")

// ReadRule reads the path and host matchers of a router's rule.
func ReadRule(rule string) Claim {
	var c Claim
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

// Claims reports whether a router with this rule would serve the probe's
// request: some alternative of it names the probe's path or a prefix of
// it (or no path), and its host (or no host). An alternative with
// matchers not read here claims nothing it cannot be shown to claim: this
// is what a proxy that serves the rule is asked about.
func (c Claim) Claims(p Probe) bool {
	return slices.ContainsFunc(c, func(a alternative) bool { return !a.opaque && a.path(p.Path) && a.host(p.Host) })
}

// MayClaim reports whether a router with this rule could serve the
// probe's request: as Claims, but an alternative with matchers not read
// here (a regexp, a negation) may. This is what a tag is judged by before
// any proxy has read it.
func (c Claim) MayClaim(p Probe) bool {
	return slices.ContainsFunc(c, func(a alternative) bool { return a.opaque || a.path(p.Path) && a.host(p.Host) })
}

func (a alternative) path(p string) bool {
	return len(a.paths)+len(a.prefixes) == 0 || slices.Contains(a.paths, p) ||
		slices.ContainsFunc(a.prefixes, func(pre string) bool { return strings.HasPrefix(p, pre) })
}

func (a alternative) host(h string) bool {
	return len(a.hosts) == 0 || slices.ContainsFunc(a.hosts, func(x string) bool { return strings.EqualFold(x, h) })
}

// ReadRuleV1 reads a 1.7 rule ("Host:a.example.com;PathPrefix:/x,/y"):
// one alternative whose terms must all hold, each of its values one
// choice. A matcher not read here (a regexp, a header, a method) or a
// path with a template makes it opaque, as for the later grammar.
// Modifiers (AddPrefix, ReplacePath, ...) match nothing and are skipped.
func ReadRuleV1(rule string) Claim {
	var a alternative
	for _, term := range strings.Split(rule, ";") {
		name, value, _ := strings.Cut(strings.TrimSpace(term), ":")
		values := strings.Split(value, ",")
		for i := range values {
			values[i] = strings.TrimSpace(values[i])
		}
		switch name = strings.TrimSpace(name); name {
		case "Path", "PathStrip":
			a.paths = append(a.paths, values...)
		case "PathPrefix", "PathPrefixStrip":
			a.prefixes = append(a.prefixes, values...)
		case "Host":
			a.hosts = append(a.hosts, values...)
		case "AddPrefix", "ReplacePath", "ReplacePathRegex":
		default:
			a.opaque = true
		}
		if strings.Contains(name, "Path") && strings.Contains(value, "{") {
			a.opaque = true
		}
	}
	return Claim{a}
}
