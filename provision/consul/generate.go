package consul

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/provision-dev/provision/provision"
	"github.com/provision-dev/provision/provision/adapter"
	"github.com/provision-dev/provision/provision/addrs"
	"github.com/provision-dev/provision/schema"
	"github.com/zclconf/go-cty/cty"
)

// Generate writes a service block for every import of a service that no
// block declares, from the live registration, so that the import changes
// nothing but the ownership marks: its address, port (none when it has
// none) and meta; a frontend block when the tags it writes are exactly
// the live ones (names of routers and middlewares, generations and order
// included) for every registration of the service's name, and the tags as
// written otherwise, one per line. Registrations of one name that differ
// only in ID, address and port are one block with for_each. Every other
// field set on the registration is declared as the agent reports it, less
// what it fills in itself (RegistrationFields, normalize), a
// sidecar as connect { sidecar_service { ... } }. Live checks are written
// as commented blocks to complete: the agent reports a check's type,
// interval, timeout and notes, never its URL, TTL or script, and the
// import keeps them as they are. It reads the agent's services and GET
// /v1/agent/checks.
func (b *Backend) Generate(ctx context.Context) ([]*hclwrite.Block, hcl.Diagnostics) {
	var imports []*schema.Import
	for _, im := range b.cfg.ImportsOf(Service) {
		if !im.Declared {
			imports = append(imports, im)
		}
	}
	if len(imports) == 0 {
		return nil, nil
	}
	st, err := b.read(ctx)
	if err != nil {
		return nil, hcl.Diagnostics{b.c.Unreadable(err)}
	}
	var live []*agentService
	var diags hcl.Diagnostics
	for _, im := range imports {
		l, lv := liveOf(st.Services, im.Name)
		addr := addrs.Addr{In: b.in, Kind: Service, Name: im.Name}
		if _, _, refusal := adapter.Decide(b.cfg.Project, adapter.Declared{Addr: addr, Import: im.At()}, lv); refusal != nil {
			diags = append(diags, refusal)
			continue
		}
		if parent := parentOf(st.Services, l); parent != nil {
			diags = append(diags, sidecarDeclared(addr, parent, im.At()))
			continue
		}
		live = append(live, l)
	}
	read := b.readBack(live)
	// Registrations whose blocks would differ only in ID, address and
	// port share one, in the order of their first.
	var order []string
	groups := map[string][]*agentService{}
	for _, l := range live {
		shape := string(b.serviceBlock(l, sidecarOf(st.Services, l), read[l.ID], st.checksOf(l.ID), nil).BuildTokens(nil).Bytes())
		if groups[shape] == nil {
			order = append(order, shape)
		}
		groups[shape] = append(groups[shape], l)
	}
	var blocks []*hclwrite.Block
	for _, shape := range order {
		g := groups[shape]
		blocks = append(blocks, b.serviceBlock(g[0], sidecarOf(st.Services, g[0]), read[g[0].ID], st.checksOf(g[0].ID), g))
	}
	return blocks, diags
}

// declaredTags is a registration's tags as its declaration writes them: a
// frontend block (nil: none) and the tags kept as written.
type declaredTags struct {
	frontend *Frontend
	tags     []string
}

// readBack reads, by service ID, each registration's tags back into a
// frontend block when the tags that block writes (Tags) are exactly its
// own, and the same for every registration of its name (a frontend's
// router is named after the service); otherwise the tags are kept as
// written, and the proxy serves the same routers after the import.
func (b *Backend) readBack(live []*agentService) map[string]declaredTags {
	out := map[string]declaredTags{}
	byName := map[string][]*agentService{}
	for _, l := range live {
		byName[l.Service] = append(byName[l.Service], l)
	}
	for _, ls := range byName {
		read := make([]declaredTags, len(ls))
		exact := true
		for i, l := range ls {
			f, plain, unread := ReadTags(b.proxy.Prefix, l.Tags)
			read[i] = declaredTags{f, append(plain, unread...)}
			exact = exact && f != nil && slices.Equal(Tags(b.proxy, &Decl{Service: l.Service, Tags: read[i].tags, Frontend: f}), l.Tags) &&
				sameFrontend(read[0].frontend, f)
		}
		for i, l := range ls {
			if !exact {
				read[i] = declaredTags{tags: l.Tags}
			}
			out[l.ID] = read[i]
		}
	}
	return out
}

// serviceBlock is the declaration of a live registration with its tags
// read back and its live checks (by check ID). instances are the
// registrations it declares: one, written as they are, or several, with
// for_each over their IDs; none writes the block without ID, address and
// port, to compare the shapes of blocks.
func (b *Backend) serviceBlock(l, sidecar *agentService, read declaredTags, checks map[string]liveCheck, instances []*agentService) *hclwrite.Block {
	blk := hclwrite.NewBlock(Service.Name(), []string{l.Service})
	body := blk.Body()
	switch {
	case len(instances) == 1:
		if l.ID != l.Service {
			body.SetAttributeValue("id", cty.StringVal(l.ID))
		}
		if l.Address != "" {
			body.SetAttributeValue("address", cty.StringVal(l.Address))
		}
		if l.Port != 0 {
			body.SetAttributeValue("port", cty.NumberIntVal(int64(l.Port)))
		}
	case len(instances) > 1:
		each := map[string]cty.Value{}
		for _, in := range instances {
			each[in.ID] = cty.ObjectVal(map[string]cty.Value{"address": cty.StringVal(in.Address), "port": cty.NumberIntVal(int64(in.Port))})
		}
		body.SetAttributeValue("for_each", cty.ObjectVal(each))
		body.SetAttributeTraversal("id", hcl.Traversal{hcl.TraverseRoot{Name: "each"}, hcl.TraverseAttr{Name: "key"}})
		body.SetAttributeTraversal("address", hcl.Traversal{hcl.TraverseRoot{Name: "each"}, hcl.TraverseAttr{Name: "value"}, hcl.TraverseAttr{Name: "address"}})
		body.SetAttributeTraversal("port", hcl.Traversal{hcl.TraverseRoot{Name: "each"}, hcl.TraverseAttr{Name: "value"}, hcl.TraverseAttr{Name: "port"}})
	}
	if len(read.tags) > 0 {
		body.SetAttributeRaw("tags", lines(read.tags))
	}
	meta := map[string]cty.Value{}
	for k, v := range l.Meta {
		if !schema.ProvisionMeta(k) {
			meta[k] = cty.StringVal(v)
		}
	}
	if len(meta) > 0 {
		body.SetAttributeValue("meta", cty.MapVal(meta))
	}
	fields := maps.Clone(l.Fields)
	if sidecar != nil {
		fields = merged(fields, map[string]any{"Connect": map[string]any{"SidecarService": sidecarLive(l, sidecar, true)}})
	}
	for _, a := range RegistrationFields {
		if v, ok := schema.SpecValue(a, fields[a.Wire]); ok {
			body.SetAttributeValue(a.Name, v)
		}
	}
	if read.frontend != nil {
		frontendBlock(body, read.frontend)
	}
	for _, id := range slices.Sorted(maps.Keys(checks)) {
		body.AppendNewline()
		body.AppendUnstructuredTokens(provision.Comment(checkComment(l.ID, id, checks[id])))
	}
	return blk
}

// unreported are, by check type, what defines a check that the agent does
// not report (Consul 1.15 answers an empty Definition): what a person
// fills in to declare a live check.
var unreported = map[string][]string{
	"http": {`http = "..." # and method, header, body if it has them`}, "tcp": {`tcp = "..."`}, "udp": {`udp = "..."`},
	"ttl": {`ttl = "..."`}, "grpc": {`grpc = "..."`}, "h2ping": {`h2ping = "..."`}, "alias": {`alias_service = "..."`},
	"script": {`args = ["..."]`}, "docker": {`docker_container_id = "..."`, `args = ["..."]`},
}

// checkComment is the live check id of the service as a commented check
// block: what the agent reports of it (name, ID, type, interval,
// timeout, notes) and, to fill in, what it does not. The import keeps the
// check as it is unless the specs declare the service's checks.
func checkComment(service, id string, ch liveCheck) string {
	var lines []string
	if id != checkID(service, ch.Name) {
		lines = append(lines, fmt.Sprintf("check_id = %q", id))
	}
	fill, known := unreported[ch.Type]
	if !known {
		fill = []string{fmt.Sprintf("# a %s check: see Consul's check definitions", ch.Type)}
	}
	lines = append(lines, fill...)
	for _, kv := range [][2]string{{"interval", ch.Interval}, {"timeout", ch.Timeout}, {"notes", ch.Notes}} {
		if kv[1] != "" {
			lines = append(lines, fmt.Sprintf("%s = %q", kv[0], kv[1]))
		}
	}
	return fmt.Sprintf("The live check %q (%s, ID %s) is kept as it is: the agent does not report its definition.\n"+
		"To declare it, fill in what the agent does not report and uncomment it (declared checks replace the live ones):\n"+
		"check %q {\n  %s\n}", ch.Name, ch.Type, id, ch.Name, strings.Join(lines, "\n  "))
}

// frontendBlock writes f as a frontend block of body.
func frontendBlock(body *hclwrite.Body, f *Frontend) {
	body.AppendNewline()
	fb := body.AppendNewBlock("frontend", nil).Body()
	fb.SetAttributeValue("rule", cty.StringVal(f.Rule.String()))
	if len(f.EntryPoints) > 0 {
		fb.SetAttributeValue("entrypoints", strList(f.EntryPoints))
	}
	a := f.ForwardAuth
	if a == nil {
		return
	}
	fb.AppendNewline()
	ab := fb.AppendNewBlock("forward_auth", nil).Body()
	ab.SetAttributeValue("address", cty.StringVal(a.Address))
	if len(a.AuthResponseHeaders) > 0 {
		ab.SetAttributeValue("auth_response_headers", strList(a.AuthResponseHeaders))
	}
	if len(a.AuthRequestHeaders) > 0 {
		ab.SetAttributeValue("auth_request_headers", strList(a.AuthRequestHeaders))
	}
	if a.AuthResponseHeadersRegex != "" {
		ab.SetAttributeValue("auth_response_headers_regex", cty.StringVal(a.AuthResponseHeadersRegex))
	}
	if a.TrustForwardHeader {
		ab.SetAttributeValue("trust_forward_header", cty.True)
	}
	if t := a.TLS; t != nil {
		tb := ab.AppendNewBlock("tls", nil).Body()
		for _, kv := range [][2]string{{"ca", t.CA}, {"cert", t.Cert}, {"key", t.Key}} {
			if kv[1] != "" {
				tb.SetAttributeValue(kv[0], cty.StringVal(kv[1]))
			}
		}
		if t.InsecureSkipVerify {
			tb.SetAttributeValue("insecure_skip_verify", cty.True)
		}
	}
}

// lines is a list of strings written one per line.
func lines(ss []string) hclwrite.Tokens {
	toks := hclwrite.Tokens{{Type: hclsyntax.TokenOBrack, Bytes: []byte("[")}, {Type: hclsyntax.TokenNewline, Bytes: []byte("\n")}}
	for _, s := range ss {
		toks = append(toks, hclwrite.TokensForValue(cty.StringVal(s))...)
		toks = append(toks, &hclwrite.Token{Type: hclsyntax.TokenComma, Bytes: []byte(",")}, &hclwrite.Token{Type: hclsyntax.TokenNewline, Bytes: []byte("\n")})
	}
	return append(toks, &hclwrite.Token{Type: hclsyntax.TokenCBrack, Bytes: []byte("]")})
}

// liveCheck is what GET /v1/agent/checks says of a check (Consul 1.15:
// the type, interval and timeout at the top level, an empty Definition,
// and no URL or address).
type liveCheck struct {
	Name      string
	ServiceID string
	Type      string
	Interval  string
	Timeout   string
	Notes     string `json:",omitempty"`
}

func strList(ss []string) cty.Value {
	vals := make([]cty.Value, len(ss))
	for i, s := range ss {
		vals[i] = cty.StringVal(s)
	}
	return cty.ListVal(vals)
}
