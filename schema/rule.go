package schema

import (
	"fmt"
	"sort"
	"strings"
)

// Rule is a frontend rule in the Traefik 1.7 grammar: matchers joined by
// ";" (all must match), each "Name:value[,value]" (any value matches).
type Rule struct {
	Matchers []Matcher
}

// Matcher is one "Name:values" term of a Rule.
type Matcher struct {
	Name   string
	Values []string
}

// ruleMatchers are the Traefik 1.7 matchers and modifiers, with the name of
// the Traefik 2 matcher each becomes ("" when Traefik 2 has none).
var ruleMatchers = map[string]string{
	"Host":             "Host",
	"HostRegexp":       "HostRegexp",
	"Path":             "Path",
	"PathPrefix":       "PathPrefix",
	"Method":           "Method",
	"Headers":          "Headers",
	"HeadersRegexp":    "HeadersRegexp",
	"Query":            "Query",
	"PathStrip":        "",
	"PathPrefixStrip":  "",
	"AddPrefix":        "",
	"ReplacePath":      "",
	"ReplacePathRegex": "",
}

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
		if _, known := ruleMatchers[name]; !known {
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
	names := make([]string, 0, len(ruleMatchers))
	for n := range ruleMatchers {
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

// V2 renders the rule in the Traefik 2 grammar:
// Host:a.example.com;PathPrefix:/api becomes
// Host(`a.example.com`) && PathPrefix(`/api`). It fails for the Traefik 1
// modifiers (PathStrip, AddPrefix, ...), which Traefik 2 expresses as
// middlewares instead.
func (r *Rule) V2() (string, error) {
	terms := make([]string, len(r.Matchers))
	for i, m := range r.Matchers {
		name := ruleMatchers[m.Name]
		if name == "" {
			return "", fmt.Errorf("%s has no Traefik 2 matcher (Traefik 2 expresses it as a middleware)", m.Name)
		}
		args := make([]string, len(m.Values))
		for j, v := range m.Values {
			args[j] = "`" + v + "`"
		}
		terms[i] = name + "(" + strings.Join(args, ", ") + ")"
	}
	return strings.Join(terms, " && "), nil
}
