package consul

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/provision-dev/provision/provision"
	"github.com/provision-dev/provision/provision/adapter"
	"github.com/provision-dev/provision/provision/plans"
	"github.com/provision-dev/provision/schema"
	"github.com/zclconf/go-cty/cty"
)

var _ provision.Generator = (*Backend)(nil)

// Generate writes a service block for every import of a service that no
// block declares, from the live registration: its address, port and meta,
// the frontend read back from its proxy tags (ReadTags), and its other tags
// as written. Its checks are written as comments to complete: the agent
// reports a check's type and interval, never its URL. It reads the agent's
// services and GET /v1/agent/checks.
func (b *Backend) Generate(ctx context.Context) ([]*hclwrite.Block, hcl.Diagnostics) {
	var imports []*schema.Import
	for _, im := range b.cfg.Imports {
		if im.Kind == "service" && !im.Declared {
			imports = append(imports, im)
		}
	}
	if len(imports) == 0 {
		return nil, nil
	}
	st, err := b.read(ctx)
	if err != nil {
		return nil, hcl.Diagnostics{b.unreadable(err)}
	}
	var blocks []*hclwrite.Block
	var diags hcl.Diagnostics
	for _, im := range imports {
		l, lv := liveOf(st.Services, im.Name)
		addr := plans.Addr{In: b.in, Kind: "service", Name: im.Name}
		if _, _, refusal := adapter.Decide(b.cfg.Project, adapter.Declared{Addr: addr, Noun: "service", Import: im.At()}, lv); refusal != nil {
			diags = append(diags, refusal)
			continue
		}
		blocks = append(blocks, b.serviceBlock(l, st.checksOf(l.ID)))
	}
	return blocks, diags
}

// serviceBlock is the declaration of a live registration with its live
// checks (by check ID).
func (b *Backend) serviceBlock(l *agentService, checks map[string]liveCheck) *hclwrite.Block {
	blk := hclwrite.NewBlock("service", []string{l.Service})
	body := blk.Body()
	if l.ID != l.Service {
		body.SetAttributeValue("id", cty.StringVal(l.ID))
	}
	if l.Address != "" {
		body.SetAttributeValue("address", cty.StringVal(l.Address))
	}
	body.SetAttributeValue("port", cty.NumberIntVal(int64(l.Port)))
	f, plain, unread := ReadTags(b.cfg.Proxy.Prefix, l.Tags)
	if len(unread) > 0 {
		body.AppendUnstructuredTokens(provision.Comment(
			"These proxy tags could not be read back into the frontend block and are kept as written:\n" + strings.Join(unread, "\n")))
	}
	if tags := append(plain, unread...); len(tags) > 0 {
		body.SetAttributeValue("tags", strList(tags))
	}
	meta := map[string]cty.Value{}
	for k, v := range l.Meta {
		if k != schema.ManagedByKey && !strings.HasPrefix(k, schema.MetaPrefix) {
			meta[k] = cty.StringVal(v)
		}
	}
	if len(meta) > 0 {
		body.SetAttributeValue("meta", cty.MapVal(meta))
	}
	if f != nil {
		body.AppendNewline()
		fb := body.AppendNewBlock("frontend", nil).Body()
		fb.SetAttributeValue("rule", cty.StringVal(f.Rule.String()))
		if len(f.EntryPoints) > 0 {
			fb.SetAttributeValue("entrypoints", strList(f.EntryPoints))
		}
		if a := f.ForwardAuth; a != nil {
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
	}
	for _, id := range slices.Sorted(maps.Keys(checks)) {
		ch := checks[id]
		body.AppendNewline()
		body.AppendUnstructuredTokens(provision.Comment(fmt.Sprintf(
			"The live check %q (%s, interval %s, timeout %s) is not read back: the agent does not report a check's URL or address.\n"+
				"Declare it here, or the import replaces it with the checks declared (none):\n"+
				"check %q {\n  %-8s = \"...\"\n  interval = %q\n  timeout  = %q\n}",
			ch.Name, ch.Type, ch.Interval, ch.Timeout, ch.Name, ch.Type, ch.Interval, ch.Timeout)))
	}
	return blk
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
}

func strList(ss []string) cty.Value {
	vals := make([]cty.Value, len(ss))
	for i, s := range ss {
		vals[i] = cty.StringVal(s)
	}
	return cty.ListVal(vals)
}
