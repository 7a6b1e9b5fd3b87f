package labels

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Rule is a frontend rule in the Traefik 1.7 grammar: matchers joined by
// ";" (all must match), each "Name:value[,value]" (any value matches).
type Rule struct {
	Matchers []Matcher
}

// Probes are the requests that prove the rule: each of its paths (a
// PathPrefix at the prefix itself) with each of its hosts.
func (r *Rule) Probes() []Probe {
	var paths, hosts []string
	for _, m := range r.Matchers {
		switch m.Name {
		case "Path", "PathPrefix", "PathStrip", "PathPrefixStrip":
			paths = append(paths, m.Values...)
		case "Host":
			hosts = append(hosts, m.Values...)
		}
	}
	return Probes(paths, hosts)
}

// Dialect says which Traefik generations read a service's tags.
type Dialect string

const (
	// DialectTraefik writes the Traefik 1 tags and one set of http.* tags
	// in the grammar Traefik 2 and Traefik 3 both accept, so that a gated
	// frontend is gated whichever generation reads the catalog.
	DialectTraefik   Dialect = "traefik"
	DialectTraefikV1 Dialect = "traefik-v1"
	DialectTraefikV2 Dialect = "traefik-v2"
	DialectTraefikV3 Dialect = "traefik-v3"
)

// V1 reports whether Traefik 1 tags are written.
func (d Dialect) V1() bool { return d == DialectTraefik || d == DialectTraefikV1 }

// HTTP reports whether the http.* tags of Traefik 2 and 3 are written.
func (d Dialect) HTTP() bool { return d != DialectTraefikV1 }

// Grammar is the rule grammar of the http.* tags.
func (d Dialect) Grammar() Grammar {
	switch d {
	case DialectTraefikV2:
		return GrammarV2
	case DialectTraefikV3:
		return GrammarV3
	}
	return GrammarCommon
}

// Matcher is one "Name:values" term of a Rule.
type Matcher struct {
	Name   string
	Values []string
}

// Grammar is a rule syntax of the Traefik generations that read the
// http.* tags: Traefik 2's, Traefik 3's, or the forms both accept alike.
type Grammar int

const (
	GrammarV2 Grammar = iota
	GrammarV3
	// GrammarCommon is what the default dialect writes: one form that
	// Traefik 2 and Traefik 3 both accept and read the same way (one value
	// per matcher, several values as an || group).
	GrammarCommon
)

// matcherForms are the Traefik 1.7 matchers and modifiers with the name
// each becomes in the Traefik 2 and the Traefik 3 grammar ("" when that
// generation has none), and whether one form means the same to both
// (Traefik's migration guide from v2 to v3,
// doc.traefik.io/traefik/migration/v2-to-v3/; Traefik's
// pkg/muxer/http/mux.go at v2.11.10 and matcher.go at v3.6.0).
var matcherForms = map[string]struct {
	v2, v3 string
	common bool
}{
	"Host":             {"Host", "Host", true},
	"HostRegexp":       {"HostRegexp", "HostRegexp", false}, // v2: {name:re} placeholders, else literal; v3: a plain regexp
	"Path":             {"Path", "Path", true},
	"PathPrefix":       {"PathPrefix", "PathPrefix", true},
	"Method":           {"Method", "Method", true},
	"Headers":          {"Headers", "Header", false},
	"HeadersRegexp":    {"HeadersRegexp", "HeaderRegexp", false},
	"Query":            {"Query", "Query", false}, // v2: Query(`k=v`); v3: Query(`k`, `v`)
	"PathStrip":        {},
	"PathPrefixStrip":  {},
	"AddPrefix":        {},
	"ReplacePath":      {},
	"ReplacePathRegex": {},
}

// NameIn is the matcher's name in grammar g; "" when g has no such matcher.
func (m Matcher) NameIn(g Grammar) string {
	f := matcherForms[m.Name]
	if g == GrammarV2 {
		return f.v2
	}
	return f.v3
}

// Check says why the rule cannot be written in grammar g: which
// generation refuses which form, and what to choose instead.
func (r *Rule) Check(g Grammar) error {
	for _, m := range r.Matchers {
		f := matcherForms[m.Name]
		switch {
		case f.v2 == "":
			return fmt.Errorf("%s is a Traefik 1 modifier, which Traefik 2 and 3 express as a middleware; use it with dialect \"traefik-v1\" only", m.Name)
		case g == GrammarCommon && !f.common:
			return fmt.Errorf("%s has no form that both Traefik 2 and Traefik 3 accept alike (Traefik 2 writes %s(...), Traefik 3 %s(...) with other arguments or meaning; "+
				"each generation drops the router of the other's form); choose dialect \"traefik-v2\" or \"traefik-v3\" for the generation you run", m.Name, f.v2, f.v3)
		case g != GrammarV2 && (m.Name == "Path" || m.Name == "PathPrefix") && slices.ContainsFunc(m.Values, placeholder):
			return fmt.Errorf("%s with a {name:regexp} placeholder is Traefik 2 syntax; Traefik 3 matches the braces literally (use PathRegexp there), so choose dialect \"traefik-v2\"", m.Name)
		case g == GrammarV3 && m.Name == "HostRegexp" && slices.ContainsFunc(m.Values, placeholder):
			return fmt.Errorf("the matcher HostRegexp with a {name:regexp} placeholder is Traefik 2 syntax; Traefik 3 takes a plain regular expression and never matches the placeholder form")
		case g == GrammarV3 && m.Name == "Query" && slices.ContainsFunc(m.Values, func(v string) bool { return !strings.Contains(v, "=") }):
			return fmt.Errorf("the matcher Query takes key=value pairs, as in Query:env=prod; Traefik 3 writes each as Query(`key`, `value`)")
		}
	}
	return nil
}

func placeholder(v string) bool { return strings.Contains(v, "{") }

// ParseRule parses s in the Traefik 1.7 rule grammar. The error says which
// part of the rule is wrong.
func ParseRule(s string) (*Rule, error) {
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("the rule is empty")
	}
	r := &Rule{}
	for _, term := range strings.Split(s, ";") {
		name, value, ok := strings.Cut(strings.TrimSpace(term), ":")
		if !ok {
			return nil, fmt.Errorf("%q has no \":\"; each matcher is written Name:value, as in Path:/api", term)
		}
		name = strings.TrimSpace(name)
		if _, known := matcherForms[name]; !known {
			return nil, fmt.Errorf("%q is not a Traefik matcher; use one of %s", name, strings.Join(matcherNames(), ", "))
		}
		m := Matcher{Name: name}
		for _, v := range strings.Split(value, ",") {
			v = strings.TrimSpace(v)
			if v == "" {
				return nil, fmt.Errorf("matcher %s has an empty value", name)
			}
			if strings.Contains(v, "`") {
				return nil, fmt.Errorf("matcher %s has a value with a backtick, which no Traefik rule can quote", name)
			}
			if strings.Contains(name, "Path") && !strings.HasPrefix(v, "/") {
				return nil, fmt.Errorf("matcher %s takes paths, and %q does not start with \"/\"", name, v)
			}
			m.Values = append(m.Values, v)
		}
		if (name == "Headers" || name == "HeadersRegexp") && len(m.Values) != 2 {
			return nil, fmt.Errorf("matcher %s takes exactly a header name and a value, as in %s:Content-Type,application/json", name, name)
		}
		r.Matchers = append(r.Matchers, m)
	}
	return r, nil
}

func matcherNames() []string {
	names := make([]string, 0, len(matcherForms))
	for n := range matcherForms {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// String renders the rule in the Traefik 1.7 grammar, normalised.
func (r *Rule) String() string {
	terms := make([]string, len(r.Matchers))
	for i, m := range r.Matchers {
		terms[i] = m.Name + ":" + strings.Join(m.Values, ",")
	}
	return strings.Join(terms, ";")
}
