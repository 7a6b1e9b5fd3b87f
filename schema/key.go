package schema

import (
	"fmt"
	"math"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision/addrs"
	"github.com/zclconf/go-cty/cty"
	ctyjson "github.com/zclconf/go-cty/cty/json"
)

// Key is a Consul KV entry a key block declares: key "<path>" { value =
// ..., flags = ... }. Traefik's own Consul KV provider reads keys of this
// kind.
type Key struct {
	Path      string
	PathRange hcl.Range
	// Value is the text stored. A value written as an object or a list is
	// stored as compact JSON and compared as JSON (JSON is true); a
	// number or a bool as its text.
	Value      string
	JSON       bool
	ValueRange hcl.Range
	// Flags are the key's flags as declared: Consul's opaque 64-bit
	// number, of which provision keeps the high 32 bits for its marks.
	Flags     uint64
	DeclRange hcl.Range
	Import    *Import
	Lifecycle Lifecycle
	Module    addrs.Module // as Service.Module
	// Instance is the for_each instance the key is, nil when its block
	// has no for_each.
	Instance *Instance
}

// KeyReserved is the KV folder provision keeps for itself (the locks,
// the records, the watchers' elections): no key block may name it.
const KeyReserved = "provision/"

// MaxKeyFlags is the largest flags a key block may declare.
const MaxKeyFlags = math.MaxUint32

var keySchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "path"}, {Name: "value", Required: true}, {Name: "flags"}},
	Blocks:     []hcl.BlockHeaderSchema{{Type: "lifecycle"}},
}

// keyBlock decodes one instance of a key block: its path is the label,
// "<label>/<each.key>" for an instance of a block with for_each, or its
// path attribute.
func (d *decoder) keyBlock(u unit) *Key {
	b := u.block
	k := &Key{Path: b.Labels[0], PathRange: b.LabelRanges[0], DeclRange: b.DefRange, Instance: u.each}
	if u.each != nil {
		k.Path += "/" + u.each.Key
	}
	c := d.content(u.body, keySchema)
	k.Lifecycle = d.lifecycleBlock(keyIgnorable, c.Blocks.OfType("lifecycle"))
	if d.override(c.Attributes["path"], &k.Path, &k.PathRange) || u.each == nil {
		if why := badKeyPath(k.Path); why != "" {
			d.errorf(k.PathRange, b.DefRange, "Invalid key path", "The key path %q %s.", k.Path, why)
		}
	}
	if attr, ok := c.Attributes["value"]; ok {
		k.ValueRange = attr.Expr.Range()
		if v, ok := d.eval(attr.Expr); ok {
			k.Value, k.JSON = d.keyValue(attr, v)
		}
	}
	if attr, ok := c.Attributes["flags"]; ok {
		if v, ok := d.value(attr, cty.Number); ok {
			n, acc := v.AsBigFloat().Uint64()
			if acc != 0 || !v.AsBigFloat().IsInt() || v.AsBigFloat().Sign() < 0 || n > MaxKeyFlags {
				d.errorf(attr.Expr.Range(), attr.Range, "Invalid key flags",
					"flags is a whole number from 0 to %d: Consul's flags are 64 bits, and provision keeps the high 32 for the ownership marks it writes with the key.", uint64(MaxKeyFlags))
			} else {
				k.Flags = n
			}
		}
	}
	return k
}

// keyValue is the text a value stores, and whether it is JSON.
func (d *decoder) keyValue(attr *hcl.Attribute, v cty.Value) (string, bool) {
	t := v.Type()
	switch {
	case v.IsNull():
		d.errorf(attr.Expr.Range(), attr.Range, "Invalid key value", "A key's value cannot be null; remove the key block to delete the key.")
	case t == cty.String:
		return v.AsString(), false
	case t == cty.Number || t == cty.Bool:
		b, _ := ctyjson.Marshal(v, t)
		return string(b), false
	case t.IsObjectType() || t.IsMapType() || t.IsTupleType() || t.IsListType() || t.IsSetType():
		b, err := ctyjson.Marshal(v, t)
		if err == nil {
			return string(b), true
		}
		d.errorf(attr.Expr.Range(), attr.Range, "Invalid key value", "The value cannot be written as JSON: %s.", err)
	default:
		d.errorf(attr.Expr.Range(), attr.Range, "Invalid key value", "A key's value is a string, a number, a bool, or an object or a list (stored as JSON).")
	}
	return "", false
}

// badKeyPath says what is wrong with a key's path; "" when nothing.
func badKeyPath(p string) string {
	switch {
	case p == "":
		return "is empty"
	case strings.HasPrefix(p, "/"):
		return "starts with \"/\"; Consul's key paths are relative (apps/edge/limits)"
	case strings.HasSuffix(p, "/"):
		return "ends with \"/\": that is a folder, not a key"
	case strings.Contains(p, "//"):
		return "has an empty segment (\"//\")"
	case strings.HasPrefix(p, KeyReserved):
		return fmt.Sprintf("is under %q, which provision keeps for its locks, records and elections", KeyReserved)
	}
	return ""
}

// checkKeys reports keys declared twice.
func (d *decoder) checkKeys(cfg *Config) {
	seen := map[string]*Key{}
	for _, k := range cfg.Keys {
		if prev, dup := seen[k.Path]; dup {
			d.diags = append(d.diags, duplicateIn("Duplicate key block", fmt.Sprintf("key %q", k.Path), k.PathRange, prev.PathRange, k.Module, prev.Module))
			continue
		}
		seen[k.Path] = k
	}
}

// Prefix is the folder of the key's path ("apps/edge/" for
// apps/edge/limits; "" for a key at the top).
func (k *Key) Prefix() string {
	if i := strings.LastIndex(k.Path, "/"); i >= 0 {
		return k.Path[:i+1]
	}
	return ""
}
