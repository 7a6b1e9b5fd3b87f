package consul

import (
	"fmt"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// consulDefinition rewrites, in a file's syntax tree, a service as
// Consul's own definition files write it (Consul's "Define services" and
// "Services configuration reference" pages; its agent's config folder
// takes the same files): a service or services block without a label is
// the service block named by its name attribute, and its checks = [{...}]
// and check = {...} attributes are its check blocks, each named by its
// name (or else its id, which is Consul's check_id). The rest of the block
// is decoded as any service block, so a field provision lacks is the
// usual error at it.
func consulDefinition(blk *hclsyntax.Block) hcl.Diagnostics {
	if len(blk.Labels) == 0 {
		name, rng, ok := literalString(blk.Body.Attributes["name"])
		if !ok {
			return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Missing service name",
				Detail:  "A service block without a label, as Consul's definitions write it, is named by its name attribute: name = \"web\" (a string, not an expression). Or write service \"web\" { ... }.",
				Subject: blk.TypeRange.Ptr()}}
		}
		blk.Type, blk.Labels, blk.LabelRanges = "service", []string{name}, []hcl.Range{rng}
	} else if blk.Type == "services" {
		return nil // a block of its own kind: the usual error
	}
	return consulChecks(blk)
}

// consulChecks turns a service block's checks and check attributes into
// check blocks.
func consulChecks(blk *hclsyntax.Block) hcl.Diagnostics {
	var objects []*hclsyntax.ObjectConsExpr
	var diags hcl.Diagnostics
	bad := func(attr *hclsyntax.Attribute, form string) {
		diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid " + attr.Name,
			Detail:  fmt.Sprintf("%s is %s, as Consul's definitions write it: %s. Or write check \"name\" { ... } blocks.", attr.Name, form, map[string]string{"checks": "checks = [{ name = \"health\", http = \"http://127.0.0.1:8080/healthz\", interval = \"10s\" }]", "check": "check = { name = \"health\", ttl = \"30s\" }"}[attr.Name]),
			Subject: attr.Expr.Range().Ptr()})
	}
	for _, name := range []string{"checks", "check"} {
		attr, ok := blk.Body.Attributes[name]
		if !ok {
			continue
		}
		delete(blk.Body.Attributes, name)
		form, exprs := "one check object", []hclsyntax.Expression{attr.Expr}
		if name == "checks" {
			form = "a list of check objects"
			list, ok := attr.Expr.(*hclsyntax.TupleConsExpr)
			if !ok {
				bad(attr, form)
				return diags
			}
			exprs = list.Exprs
		}
		for _, e := range exprs {
			o, ok := e.(*hclsyntax.ObjectConsExpr)
			if !ok {
				bad(attr, form)
				return diags
			}
			objects = append(objects, o)
		}
	}
	for i, o := range objects {
		end := hcl.Range{Filename: o.SrcRange.Filename, Start: o.SrcRange.End, End: o.SrcRange.End}
		check := &hclsyntax.Block{Type: "check", Body: &hclsyntax.Body{Attributes: hclsyntax.Attributes{}, SrcRange: o.SrcRange, EndRange: end},
			TypeRange: o.OpenRange, OpenBraceRange: o.OpenRange, CloseBraceRange: end}
		for _, item := range o.Items {
			key, ok := objectKey(item.KeyExpr)
			if !ok {
				diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid check field",
					Detail: "A check object's fields are names, as Consul's definitions write them (http, interval, ...).", Subject: item.KeyExpr.Range().Ptr()})
				continue
			}
			if key == "id" {
				key = "check_id" // Consul's definitions take both
			}
			check.Body.Attributes[key] = &hclsyntax.Attribute{Name: key, Expr: item.ValueExpr, SrcRange: hcl.RangeBetween(item.KeyExpr.Range(), item.ValueExpr.Range()),
				NameRange: item.KeyExpr.Range(), EqualsRange: item.KeyExpr.Range()}
		}
		name, rng, ok := literalString(check.Body.Attributes["name"])
		delete(check.Body.Attributes, "name")
		if !ok {
			name, rng, ok = literalString(check.Body.Attributes["check_id"])
		}
		if !ok {
			name, rng = fmt.Sprintf("check-%d", i+1), o.OpenRange
		}
		check.Labels, check.LabelRanges = []string{name}, []hcl.Range{rng}
		blk.Body.Blocks = append(blk.Body.Blocks, check)
	}
	return diags
}

// literalString is the value of attr when it is a string written as is.
func literalString(attr *hclsyntax.Attribute) (string, hcl.Range, bool) {
	if attr == nil || len(attr.Expr.Variables()) > 0 {
		return "", hcl.Range{}, false
	}
	v, diags := attr.Expr.Value(nil)
	if diags.HasErrors() || v.IsNull() || !v.IsKnown() || v.Type() != cty.String {
		return "", hcl.Range{}, false
	}
	return v.AsString(), attr.Expr.Range(), true
}

// objectKey is the name an object constructor's key writes: a bare name,
// or a quoted string.
func objectKey(e hclsyntax.Expression) (string, bool) {
	if k := hcl.ExprAsKeyword(e); k != "" {
		return k, true
	}
	if len(e.Variables()) > 0 {
		return "", false
	}
	v, diags := e.Value(nil)
	if diags.HasErrors() || v.IsNull() || v.Type() != cty.String {
		return "", false
	}
	return v.AsString(), true
}
