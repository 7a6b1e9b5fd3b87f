package consul

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/provision-dev/provision/provision/traefik/labels"
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
// and for Traefik 2 and 3 a router with a forwardAuth middleware, its rule
// in the dialect's grammar (RuleIn). The default dialect writes both:
// Traefik 2 and 3 ignore the Traefik 1 tags and, seeing
// traefik.enable=true alone, would serve the service ungated on a default
// router. Only keys every generation of the dialect knows are written:
// Traefik 2.11 drops a whole service over one tag key it does not know.
func Tags(p Proxy, s *Decl) []string {
	tags := append(make([]string, 0, len(s.Tags)+12), s.Tags...) // room for a frontend's
	f := s.Frontend
	if f == nil || f.Rule == nil {
		return tags
	}
	// tag adds the tag of key and value, after the prefix; a key given
	// in parts is joined (Sprintf was half the time a plan of 10,000
	// converged services spent on their tags).
	tag := func(value string, key ...string) {
		n := len(p.Prefix) + len(value) + 2
		for _, k := range key {
			n += len(k)
		}
		var b strings.Builder
		b.Grow(n)
		b.WriteString(p.Prefix)
		b.WriteByte('.')
		for _, k := range key {
			b.WriteString(k)
		}
		b.WriteByte('=')
		b.WriteString(value)
		tags = append(tags, b.String())
	}
	tag("true", "enable")
	auth := f.ForwardAuth
	if p.Dialect.V1() {
		tag(f.Rule.String(), "frontend.rule")
		if len(f.EntryPoints) > 0 {
			tag(strings.Join(f.EntryPoints, ","), "frontend.entryPoints")
		}
		if auth != nil {
			tag(auth.Address, "frontend.auth.forward.address")
			if len(auth.AuthResponseHeaders) > 0 {
				tag(strings.Join(auth.AuthResponseHeaders, ","), "frontend.auth.forward.authResponseHeaders")
			}
			if auth.TrustForwardHeader {
				tag("true", "frontend.auth.forward.trustForwardHeader")
			}
			tlsTags(auth.TLS, func(k, v string) { tag(v, "frontend.auth.forward.tls.", k) })
		}
	}
	if p.Dialect.HTTP() {
		router := "http.routers." + routerName(s.Service)
		rule, _ := RuleIn(f.Rule, p.Dialect.Grammar()) // schema refuses rules without a form
		tag(rule, router, ".rule")
		if len(f.EntryPoints) > 0 {
			tag(strings.Join(f.EntryPoints, ","), router, ".entrypoints")
		}
		if auth != nil {
			mw := routerName(s.Service) + "-auth"
			tag(mw, router, ".middlewares")
			fa := "http.middlewares." + mw + ".forwardauth."
			tag(auth.Address, fa, "address")
			if len(auth.AuthResponseHeaders) > 0 {
				tag(strings.Join(auth.AuthResponseHeaders, ","), fa, "authResponseHeaders")
			}
			if auth.AuthResponseHeadersRegex != "" {
				tag(auth.AuthResponseHeadersRegex, fa, "authResponseHeadersRegex")
			}
			if len(auth.AuthRequestHeaders) > 0 {
				tag(strings.Join(auth.AuthRequestHeaders, ","), fa, "authRequestHeaders")
			}
			// Always explicit: Traefik 3.6 warns when it is unset.
			tag(strconv.FormatBool(auth.TrustForwardHeader), fa, "trustForwardHeader")
			tlsTags(auth.TLS, func(k, v string) { tag(v, fa, "tls.", k) })
		}
	}
	return tags
}

// tlsTags writes the forward-auth TLS options, with the key names every
// generation shares.
func tlsTags(t *ForwardAuthTLS, tag func(k, v string)) {
	if t == nil {
		return
	}
	for _, kv := range [][2]string{{"ca", t.CA}, {"cert", t.Cert}, {"key", t.Key}} {
		if kv[1] != "" {
			tag(kv[0], kv[1])
		}
	}
	if t.InsecureSkipVerify {
		tag("insecureSkipVerify", "true")
	}
}

// RuleIn renders a rule in a grammar of the http.* tags. Matchers are
// joined by &&. In the Traefik 2 grammar a matcher takes all its values:
// Path(`/a`, `/b`); in the Traefik 3 and the common grammar each value is
// its own matcher and several make an || group: (Path(`/a`) || Path(`/b`)).
// Traefik 3's Header(`k`, `v`) takes the 1.7 Headers:k,v pair, and its
// Query(`k`, `v`) each k=v value. It fails where schema's Rule.Check does.
func RuleIn(r *labels.Rule, g labels.Grammar) (string, error) {
	if err := r.Check(g); err != nil {
		return "", err
	}
	q := func(vs ...string) string { return "`" + strings.Join(vs, "`, `") + "`" }
	terms := make([]string, len(r.Matchers))
	for i, m := range r.Matchers {
		name := m.NameIn(g)
		var alts []string
		switch {
		case g == labels.GrammarV2:
			alts = []string{name + "(" + q(m.Values...) + ")"}
		case m.Name == "Headers" || m.Name == "HeadersRegexp":
			alts = []string{name + "(" + q(m.Values...) + ")"}
		case m.Name == "Query":
			for _, v := range m.Values {
				k, val, _ := strings.Cut(v, "=")
				alts = append(alts, name+"("+q(k, val)+")")
			}
		default:
			for _, v := range m.Values {
				alts = append(alts, name+"("+q(v)+")")
			}
		}
		terms[i] = alts[0]
		if len(alts) > 1 {
			terms[i] = "(" + strings.Join(alts, " || ") + ")"
		}
	}
	return strings.Join(terms, " && "), nil
}

var routerUnsafe = regexp.MustCompile(`[^A-Za-z0-9_-]`)

// routerName is the Traefik 2 router of a service: its name, with anything
// a tag key cannot hold replaced by "-". Instances of one service share it.
func routerName(service string) string {
	for _, c := range []byte(service) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return routerUnsafe.ReplaceAllString(service, "-")
		}
	}
	return service // most names: no expression to run
}

// ReadTags is the inverse of Tags, for taking over a registration made by
// hand: it reads the frontend back from the proxy tags under prefix. The
// Traefik 1 tags (frontend.rule, frontend.entryPoints,
// frontend.auth.forward.*) are read first; the Traefik 2 tags of one router
// and its forwardAuth middleware are read when there are no Traefik 1 tags,
// or taken as the same frontend when they say the same. plain are the tags
// outside the prefix, kept as written; unread are proxy tags that could not
// be read back, which the caller keeps as plain tags with a comment.
func ReadTags(prefix string, tags []string) (f *Frontend, plain, unread []string) {
	kv := map[string]string{}
	var keys []string
	for _, t := range tags {
		k, v, ok := strings.Cut(t, "=")
		rest, under := strings.CutPrefix(k, prefix+".")
		if !ok || !under || kv[rest] != "" {
			plain = append(plain, t)
			continue
		}
		kv[rest] = v
		keys = append(keys, rest)
	}
	used := map[string]bool{}
	f1 := readV1(kv, used)
	v2used := map[string]bool{}
	f2 := readV2(kv, v2used)
	switch {
	case f1 == nil:
		f = f2
		maps.Copy(used, v2used)
	case f2 != nil && sameFrontend(f1, f2):
		f = f1
		maps.Copy(used, v2used)
	default:
		f = f1
	}
	if f != nil && kv["enable"] == "true" {
		used["enable"] = true
	}
	for _, k := range keys {
		if !used[k] {
			unread = append(unread, prefix+"."+k+"="+kv[k])
		}
	}
	return f, plain, unread
}

// readV1 reads the Traefik 1 frontend tags, marking the keys it used.
func readV1(kv map[string]string, used map[string]bool) *Frontend {
	rule, err := labels.ParseRule(kv["frontend.rule"])
	if err != nil {
		return nil
	}
	f := &Frontend{Rule: rule}
	used["frontend.rule"] = true
	if ep, ok := kv["frontend.entryPoints"]; ok {
		f.EntryPoints, used["frontend.entryPoints"] = strings.Split(ep, ","), true
	}
	f.ForwardAuth = readAuth(kv, used, "frontend.auth.forward.")
	return f
}

// readV2 reads the one router of the Traefik 2 tags and its forwardAuth
// middleware, marking the keys it used; nil when there is not exactly one
// router with a readable rule and at most one middleware, a forwardAuth.
func readV2(kv map[string]string, used map[string]bool) *Frontend {
	routers := map[string]bool{}
	for k := range kv {
		if rest, ok := strings.CutPrefix(k, "http.routers."); ok {
			name, _, _ := strings.Cut(rest, ".")
			routers[name] = true
		}
	}
	if len(routers) != 1 {
		return nil
	}
	at := "http.routers." + slices.Collect(maps.Keys(routers))[0] + "."
	rule, err := ReadRule(kv[at+"rule"])
	if err != nil {
		return nil
	}
	f := &Frontend{Rule: rule}
	mine := map[string]bool{at + "rule": true}
	for k := range kv {
		if strings.HasPrefix(k, at) && !mine[k] {
			mine[k] = true
			switch strings.TrimPrefix(k, at) {
			case "entrypoints":
				f.EntryPoints = strings.Split(kv[k], ",")
			case "middlewares":
				mws := strings.Split(kv[k], ",")
				if len(mws) != 1 {
					return nil
				}
				if f.ForwardAuth = readAuth(kv, mine, "http.middlewares."+mws[0]+".forwardauth."); f.ForwardAuth == nil {
					return nil
				}
			default: // service, priority, tls...: not a frontend block's
				return nil
			}
		}
	}
	maps.Copy(used, mine)
	return f
}

// readAuth reads forward-auth settings under at, marking the keys it used.
func readAuth(kv map[string]string, used map[string]bool, at string) *ForwardAuth {
	addr, ok := kv[at+"address"]
	if !ok {
		return nil
	}
	a := &ForwardAuth{Address: addr}
	used[at+"address"] = true
	if h, ok := kv[at+"authResponseHeaders"]; ok {
		a.AuthResponseHeaders, used[at+"authResponseHeaders"] = strings.Split(h, ","), true
	}
	if t, ok := kv[at+"trustForwardHeader"]; ok && (t == "true" || t == "false") {
		a.TrustForwardHeader, used[at+"trustForwardHeader"] = t == "true", true
	}
	if h, ok := kv[at+"authRequestHeaders"]; ok {
		a.AuthRequestHeaders, used[at+"authRequestHeaders"] = strings.Split(h, ","), true
	}
	if re, ok := kv[at+"authResponseHeadersRegex"]; ok {
		a.AuthResponseHeadersRegex, used[at+"authResponseHeadersRegex"] = re, true
	}
	for _, k := range []string{"ca", "cert", "key", "insecureSkipVerify"} {
		v, ok := kv[at+"tls."+k]
		if !ok {
			continue
		}
		if a.TLS == nil {
			a.TLS = &ForwardAuthTLS{}
		}
		used[at+"tls."+k] = true
		switch k {
		case "ca":
			a.TLS.CA = v
		case "cert":
			a.TLS.Cert = v
		case "key":
			a.TLS.Key = v
		default:
			a.TLS.InsecureSkipVerify = v == "true"
		}
	}
	return a
}

func sameFrontend(a, b *Frontend) bool {
	return a.Rule.String() == b.Rule.String() && slices.Equal(a.EntryPoints, b.EntryPoints) &&
		(a.ForwardAuth == nil) == (b.ForwardAuth == nil) &&
		(a.ForwardAuth == nil || (a.ForwardAuth.Address == b.ForwardAuth.Address &&
			slices.Equal(a.ForwardAuth.AuthResponseHeaders, b.ForwardAuth.AuthResponseHeaders) &&
			a.ForwardAuth.TrustForwardHeader == b.ForwardAuth.TrustForwardHeader))
}

// ReadRule reads back a rule of the http.* tags, in the forms RuleIn
// writes for the Traefik 2 and the common grammar: matchers joined by
// "&&", each Name(`v`[, `v`]) or a group (Name(`a`) || Name(`b`)) of one
// matcher's values. It is the inverse of RuleIn for taking over a
// registration made by hand; anything else (negation, mixed groups,
// matchers Traefik 1 lacks) is an error, and the caller keeps the tag as
// it is.
func ReadRule(s string) (*labels.Rule, error) {
	p := &v2Parser{src: s}
	r := &labels.Rule{}
	for {
		m, err := p.term()
		if err != nil {
			return nil, err
		}
		r.Matchers = append(r.Matchers, m)
		p.space()
		if p.done() {
			break
		}
		if !p.eat("&&") {
			return nil, fmt.Errorf("expected && at %q", p.rest())
		}
	}
	// Check the result against the Traefik 1 grammar it is to be written in.
	if _, err := labels.ParseRule(r.String()); err != nil {
		return nil, err
	}
	return r, nil
}

type v2Parser struct {
	src string
	pos int
}

func (p *v2Parser) rest() string { return p.src[p.pos:] }
func (p *v2Parser) done() bool   { return p.pos >= len(p.src) }

func (p *v2Parser) space() {
	for !p.done() && (p.src[p.pos] == ' ' || p.src[p.pos] == '\t') {
		p.pos++
	}
}

func (p *v2Parser) eat(tok string) bool {
	p.space()
	if strings.HasPrefix(p.rest(), tok) {
		p.pos += len(tok)
		return true
	}
	return false
}

// term is a matcher or a parenthesised || group of one matcher's values.
func (p *v2Parser) term() (labels.Matcher, error) {
	if !p.eat("(") {
		return p.matcher()
	}
	m, err := p.matcher()
	if err != nil {
		return m, err
	}
	for p.eat("||") {
		n, err := p.matcher()
		if err != nil {
			return m, err
		}
		if n.Name != m.Name {
			return m, fmt.Errorf("a || group mixes %s and %s, which the Traefik 1 grammar cannot write", m.Name, n.Name)
		}
		m.Values = append(m.Values, n.Values...)
	}
	if !p.eat(")") {
		return m, fmt.Errorf("expected ) at %q", p.rest())
	}
	return m, nil
}

func (p *v2Parser) matcher() (labels.Matcher, error) {
	p.space()
	start := p.pos
	for !p.done() && unicode.IsLetter(rune(p.src[p.pos])) {
		p.pos++
	}
	m := labels.Matcher{Name: p.src[start:p.pos]}
	if m.NameIn(labels.GrammarV2) != m.Name || m.NameIn(labels.GrammarCommon) != m.Name {
		return m, fmt.Errorf("%q is not a matcher Traefik 1, 2 and 3 share", m.Name)
	}
	if !p.eat("(") {
		return m, fmt.Errorf("expected ( after %s", m.Name)
	}
	for {
		p.space()
		if p.done() || (p.src[p.pos] != '`' && p.src[p.pos] != '"') {
			return m, fmt.Errorf("expected a quoted value at %q", p.rest())
		}
		q := p.src[p.pos]
		end := strings.IndexByte(p.src[p.pos+1:], q)
		if end < 0 {
			return m, fmt.Errorf("unterminated value at %q", p.rest())
		}
		v := p.src[p.pos+1 : p.pos+1+end]
		if strings.TrimSpace(v) != v || strings.ContainsAny(v, ",;") {
			return m, fmt.Errorf("the value %q cannot be written in the Traefik 1 grammar", v)
		}
		m.Values = append(m.Values, v)
		p.pos += end + 2
		if p.eat(")") {
			return m, nil
		}
		if !p.eat(",") {
			return m, fmt.Errorf("expected , or ) at %q", p.rest())
		}
	}
}

// routerKey finds the router of a tag key (after the prefix): Traefik 2
// and 3's <protocol>.routers.<name>, and Traefik 1's frontend (one per
// service) and frontends.<name>.
var routerKey = regexp.MustCompile(`^(?:(http|tcp|udp)\.routers\.([^.]+)\.|(frontend)\.|frontends\.([^.]+)\.)`)

// routersOf names the routers the tags under prefix declare, as a
// person reads them: "http router api", "Traefik 1 frontend".
func routersOf(prefix string, tags []string) []string {
	var out []string
	for _, t := range tags {
		k, _, _ := strings.Cut(t, "=")
		rest, ok := strings.CutPrefix(k, prefix+".")
		m := routerKey.FindStringSubmatch(rest)
		if !ok || m == nil {
			continue
		}
		var name string
		switch {
		case m[1] != "":
			name = m[1] + " router " + m[2]
		case m[3] != "":
			name = "Traefik 1 frontend"
		default:
			name = "Traefik 1 frontend " + m[4]
		}
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}

// RouterChanges says, in words, how the routers a proxy serves for a
// service change from the tags have to the tags want ("" when they do
// not): a router of one protocol replaced by another is renamed.
// removes reports whether a live router goes.
func RouterChanges(prefix string, have, want []string) (words string, removes bool) {
	before, after := routersOf(prefix, have), routersOf(prefix, want)
	var gone, added, parts []string
	for _, r := range before {
		if !slices.Contains(after, r) {
			gone = append(gone, r)
		}
	}
	for _, r := range after {
		if !slices.Contains(before, r) {
			added = append(added, r)
		}
	}
	for _, g := range gone {
		protocol, _, router := strings.Cut(g, " router ")
		i := slices.IndexFunc(added, func(a string) bool { return router && strings.HasPrefix(a, protocol+" router ") })
		if i < 0 {
			parts = append(parts, g+" removed")
			continue
		}
		parts = append(parts, fmt.Sprintf("%s renamed %s", g, strings.TrimPrefix(added[i], protocol+" router ")))
		added = slices.Delete(added, i, i+1)
	}
	for _, a := range added {
		parts = append(parts, a+" added")
	}
	if len(parts) == 0 {
		return "", false
	}
	return "the proxy's routers change: " + strings.Join(parts, ", "), len(gone) > 0
}
