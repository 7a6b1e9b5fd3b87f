package schema

import (
	"fmt"
	"net/url"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"unicode"

	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision/addrs"
	"github.com/provision-dev/provision/provision/parallel"
	"github.com/provision-dev/provision/provision/traefik/labels"
	"github.com/zclconf/go-cty/cty"
)

var serviceSchema = with(&hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "id"}, {Name: "name"}, {Name: "token"}, {Name: "agent"}, {Name: "address"}, {Name: "port"}, {Name: "tags"}, {Name: "meta"},
	},
	Blocks: []hcl.BlockHeaderSchema{{Type: "frontend"}, {Type: "check", LabelNames: []string{"name"}}, {Type: "lifecycle"}},
}, RegistrationFields)

var frontendSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "rule", Required: true}, {Name: "entrypoints"}},
	Blocks:     []hcl.BlockHeaderSchema{{Type: "forward_auth"}, {Type: "proof"}},
}

var proofSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "token", Required: true}}}

var forwardAuthSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "address", Required: true}, {Name: "auth_response_headers"}, {Name: "trust_forward_header"},
		{Name: "auth_request_headers"}, {Name: "auth_response_headers_regex"},
	},
	Blocks: []hcl.BlockHeaderSchema{{Type: "tls"}},
}

var forwardAuthTLSSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "ca"}, {Name: "cert"}, {Name: "key"}, {Name: "insecure_skip_verify"}},
}

var checkSchema = argsSchema(CheckFields)

// validID says whether a service's ID or name is one provision writes:
// anything a Consul 1.15 agent takes (it takes any string, "foo:1234" and
// "a/b c" among them: the deregister path escapes it, an address quotes
// it) but the empty string and control characters, which no plan line or
// diagnostic can show as written.
func validID(s string) bool {
	return s != "" && !strings.ContainsFunc(s, unicode.IsControl)
}

// metaKey is Consul's rule for service meta keys.
var metaKey = regexp.MustCompile(`^[A-Za-z0-9_-]{1,128}$`)

var headerName = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")

// serviceBlocks decodes the services side by side (spread): a spec of
// 10,000 services spends most of its decoding here.
func (d *decoder) serviceBlocks(units []unit) []*Service {
	out := make([]*Service, len(units))
	d.spread(len(units), func(part *decoder, i int) { out[i] = part.serviceBlock(units[i]) })
	return out
}

// spread calls decode(part, i) for i from 0 to n-1 on every core, in
// runs of at least 256, each run with a decoder of its own (part) whose
// diagnostics and secrets join d's in order. Which call crosses the work
// limit first depends on the order the runs went, so when the budget
// runs out the calls are made again one by one, with d, from the budget
// they started with: the error is at the first crossing in file order.
// (A budget spent before them stays spent: nothing they count is known,
// and no call reports it.) decode writes nothing another call reads.
func (d *decoder) spread(n int, decode func(part *decoder, i int)) {
	values, bytes, spent := d.bg.values.Load(), d.bg.bytes.Load(), d.bg.spent.Load()
	parts := make([]*decoder, min(runtime.GOMAXPROCS(0), n/256+1))
	for w := range parts {
		parts[w] = &decoder{vars: d.vars, locals: d.locals, bg: d.bg, docs: d.docs}
	}
	parallel.Do(len(parts), len(parts), func(w int) {
		for i := w * n / len(parts); i < (w+1)*n/len(parts); i++ {
			decode(parts[w], i)
		}
	})
	if spent || !d.bg.spent.Load() {
		for _, p := range parts {
			d.diags = append(d.diags, p.diags...)
			d.secrets = append(d.secrets, p.secrets...)
		}
		return
	}
	d.bg.values.Store(values)
	d.bg.bytes.Store(bytes)
	d.bg.spent.Store(false)
	ctx := d.ctx
	for i := range n {
		decode(d, i)
	}
	d.ctx, d.each = ctx, nil
}

// instance decodes one unit with its context, and names its instance in
// the diagnostics.
func (d *decoder) instance(u unit, decode func()) {
	d.ctx, d.each = u.ctx, u.each
	iter := ""
	if u.each != nil {
		iter = u.each.String()
	}
	d.within(iter, decode)
}

func (d *decoder) serviceBlock(u unit) *Service {
	b := u.block
	s := &Service{Service: b.Labels[0], Declaration: Declaration{Name: b.Labels[0], DeclRange: b.DefRange, NameRange: b.LabelRanges[0], Instance: u.each}}
	d.instance(u, func() {
		if u.each != nil {
			s.Name = s.Service + "-" + u.each.Key
		}
		c := d.content(u.body, serviceSchema)
		if attr, ok := c.Attributes["name"]; ok && d.override(attr, &s.Service, nil) {
			if !validID(s.Service) {
				d.errorf(attr.Expr.Range(), b.DefRange, "Invalid service name", "The service name %q is empty or holds a control character: the agent refuses a registration without a name (\"Missing service name\").", s.Service)
			}
		} else if !validID(s.Service) {
			d.errorf(b.LabelRanges[0], b.DefRange, "Invalid service name", "The service name %q is empty or holds a control character: the agent refuses a registration without a name (\"Missing service name\").", s.Service)
		}
		d.serviceBody(s, b, c)
	})
	return s
}

// serviceBody decodes what a service block holds but its name.
func (d *decoder) serviceBody(s *Service, b *hcl.Block, c *hcl.BodyContent) {
	idOK := d.override(c.Attributes["id"], &s.Name, &s.NameRange)
	if attr, ok := c.Attributes["agent"]; ok {
		s.Agent, s.AgentRange = d.str(attr), attr.Expr.Range()
	}
	if idOK && !validID(s.Name) {
		d.errorf(s.NameRange, b.DefRange, "Invalid service ID", "The service ID %q is empty or holds a control character, which no plan can show as written: give it letters, digits and punctuation.", s.Name)
	}
	if attr, ok := c.Attributes["token"]; ok {
		d.errorf(attr.Range, b.DefRange, "Token in a spec", "A registration's token is a secret, and a secret in a spec is read by everyone who reads the repository, the plans and Consul's catalog: provision never sends one from a spec. It registers with its own token, CONSUL_HTTP_TOKEN (see docs/reference/secrets.md); the agent keeps that token for the service's anti-entropy.")
	}
	s.Lifecycle = d.lifecycleBlock(serviceIgnorable, c.Blocks.OfType("lifecycle"))
	s.Address = d.str(c.Attributes["address"])
	s.Port = d.port(c.Attributes["port"])
	s.Tags = d.strList(c.Attributes["tags"])
	s.Meta = d.strMap(c.Attributes["meta"])
	if attr, ok := c.Attributes["meta"]; ok {
		for k := range s.Meta {
			if !metaKey.MatchString(k) || strings.HasPrefix(k, "consul-") || ProvisionMeta(k) {
				d.errorf(attr.Expr.Range(), attr.Range, "Invalid meta key",
					"The meta key %q is refused: Consul takes 1 to 128 letters, digits, \"_\" and \"-\", reserves \"consul-\", and provision reserves %q and %q for its ownership marks.", k, ManagedByKey, MetaPrefix+"*")
			}
		}
	}
	s.Fields = d.args(RegistrationFields, c, "")
	d.checkRegistration(s, b.DefRange)
	for _, fb := range d.blocksOf(b.Body, c, "frontend") {
		d.within(fb.iter, func() {
			if s.Frontend != nil {
				d.diags = append(d.diags, duplicate("Duplicate frontend block", "frontend block of this service", fb.DefRange, s.Frontend.DeclRange))
				return
			}
			s.Frontend = d.frontendBlock(fb)
		})
	}
	seen := map[string]*Check{}
	for _, cb := range d.blocksOf(b.Body, c, "check") {
		d.within(cb.iter, func() {
			ch := d.checkBlock(cb.Block)
			if prev, dup := seen[ch.Name]; dup {
				d.diags = append(d.diags, duplicate("Duplicate check block", fmt.Sprintf("check %q of this service", ch.Name), cb.LabelRanges[0], prev.DeclRange))
				return
			}
			seen[ch.Name] = ch
			s.Checks = append(s.Checks, ch)
		})
	}
}

func (d *decoder) frontendBlock(b nested) *Frontend {
	f := &Frontend{DeclRange: b.DefRange}
	c := d.content(b.Body, frontendSchema)
	if attr, ok := c.Attributes["rule"]; ok {
		f.RuleRange = attr.Expr.Range()
		if s := d.str(attr); s != "" {
			r, err := ParseRule(s)
			if err != nil {
				d.errorf(attr.Expr.Range(), b.DefRange, "Invalid frontend rule",
					"The rule %q is not in the Traefik rule grammar (Matcher:value[,value], matchers joined by \";\"): %s.", s, err)
			}
			f.Rule = r
		}
	}
	f.EntryPoints = d.strList(c.Attributes["entrypoints"])
	for _, ab := range d.blocksOf(b.raw, c, "forward_auth") {
		d.within(ab.iter, func() {
			if f.ForwardAuth != nil {
				d.diags = append(d.diags, duplicate("Duplicate forward_auth block", "forward_auth block of this frontend", ab.DefRange, f.ForwardAuth.DeclRange))
				return
			}
			f.ForwardAuth = d.forwardAuthBlock(ab)
		})
	}
	if proofs := c.Blocks.OfType("proof"); len(proofs) > 0 {
		d.proofBlock(f, proofs[0], d.onlyBlock(proofs, proofSchema))
	}
	return f
}

// proofBlock decodes proof { token = var.gate_token }: a token the auth
// endpoint accepts, with which the proof after an apply expects the gated
// path to answer 200. The token must be sensitive (a sensitive variable,
// which the environment may set), so that no view shows it; null leaves
// the proof at its two 401s.
func (d *decoder) proofBlock(f *Frontend, b *hcl.Block, c *hcl.BodyContent) {
	attr, ok := c.Attributes["token"]
	if !ok || !d.checkRefs(attr.Expr) {
		return
	}
	v, diags := d.evaluate(attr.Expr)
	d.diags = append(d.diags, diags...)
	if diags.HasErrors() || !v.IsWhollyKnown() {
		return
	}
	marked := v.IsMarked()
	v, _ = v.Unmark()
	switch {
	case v.IsNull():
	case v.Type() != cty.String || v.AsString() == "":
		d.errorf(attr.Expr.Range(), attr.Range, "Invalid proof token", "token is a string: a token the auth endpoint accepts, or null for no such proof.")
	case !marked:
		d.errorf(attr.Expr.Range(), attr.Range, "Proof token not sensitive",
			"The proof token is a credential: give it through a variable declared sensitive = true (set by -var, a -var-file or %s<name>), so that no plan, log or output shows it.", EnvPrefix)
	case f.ForwardAuth == nil:
		d.errorf(b.DefRange, b.DefRange, "Proof without forward_auth", "A proof token proves a gate: this frontend declares no forward_auth block.")
	default:
		f.ProofToken, f.ProofRange = v.AsString(), attr.Expr.Range()
		d.secrets = append(d.secrets, f.ProofToken)
	}
}

func (d *decoder) forwardAuthBlock(b nested) *ForwardAuth {
	a := &ForwardAuth{DeclRange: b.DefRange}
	c := d.content(b.Body, forwardAuthSchema)
	if attr, ok := c.Attributes["address"]; ok {
		a.Address = d.str(attr)
		if a.Address != "" {
			if err := absoluteHTTPURL(a.Address); err != nil {
				d.errorf(attr.Expr.Range(), b.DefRange, "Invalid forward-auth address",
					"The forward-auth address %q %s; the proxy needs an absolute http:// or https:// URL, such as \"http://127.0.0.1:8080/auth\".", a.Address, err)
			} else {
				d.noCredentials(attr, a.Address)
			}
		}
	}
	a.AuthResponseHeaders = d.headers(c.Attributes["auth_response_headers"], b.Block)
	a.AuthRequestHeaders = d.headers(c.Attributes["auth_request_headers"], b.Block)
	if attr, ok := c.Attributes["auth_response_headers_regex"]; ok {
		a.AuthResponseHeadersRegex = d.str(attr)
		if _, err := regexp.Compile(a.AuthResponseHeadersRegex); err != nil {
			d.errorf(attr.Expr.Range(), b.DefRange, "Invalid regular expression", "auth_response_headers_regex is not a Go regular expression: %s.", err)
		}
	}
	a.TrustForwardHeader = d.boolean(c.Attributes["trust_forward_header"])
	var tlsAt hcl.Range
	for _, tb := range d.blocksOf(b.raw, c, "tls") {
		d.within(tb.iter, func() {
			if a.TLS != nil {
				d.diags = append(d.diags, duplicate("Duplicate tls block", "tls block of this forward_auth", tb.DefRange, tlsAt))
				return
			}
			tlsAt = tb.DefRange
			a.TLS = d.tlsBlock(tb.Block)
		})
	}
	return a
}

// tlsBlock decodes how the proxy reaches an https auth address.
func (d *decoder) tlsBlock(tb *hcl.Block) *ForwardAuthTLS {
	tc := d.content(tb.Body, forwardAuthTLSSchema)
	t := &ForwardAuthTLS{InsecureSkipVerify: d.boolean(tc.Attributes["insecure_skip_verify"])}
	for name, to := range map[string]*string{"ca": &t.CA, "cert": &t.Cert, "key": &t.Key} {
		attr, ok := tc.Attributes[name]
		if !ok {
			continue
		}
		*to = d.str(attr)
		if strings.Contains(*to, "-----BEGIN") || !strings.HasPrefix(*to, "/") {
			d.errorf(attr.Expr.Range(), tb.DefRange, "Not a file path",
				"tls.%s is the absolute path of a PEM file on the proxy's host, such as \"/etc/traefik/auth-ca.pem\". Key material and certificates never go into a spec: tags are public in Consul's catalog.", name)
		}
	}
	return t
}

// headers decodes a list of HTTP header names.
func (d *decoder) headers(attr *hcl.Attribute, b *hcl.Block) []string {
	hs := d.strList(attr)
	for _, h := range hs {
		if !headerName.MatchString(h) {
			d.errorf(attr.Expr.Range(), b.DefRange, "Invalid header name", "%q is not an HTTP header name.", h)
		}
	}
	return hs
}

// SensitiveKey matches the names whose values are secrets: object keys in
// a plan, query parameters of a URL.
var SensitiveKey = regexp.MustCompile(`(?i)(token|secret|passw(or)?d|api[-_]?key|credential|authorization)`)

// credentials says whether a URL of a spec carries credentials: user
// information, or a query parameter named like a secret.
func credentials(s string) bool {
	u, err := url.Parse(s)
	if err != nil {
		return strings.Contains(s, "@")
	}
	if u.User != nil {
		return true
	}
	for k := range u.Query() {
		if SensitiveKey.MatchString(k) {
			return true
		}
	}
	return false
}

// noCredentials refuses a URL with credentials at attr: specs are
// committed and plans are shared.
func (d *decoder) noCredentials(attr *hcl.Attribute, s string) {
	if credentials(s) {
		d.errorf(attr.Expr.Range(), attr.Range, "Credentials in a spec",
			"The URL in %s carries credentials (user information, or a query parameter named like a token, secret, password or key). Specs are committed, tags are public in Consul's catalog and plans are shared, so a secret has no place here. "+
				"Give the proxy or the check its credentials another way (a header set by the proxy, a file on the host); provision's own credentials come from the environment only.", attr.Name)
	}
}

// absoluteHTTPURL says what is wrong with s as an absolute http(s) URL.
func absoluteHTTPURL(s string) error {
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return fmt.Errorf("is not a URL (%v)", err)
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("is not an http or https URL")
	case u.Host == "":
		return fmt.Errorf("has no host")
	}
	return nil
}

func (d *decoder) checkBlock(b *hcl.Block) *Check {
	ch := &Check{Name: b.Labels[0], DeclRange: b.DefRange}
	from := len(d.diags)
	c := d.content(b.Body, checkSchema)
	ch.Def = d.args(CheckFields, c, "check."+ch.Name+".")
	if d.diags[from:].HasErrors() {
		return ch // what failed is said; the rules below would say it again
	}
	if attr, ok := c.Attributes["http"]; ok && ch.Def["HTTP"] != nil {
		if err := absoluteHTTPURL(ch.Def["HTTP"].(string)); err != nil {
			d.errorf(attr.Expr.Range(), b.DefRange, "Invalid check URL", "The check URL %q %s.", ch.Def["HTTP"], err)
			return ch
		}
		d.noCredentials(attr, ch.Def["HTTP"].(string))
	}
	d.checkCheck(ch, b.DefRange)
	return ch
}

// checkPublic refuses sensitive values where everybody reads them: the
// tags (extra tags and all that the frontend becomes), which Consul's
// catalog shows to anyone who can list services.
func (d *decoder) checkPublic(cfg *Config) {
	if len(cfg.Secrets) == 0 {
		return
	}
	for _, s := range cfg.Services {
		public := append([]string{}, s.Tags...)
		rng := s.DeclRange
		if f := s.Frontend; f != nil {
			public = append(public, f.EntryPoints...)
			if f.Rule != nil {
				public = append(public, f.Rule.String())
			}
			if a := f.ForwardAuth; a != nil {
				public = append(public, a.Address)
				public = append(public, a.AuthResponseHeaders...)
			}
			rng = f.DeclRange
		}
		for _, p := range public {
			if slices.ContainsFunc(cfg.Secrets, func(secret string) bool { return strings.Contains(p, secret) }) {
				d.errorf(rng, s.DeclRange, "Sensitive value in a tag",
					"The service %q puts the value of a sensitive variable into its tags (its tags, or the frontend that becomes tags). Consul's catalog shows tags to everyone who can list services, so a secret has no place there.", s.Service)
				break
			}
		}
	}
}

// checkServices reports what only shows across services: duplicate IDs,
// and frontends a single-generation dialect would leave ungated.
func (d *decoder) checkServices(cfg *Config) {
	ids := map[string]*Service{}
	named := map[string]*Service{}
	for _, s := range cfg.Services {
		if prev, ok := named[s.Service]; ok && frontendKey(prev.Frontend) != frontendKey(s.Frontend) {
			at := s.DeclRange
			if s.Frontend != nil {
				at = s.Frontend.DeclRange
			}
			d.errorf(at, s.DeclRange, "Frontends differ within one service name",
				"The services %q and %q (at %s) are instances of the Consul service %q, and Traefik builds one router per service name from the tags of all its instances: with different frontends it would have two definitions of one router, drop it, and leave the path unserved or served without the gate. "+
					"Give the instances one frontend (declare it once, outside what varies), or give them different names.", s.Name, prev.Name, prev.DeclRange, s.Service)
		} else if !ok {
			named[s.Service] = s
		}
		if prev, dup := ids[s.Name]; dup {
			if sameBlock(s.Instance, prev.Instance, s.DeclRange, prev.DeclRange, s.Module, prev.Module) {
				d.errorf(s.NameRange, s.DeclRange, "Duplicate instance ID",
					"The instances %s and %s of service %q both have the ID %q. Each instance needs an ID of its own: leave id out (it defaults to \"<label>-<each.key>\") or build it from each.key.",
					prev.Instance, s.Instance, s.Service, s.Name)
				continue
			}
			d.diags = append(d.diags, duplicateIn("Duplicate service ID", fmt.Sprintf("service ID %q", s.Name), s.NameRange, prev.NameRange, s.Module, prev.Module))
			continue
		}
		ids[s.Name] = s
		f := s.Frontend
		if f == nil || f.Rule == nil {
			continue
		}
		dl := cfg.Proxy.Dialect
		if dl.HTTP() {
			if err := f.Rule.Check(dl.Grammar()); err != nil {
				d.errorf(f.RuleRange, f.DeclRange, "Rule has no form for the dialect",
					"The rule %q cannot be written for dialect %q: %s.", f.Rule, dl, err)
			}
		}
		if a := f.ForwardAuth; a != nil {
			d.checkForwardAuth(dl, f, a)
		}
		if f.ForwardAuth != nil {
			d.checkGate(cfg, s)
		}
		if f.ForwardAuth != nil && dl != DialectTraefik {
			d.diags = append(d.diags, &hcl.Diagnostic{
				Severity: hcl.DiagWarning,
				Summary:  "Gated frontend written for one Traefik generation",
				Detail: fmt.Sprintf("The proxy dialect %q writes tags for one generation only: %s Keep the default dialect \"traefik\" unless no other generation ever reads this Consul.",
					dl, otherGenerations[dl]),
				Subject: f.ForwardAuth.DeclRange.Ptr(),
				Context: cfg.Proxy.DeclRange.Ptr(),
			})
		}
	}
	d.checkRoutes(cfg)
}

// checkForwardAuth refuses the forward-auth options a dialect cannot
// write and warns of those that weaken the gate.
func (d *decoder) checkForwardAuth(dl Dialect, f *Frontend, a *ForwardAuth) {
	warn := func(summary, detail string) {
		d.diags = append(d.diags, &hcl.Diagnostic{Severity: hcl.DiagWarning, Summary: summary, Detail: detail, Subject: a.DeclRange.Ptr(), Context: f.DeclRange.Ptr()})
	}
	switch {
	case dl == DialectTraefikV1 && (len(a.AuthRequestHeaders) > 0 || a.AuthResponseHeadersRegex != ""):
		d.errorf(a.DeclRange, f.DeclRange, "Forward-auth option Traefik 1 lacks",
			"auth_request_headers and auth_response_headers_regex exist in Traefik 2 and 3 only, and the dialect %q writes Traefik 1 tags alone, which would gate without them. "+
				"Choose the default dialect \"traefik\", \"traefik-v2\" or \"traefik-v3\", or drop the option.", dl)
	case dl.V1() && a.AuthResponseHeadersRegex != "":
		d.errorf(a.DeclRange, f.DeclRange, "Forward-auth option Traefik 1 lacks",
			"auth_response_headers_regex exists in Traefik 2 and 3 only, and the dialect %q also writes Traefik 1 tags, which would copy no header by it. "+
				"Name the headers in auth_response_headers, or choose dialect \"traefik-v2\" or \"traefik-v3\".", dl)
	}
	// In the default dialect auth_request_headers is written for Traefik 2
	// and 3 alone: 1.7 has no such option and sends every header, as it
	// does without it, so nothing is weaker for it (docs/language/frontends.md).
	if a.TrustForwardHeader {
		warn("The auth endpoint trusts the client's X-Forwarded headers",
			"trust_forward_header = true makes the proxy pass the client's own X-Forwarded-* headers to the auth endpoint, where a client can forge its address, host and path. Leave it false unless a proxy in front of this one sets them.")
	}
	if a.TLS != nil && a.TLS.InsecureSkipVerify {
		warn("The auth endpoint's certificate is not checked",
			"insecure_skip_verify = true sends every token to whoever answers at the forward_auth address, with no check of its certificate. Give tls { ca = ... } instead.")
	}
}

// frontendKey is what a frontend becomes in tags, for comparing the
// frontends of instances of one service name; "" for none.
func frontendKey(f *Frontend) string {
	if f == nil {
		return ""
	}
	key := fmt.Sprintf("%v|%q", f.Rule, f.EntryPoints)
	if a := f.ForwardAuth; a != nil {
		key += fmt.Sprintf("|%q|%q|%q|%q|%t|%+v", a.Address, a.AuthResponseHeaders, a.AuthRequestHeaders, a.AuthResponseHeadersRegex, a.TrustForwardHeader, a.TLS)
	}
	return key
}

// otherGenerations says what the generations a single dialect does not
// write for would do with the service (Traefik's own behaviour: Traefik 2
// and 3 ignore Traefik 1 tags and serve traefik.enable=true on a default
// Host router; a router whose rule does not parse is dropped).
var otherGenerations = map[Dialect]string{
	DialectTraefikV1: "Traefik 2 and Traefik 3 ignore Traefik 1 tags and would serve the service ungated on their default Host(`<service>`) router.",
	DialectTraefikV2: "Traefik 1 would serve the service ungated on its default frontend; Traefik 3 reads the same http.* tags and drops a router whose rule uses Traefik 2 syntax (the path then answers 404).",
	DialectTraefikV3: "Traefik 1 would serve the service ungated on its default frontend; Traefik 2 reads the same http.* tags and drops a router whose rule uses Traefik 3 syntax (the path then answers 404).",
}

// checkGate refuses extra tags of a gated service that Traefik reads as
// a route or a middleware of their own (a router of any protocol, a
// middleware, a Traefik 1 frontend, traefik.enable), in any case, as
// Traefik's label parser reads them (labels.Decode): such a route reaches
// the service without the forward-auth check, and a middleware of the
// generated name overrides the gate.
func (d *decoder) checkGate(cfg *Config, s *Service) {
	routes, err := labels.Decode(cfg.Proxy.Prefix, s.Tags)
	if err != nil {
		d.errorf(s.DeclRange, s.DeclRange, "Tags Traefik cannot read",
			"The tags of the gated service %q do not decode as Traefik's label parser reads them (%s): Traefik would drop the service's whole configuration, gate and all.", s.Service, err)
		return
	}
	var own []string
	for _, r := range routes.Routers {
		own = append(own, fmt.Sprintf("the %s router %q", r.Protocol, r.Name))
	}
	for _, m := range routes.Middlewares {
		own = append(own, fmt.Sprintf("the middleware %q", m))
	}
	for _, t := range routes.V1 {
		own = append(own, fmt.Sprintf("the tag %q", t))
	}
	if len(own) > 0 {
		d.errorf(s.DeclRange, s.DeclRange, "Tag would bypass the gate",
			"The service %q has a gated frontend, and its extra tags define %s, as Traefik reads them (its label parser takes a key in any case): a route of its own, or a middleware in place of the generated one, could serve the service without the forward-auth check. "+
				"Declare the route in the frontend block, or drop the tag.", s.Service, strings.Join(own, ", "))
	}
}

// gatesOf is the requests the specs' gated frontends gate, as the proxy
// judge takes them.
func gatesOf(cfg *Config) []labels.Gate {
	var out []labels.Gate
	for _, s := range cfg.Services {
		f := s.Frontend
		if f == nil || f.Rule == nil || f.ForwardAuth == nil {
			continue
		}
		for _, p := range f.Rule.Probes() {
			out = append(out, labels.Gate{Service: s.Service, Probe: p, EntryPoints: f.EntryPoints, Auth: f.ForwardAuth.Address})
		}
	}
	return out
}

// checkRoutes refuses the extra tags of any declared service that route
// a gated request past its gate, as labels.Judge judges them: an HTTP
// router that may claim it without the forward-auth middleware, a TCP
// router on its entrypoints, a route to the gated service.
func (d *decoder) checkRoutes(cfg *Config) {
	cfg.Gates = gatesOf(cfg)
	gates := cfg.Gates
	if len(gates) == 0 {
		return
	}
	regs := make([]labels.Registration, 0, len(cfg.Services))
	at := map[string]*Service{}
	for _, s := range cfg.Services {
		if len(s.Tags) > 0 && (s.Frontend == nil || s.Frontend.ForwardAuth == nil) {
			regs = append(regs, labels.Registration{ID: s.Name, Service: s.Service, Tags: s.Tags})
			at[s.Name] = s
		}
	}
	open, _ := labels.Judge(cfg.Proxy.Prefix, gates, regs)
	for _, o := range open {
		s := at[o.ID]
		d.errorf(s.DeclRange, s.DeclRange, "Tag would bypass the gate",
			"The service %q: %s, as Traefik reads its tags. Requests there would reach what %s gates without the auth check. "+
				"Give the route the forward-auth middleware, another path or host, or (a TCP router) an entrypoint of its own that no gated frontend names.", s.Service, o, o.Gate.Service)
	}
}

// servicePulled are what pull may write into a service block, from the
// registration as the agent reports it and as declared: its address,
// port, meta (less provision's marks), tags (less those its frontend
// block writes) and the other fields of the registration it declares
// (RegistrationFields).
func servicePulled(cfg *Config, module addrs.Module, id string, live, declared map[string]any) []PullAttr {
	attrs := []PullAttr{{Name: "address", Live: live["Address"], Decl: declared["Address"]}, {Name: "port", Live: live["Port"], Decl: declared["Port"]},
		{Name: "meta", Live: unmarked(live["Meta"]), Decl: unmarked(declared["Meta"])}}
	i := slices.IndexFunc(cfg.Services, func(s *Service) bool { return s.Name == id && s.Module == module })
	if i < 0 {
		return attrs
	}
	svc := cfg.Services[i]
	tags, ok := rawTags(anyStrings(live["Tags"]), anyStrings(declared["Tags"]), svc.Tags)
	attrs = append(attrs, PullAttr{Name: "tags", Live: tags, Decl: anyStrings(svc.Tags), Frontend: !ok})
	for _, a := range RegistrationFields {
		if _, set := svc.Fields[a.Wire]; set {
			attrs = append(attrs, PullAttr{Name: a.Name, Live: SpecJSON(a, live[a.Wire]), Decl: SpecJSON(a, declared[a.Wire])})
		}
	}
	return attrs
}

// rawTags are the live tags less those the frontend block writes (those
// of all, the declared tags, that declared, the block's raw tags, lacks);
// false when a tag the frontend writes is not live as it is written.
func rawTags(live, all []any, declared []string) ([]any, bool) {
	written := map[string]bool{}
	for _, t := range all {
		if !slices.Contains(declared, t.(string)) {
			written[t.(string)] = true
		}
	}
	out := []any{}
	for _, t := range live {
		if written[t.(string)] {
			delete(written, t.(string))
			continue
		}
		out = append(out, t)
	}
	return out, len(written) == 0
}

// anyStrings is a list of strings as JSON decodes it.
func anyStrings(v any) []any {
	switch v := v.(type) {
	case []any:
		return v
	case []string:
		out := make([]any, len(v))
		for i, s := range v {
			out[i] = s
		}
		return out
	}
	return []any{}
}

// unmarked is a service's meta less the keys provision writes itself.
func unmarked(v any) any {
	m, _ := v.(map[string]any)
	out := map[string]any{}
	for k, x := range m {
		if !ProvisionMeta(k) {
			out[k] = x
		}
	}
	return out
}
