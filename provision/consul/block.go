package consul

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision/consul/client"
	"github.com/provision-dev/provision/provision/traefik/labels"
	"github.com/provision-dev/provision/schema"
	"github.com/zclconf/go-cty/cty"
)

var serviceSchema = schema.WithArgs(&hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "id"}, {Name: "name"}, {Name: "token"}, {Name: "agent"}, {Name: "node"}, {Name: "address"}, {Name: "port"}, {Name: "tags"}, {Name: "meta"},
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

var checkSchema = schema.ArgsSchema(CheckFields)

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

// decoder decodes a service block: the language's Decoder, and the
// service's own blocks.
type decoder struct{ schema.Decoder }

// serviceBlock decodes one instance of a service block: its ID is the
// label, "<label>-<each.key>" for an instance of a block with for_each,
// or its id attribute.
func serviceBlock(d decoder, blk schema.Block) *Decl {
	b := blk.Block
	s := &Decl{Service: b.Labels[0], Declaration: schema.Declaration{Name: b.Labels[0], DeclRange: b.DefRange, NameRange: b.LabelRanges[0]}}
	if blk.Each != nil {
		s.Name = s.Service + "-" + blk.Each.Key
	}
	c := d.Content(blk.Body, serviceSchema)
	if attr, ok := c.Attributes["name"]; ok && d.Override(attr, &s.Service, nil) {
		if !validID(s.Service) {
			d.Errorf(attr.Expr.Range(), b.DefRange, "Invalid service name", "The service name %q is empty or holds a control character: the agent refuses a registration without a name (\"Missing service name\").", s.Service)
		}
	} else if !validID(s.Service) {
		d.Errorf(b.LabelRanges[0], b.DefRange, "Invalid service name", "The service name %q is empty or holds a control character: the agent refuses a registration without a name (\"Missing service name\").", s.Service)
	}
	d.serviceBody(s, b, c)
	if s.Node != "" {
		d.external(s, b)
	}
	return s
}

// external refuses what a service of an external node cannot have: a
// sidecar, which only an agent registers, and a check consul-esm does not
// run (it runs HTTP and TCP checks; hashicorp/consul-esm's README).
func (d decoder) external(s *Decl, b *hcl.Block) {
	if SidecarOf(s.Fields) != nil {
		d.Errorf(s.NodeRange, b.DefRange, "Sidecar on an external node", "The service %q is on the external node %q, which runs no agent: a sidecar is registered by an agent with its service, so there is none to register it. Register the service through an agent.", s.Name, s.Node)
	}
	for _, c := range s.Checks {
		if t := CheckType(c.Def); t != "http" && t != "tcp" {
			d.Errorf(c.DeclRange, b.DefRange, "Check consul-esm does not run", "The check %q of the service %q on the external node %q is a %s check; consul-esm, which checks external nodes, runs HTTP and TCP checks only.", c.Name, s.Name, s.Node, cmp.Or(t, "typeless"))
		}
	}
}

// serviceBody decodes what a service block holds but its name.
func (d decoder) serviceBody(s *Decl, b *hcl.Block, c *hcl.BodyContent) {
	idOK := d.Override(c.Attributes["id"], &s.Name, &s.NameRange)
	if attr, ok := c.Attributes["agent"]; ok {
		s.AgentRange = attr.Expr.Range()
		s.AgentFailed = !d.NoErrors(func() { s.Agent = d.Str(attr) })
	}
	if attr, ok := c.Attributes["node"]; ok {
		s.Node, s.NodeRange = d.Str(attr), attr.Expr.Range()
		switch {
		case s.AgentRange.Filename != "":
			d.Errorf(attr.Range, b.DefRange, "Service with an agent and a node",
				"A service lives on an agent (agent = ..., registered through that agent) or on an external node that runs none (node = ..., registered through the catalog), not both.")
		case !validID(s.Node):
			d.Errorf(attr.Expr.Range(), b.DefRange, "Invalid node name", "The node name %q is empty or holds a control character: the catalog refuses a registration without a node name.", s.Node)
		case c.Attributes["address"] == nil:
			d.Errorf(attr.Range, b.DefRange, "External node without an address",
				"The service is registered on the external node %q through the catalog, which needs the node's address: write the host's address in address = \"...\" (the service's and, when the node is new, the node's).", s.Node)
		}
	}
	if idOK && !validID(s.Name) {
		d.Errorf(s.NameRange, b.DefRange, "Invalid service ID", "The service ID %q is empty or holds a control character, which no plan can show as written: give it letters, digits and punctuation.", s.Name)
	}
	if attr, ok := c.Attributes["token"]; ok {
		d.Errorf(attr.Range, b.DefRange, "Token in a spec", "A registration's token is a secret, and a secret in a spec is read by everyone who reads the repository, the plans and Consul's catalog: provision never sends one from a spec. It registers with its own token, CONSUL_HTTP_TOKEN (see docs/reference/secrets.md); the agent keeps that token for the service's anti-entropy.")
	}
	s.Lifecycle = d.Lifecycle(serviceIgnorable, c.Blocks.OfType("lifecycle"))
	s.Address = d.Str(c.Attributes["address"])
	s.Port = d.Port(c.Attributes["port"])
	s.Tags = d.Strings(c.Attributes["tags"])
	s.Meta = d.StringMap(c.Attributes["meta"])
	if attr, ok := c.Attributes["meta"]; ok {
		for k := range s.Meta {
			if !metaKey.MatchString(k) || strings.HasPrefix(k, "consul-") || schema.ProvisionMeta(k) {
				d.Errorf(attr.Expr.Range(), attr.Range, "Invalid meta key",
					"The meta key %q is refused: Consul takes 1 to 128 letters, digits, \"_\" and \"-\", reserves \"consul-\", and provision reserves %q and %q for its ownership marks.", k, schema.ManagedByKey, schema.MetaPrefix+"*")
			}
		}
	}
	s.Fields = d.Alike(d.Args(RegistrationFields, c, ""))
	checkRegistration(d.Decoder, s, b.DefRange)
	d.Once(b.Body, c, "frontend", "this service", func(fb schema.Nested) { s.Frontend = d.frontendBlock(fb) })
	seen := map[string]*Check{}
	for _, cb := range d.Blocks(b.Body, c, "check") {
		d.Within(cb.Iter, func() {
			ch := d.checkBlock(cb.Block)
			if prev, dup := seen[ch.Name]; dup {
				d.DuplicateBlock("Duplicate check block", fmt.Sprintf("check %q of this service", ch.Name), cb.LabelRanges[0], prev.DeclRange)
				return
			}
			seen[ch.Name] = ch
			s.Checks = append(s.Checks, ch)
		})
	}
}

func (d decoder) frontendBlock(b schema.Nested) *Frontend {
	f := &Frontend{DeclRange: b.DefRange}
	c := d.Content(b.Body, frontendSchema)
	if attr, ok := c.Attributes["rule"]; ok {
		f.RuleRange = attr.Expr.Range()
		if s := d.Str(attr); s != "" {
			r, err := labels.ParseRule(s)
			if err != nil {
				d.Errorf(attr.Expr.Range(), b.DefRange, "Invalid frontend rule",
					"The rule %q is not in the Traefik rule grammar (Matcher:value[,value], matchers joined by \";\"): %s.", s, err)
			}
			f.Rule = r
		}
	}
	f.EntryPoints = d.Strings(c.Attributes["entrypoints"])
	d.Once(b.Raw, c, "forward_auth", "this frontend", func(ab schema.Nested) { f.ForwardAuth = d.forwardAuthBlock(ab) })
	if proofs := c.Blocks.OfType("proof"); len(proofs) > 0 {
		d.proofBlock(f, proofs[0], d.OnlyBlock(proofs, proofSchema))
	}
	return f
}

// proofBlock decodes proof { token = var.gate_token }: a token the auth
// endpoint accepts, with which the proof after an apply expects the gated
// path to answer 200. The token must be sensitive (a sensitive variable,
// which the environment may set), so that no view shows it; null leaves
// the proof at its two 401s.
func (d decoder) proofBlock(f *Frontend, b *hcl.Block, c *hcl.BodyContent) {
	attr, ok := c.Attributes["token"]
	if !ok {
		return
	}
	v, ok := d.Marked(attr.Expr)
	if !ok || !v.IsWhollyKnown() {
		return
	}
	marked := v.IsMarked()
	v, _ = v.Unmark()
	switch {
	case v.IsNull():
	case v.Type() != cty.String || v.AsString() == "":
		d.Errorf(attr.Expr.Range(), attr.Range, "Invalid proof token", "token is a string: a token the auth endpoint accepts, or null for no such proof.")
	case !marked:
		d.Errorf(attr.Expr.Range(), attr.Range, "Proof token not sensitive",
			"The proof token is a credential: give it through a variable declared sensitive = true (set by -var, a -var-file or %s<name>), so that no plan, log or output shows it.", schema.EnvPrefix)
	case f.ForwardAuth == nil:
		d.Errorf(b.DefRange, b.DefRange, "Proof without forward_auth", "A proof token proves a gate: this frontend declares no forward_auth block.")
	default:
		f.ProofToken, f.ProofRange = v.AsString(), attr.Expr.Range()
		d.Secret(f.ProofToken)
	}
}

func (d decoder) forwardAuthBlock(b schema.Nested) *ForwardAuth {
	a := &ForwardAuth{DeclRange: b.DefRange}
	c := d.Content(b.Body, forwardAuthSchema)
	if attr, ok := c.Attributes["address"]; ok {
		a.Address = d.Str(attr)
		if a.Address != "" {
			if err := schema.AbsoluteHTTPURL(a.Address); err != nil {
				d.Errorf(attr.Expr.Range(), b.DefRange, "Invalid forward-auth address",
					"The forward-auth address %q %s; the proxy needs an absolute http:// or https:// URL, such as \"http://127.0.0.1:8080/auth\".", a.Address, err)
			} else {
				d.NoCredentials(attr, a.Address)
			}
		}
	}
	a.AuthResponseHeaders = d.headers(c.Attributes["auth_response_headers"], b.Block)
	a.AuthRequestHeaders = d.headers(c.Attributes["auth_request_headers"], b.Block)
	if attr, ok := c.Attributes["auth_response_headers_regex"]; ok {
		a.AuthResponseHeadersRegex = d.Str(attr)
		if _, err := regexp.Compile(a.AuthResponseHeadersRegex); err != nil {
			d.Errorf(attr.Expr.Range(), b.DefRange, "Invalid regular expression", "auth_response_headers_regex is not a Go regular expression: %s.", err)
		}
	}
	a.TrustForwardHeader = d.Bool(c.Attributes["trust_forward_header"])
	d.Once(b.Raw, c, "tls", "this forward_auth", func(tb schema.Nested) { a.TLS = d.tlsBlock(tb.Block) })
	return a
}

// tlsBlock decodes how the proxy reaches an https auth address.
func (d decoder) tlsBlock(tb *hcl.Block) *ForwardAuthTLS {
	tc := d.Content(tb.Body, forwardAuthTLSSchema)
	t := &ForwardAuthTLS{InsecureSkipVerify: d.Bool(tc.Attributes["insecure_skip_verify"])}
	for name, to := range map[string]*string{"ca": &t.CA, "cert": &t.Cert, "key": &t.Key} {
		attr, ok := tc.Attributes[name]
		if !ok {
			continue
		}
		*to = d.Str(attr)
		if strings.Contains(*to, "-----BEGIN") || !strings.HasPrefix(*to, "/") {
			d.Errorf(attr.Expr.Range(), tb.DefRange, "Not a file path",
				"tls.%s is the absolute path of a PEM file on the proxy's host, such as \"/etc/traefik/auth-ca.pem\". Key material and certificates never go into a spec: tags are public in Consul's catalog.", name)
		}
	}
	return t
}

// headers decodes a list of HTTP header names.
func (d decoder) headers(attr *hcl.Attribute, b *hcl.Block) []string {
	hs := d.Strings(attr)
	for _, h := range hs {
		if !headerName.MatchString(h) {
			d.Errorf(attr.Expr.Range(), b.DefRange, "Invalid header name", "%q is not an HTTP header name.", h)
		}
	}
	return hs
}

func (d decoder) checkBlock(b *hcl.Block) *Check {
	ch := &Check{Name: b.Labels[0], DeclRange: b.DefRange}
	var c *hcl.BodyContent
	if !d.NoErrors(func() {
		c = d.Content(b.Body, checkSchema)
		ch.Def = d.Args(CheckFields, c, "check."+ch.Name+".")
	}) {
		return ch // what failed is said; the rules below would say it again
	}
	if attr, ok := c.Attributes["http"]; ok && ch.Def["HTTP"] != nil {
		if err := schema.AbsoluteHTTPURL(ch.Def["HTTP"].(string)); err != nil {
			d.Errorf(attr.Expr.Range(), b.DefRange, "Invalid check URL", "The check URL %q %s.", ch.Def["HTTP"], err)
			return ch
		}
		d.NoCredentials(attr, ch.Def["HTTP"].(string))
	}
	checkCheck(d.Decoder, ch, b.DefRange)
	return ch
}

// checkPublic refuses sensitive values where everybody reads them: the
// tags (extra tags and all that the frontend becomes), which Consul's
// catalog shows to anyone who can list services.
func (d decoder) checkPublic(cfg *schema.Config, services []*Decl) {
	if len(cfg.Secrets) == 0 {
		return
	}
	for _, s := range services {
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
				d.Errorf(rng, s.DeclRange, "Sensitive value in a tag",
					"The service %q puts the value of a sensitive variable into its tags (its tags, or the frontend that becomes tags). Consul's catalog shows tags to everyone who can list services, so a secret has no place there.", s.Service)
				break
			}
		}
	}
}

// checkServices reports what only shows across services, once every
// block is decoded: the agent of each, duplicate IDs, frontends a
// single-generation dialect would leave ungated, tags that route past a
// gate or carry a secret.
func checkServices(d decoder, cfg *schema.Config, objs []schema.Decl) {
	services := schema.As[*Decl](objs)
	d.resolveAgents(cfg, services)
	d.checkFrontends(cfg, services)
	d.checkRoutes(cfg, services)
	d.checkPublic(cfg, services)
}

// resolveAgents resolves the agent of each service: the one it names, or
// the only one declared. Specs without agent blocks keep the one agent
// of the consul block or CONSUL_HTTP_ADDR, and their services name none.
func (d decoder) resolveAgents(cfg *schema.Config, services []*Decl) {
	agents := Agents(cfg)
	byName := map[string]*Agent{}
	for _, a := range agents {
		if _, dup := byName[a.Name]; !dup {
			byName[a.Name] = a
		}
	}
	for _, s := range services {
		switch {
		case s.NodeRange.Filename != "":
			// a service of an external node: no agent registers it
		case s.Agent != "" && byName[s.Agent] == nil:
			d.Errorf(s.AgentRange, s.DeclRange, "Reference to undeclared agent",
				"The service %q names the agent %s, but there is no such agent block (%s).", s.Service, client.Named(s.Agent), schema.DeclaredNames(byName))
		case s.Agent == "" && len(agents) == 1:
			s.Agent = agents[0].Name
		case s.Agent == "" && len(agents) > 1 && !s.AgentFailed:
			d.Errorf(s.DeclRange, s.DeclRange, "Service without an agent",
				"%d agents are declared (%s), so the service %q must say which node's agent registers it: agent = agent.<name> (agent.<name>[<key>] for an instance of an agent block with for_each).", len(agents), schema.DeclaredNames(byName), s.Service)
		}
	}
}

// checkFrontends reports duplicate IDs, and frontends a single-generation
// dialect would leave ungated.
func (d decoder) checkFrontends(cfg *schema.Config, services []*Decl) {
	proxy := ProxyOf(cfg)
	ids := map[string]*Decl{}
	named := map[string]*Decl{}
	for _, s := range services {
		if prev, ok := named[s.Service]; ok && frontendKey(prev.Frontend) != frontendKey(s.Frontend) {
			at := s.DeclRange
			if s.Frontend != nil {
				at = s.Frontend.DeclRange
			}
			d.Errorf(at, s.DeclRange, "Frontends differ within one service name",
				"The services %q and %q (at %s) are instances of the Consul service %q, and Traefik builds one router per service name from the tags of all its instances: with different frontends it would have two definitions of one router, drop it, and leave the path unserved or served without the gate. "+
					"Give the instances one frontend (declare it once, outside what varies), or give them different names.", s.Name, prev.Name, prev.DeclRange, s.Service)
		} else if !ok {
			named[s.Service] = s
		}
		if prev, dup := ids[s.Name]; dup {
			if schema.SameBlock(&s.Declaration, &prev.Declaration) {
				d.Errorf(s.NameRange, s.DeclRange, "Duplicate instance ID",
					"The instances %s and %s of service %q both have the ID %q. Each instance needs an ID of its own: leave id out (it defaults to \"<label>-<each.key>\") or build it from each.key.",
					prev.Instance, s.Instance, s.Service, s.Name)
				continue
			}
			d.Duplicate("Duplicate service ID", fmt.Sprintf("service ID %q", s.Name), &s.Declaration, &prev.Declaration)
			continue
		}
		ids[s.Name] = s
		f := s.Frontend
		if f == nil || f.Rule == nil {
			continue
		}
		dl := proxy.Dialect
		if dl.HTTP() {
			if err := f.Rule.Check(dl.Grammar()); err != nil {
				d.Errorf(f.RuleRange, f.DeclRange, "Rule has no form for the dialect",
					"The rule %q cannot be written for dialect %q: %s.", f.Rule, dl, err)
			}
		}
		if a := f.ForwardAuth; a != nil {
			d.checkForwardAuth(dl, f, a)
		}
		if f.ForwardAuth != nil {
			d.checkGate(proxy.Prefix, s)
		}
		if f.ForwardAuth != nil && dl != labels.DialectTraefik {
			d.Add(&hcl.Diagnostic{
				Severity: hcl.DiagWarning,
				Summary:  "Gated frontend written for one Traefik generation",
				Detail: fmt.Sprintf("The proxy dialect %q writes tags for one generation only: %s Keep the default dialect \"traefik\" unless no other generation ever reads this Consul.",
					dl, otherGenerations[dl]),
				Subject: f.ForwardAuth.DeclRange.Ptr(),
				Context: proxy.DeclRange.Ptr(),
			})
		}
	}
}

// checkForwardAuth refuses the forward-auth options a dialect cannot
// write and warns of those that weaken the gate.
func (d decoder) checkForwardAuth(dl labels.Dialect, f *Frontend, a *ForwardAuth) {
	warn := func(summary, detail string) {
		d.Add(&hcl.Diagnostic{Severity: hcl.DiagWarning, Summary: summary, Detail: detail, Subject: a.DeclRange.Ptr(), Context: f.DeclRange.Ptr()})
	}
	switch {
	case dl == labels.DialectTraefikV1 && (len(a.AuthRequestHeaders) > 0 || a.AuthResponseHeadersRegex != ""):
		d.Errorf(a.DeclRange, f.DeclRange, "Forward-auth option Traefik 1 lacks",
			"auth_request_headers and auth_response_headers_regex exist in Traefik 2 and 3 only, and the dialect %q writes Traefik 1 tags alone, which would gate without them. "+
				"Choose the default dialect \"traefik\", \"traefik-v2\" or \"traefik-v3\", or drop the option.", dl)
	case dl.V1() && a.AuthResponseHeadersRegex != "":
		d.Errorf(a.DeclRange, f.DeclRange, "Forward-auth option Traefik 1 lacks",
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
var otherGenerations = map[labels.Dialect]string{
	labels.DialectTraefikV1: "Traefik 2 and Traefik 3 ignore Traefik 1 tags and would serve the service ungated on their default Host(`<service>`) router.",
	labels.DialectTraefikV2: "Traefik 1 would serve the service ungated on its default frontend; Traefik 3 reads the same http.* tags and drops a router whose rule uses Traefik 2 syntax (the path then answers 404).",
	labels.DialectTraefikV3: "Traefik 1 would serve the service ungated on its default frontend; Traefik 2 reads the same http.* tags and drops a router whose rule uses Traefik 3 syntax (the path then answers 404).",
}

// checkGate refuses extra tags of a gated service that Traefik reads as
// a route or a middleware of their own (a router of any protocol, a
// middleware, a Traefik 1 frontend, traefik.enable), in any case, as
// Traefik's label parser reads them (labels.Decode): such a route reaches
// the service without the forward-auth check, and a middleware of the
// generated name overrides the gate.
func (d decoder) checkGate(prefix string, s *Decl) {
	routes, err := labels.Decode(prefix, s.Tags)
	if err != nil {
		d.Errorf(s.DeclRange, s.DeclRange, "Tags Traefik cannot read",
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
		d.Errorf(s.DeclRange, s.DeclRange, "Tag would bypass the gate",
			"The service %q has a gated frontend, and its extra tags define %s, as Traefik reads them (its label parser takes a key in any case): a route of its own, or a middleware in place of the generated one, could serve the service without the forward-auth check. "+
				"Declare the route in the frontend block, or drop the tag.", s.Service, strings.Join(own, ", "))
	}
}

// gatesOf is the requests the specs' gated frontends gate, as the proxy
// judge takes them.
func gatesOf(services []*Decl) []labels.Gate {
	var out []labels.Gate
	for _, s := range services {
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
func (d decoder) checkRoutes(cfg *schema.Config, services []*Decl) {
	gates := gatesOf(services)
	if len(gates) == 0 {
		return
	}
	regs := make([]labels.Registration, 0, len(services))
	at := map[string]*Decl{}
	for _, s := range services {
		if len(s.Tags) > 0 && (s.Frontend == nil || s.Frontend.ForwardAuth == nil) {
			regs = append(regs, labels.Registration{ID: s.Name, Service: s.Service, Tags: s.Tags})
			at[s.Name] = s
		}
	}
	open, _ := labels.Judge(ProxyOf(cfg).Prefix, gates, regs)
	for _, o := range open {
		s := at[o.ID]
		d.Errorf(s.DeclRange, s.DeclRange, "Tag would bypass the gate",
			"The service %q: %s, as Traefik reads its tags. Requests there would reach what %s gates without the auth check. "+
				"Give the route the forward-auth middleware, another path or host, or (a TCP router) an entrypoint of its own that no gated frontend names.", s.Service, o, o.Gate.Service)
	}
}

// servicePulled are what pull may write into a service block, from the
// registration as the agent reports it and as declared: its address,
// port, meta (less provision's marks), tags (less those its frontend
// block writes) and the other fields of the registration it declares
// (RegistrationFields).
func servicePulled(o schema.Decl, live, declared map[string]any) []schema.PullAttr {
	attrs := []schema.PullAttr{{Name: "address", Live: live["Address"], Decl: declared["Address"]}, {Name: "port", Live: live["Port"], Decl: declared["Port"]},
		{Name: "meta", Live: unmarked(live["Meta"]), Decl: unmarked(declared["Meta"])}}
	svc, ok := o.(*Decl)
	if !ok {
		return attrs
	}
	tags, ok := rawTags(anyStrings(live["Tags"]), anyStrings(declared["Tags"]), svc.Tags)
	attrs = append(attrs, schema.PullAttr{Name: "tags", Live: tags, Decl: anyStrings(svc.Tags), Frontend: !ok})
	for _, a := range RegistrationFields {
		if _, set := svc.Fields[a.Wire]; set {
			attrs = append(attrs, schema.PullAttr{Name: a.Name, Live: schema.SpecJSON(a, live[a.Wire]), Decl: schema.SpecJSON(a, declared[a.Wire])})
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
		if !schema.ProvisionMeta(k) {
			out[k] = x
		}
	}
	return out
}
