package kv

import (
	"fmt"
	"math"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/provision-dev/provision/provision/addrs"
	"github.com/provision-dev/provision/schema"
	"github.com/zclconf/go-cty/cty"
	ctyjson "github.com/zclconf/go-cty/cty/json"
)

// Key is the kind of a Consul KV entry: key "<path>" { value = ... }
// declares one, key["<path>"] addresses it. Its package decodes its
// block (Decl): KeyBlock, which a binary's language names.
var Key, KeyBlock = schema.NewKind(addrs.KindSpec{Name: "key", Place: "consul", DefaultPlace: true, Form: `key["<path>"]`, Order: 40}, &schema.KindSchema{
	Noun:   "key block at",
	Labels: []string{"path"},
	// A key of another datacenter is addressed consul.<name>.key["<path>"].
	Places: func(_ *schema.Config, objs []schema.Decl) []string {
		out := make([]string, len(objs))
		for i, o := range objs {
			out[i] = o.(*Decl).Consul
		}
		return out
	},
	Decode:   func(d schema.Decoder, b schema.Block) schema.Decl { return keyBlock(d, b) },
	Check:    checkKeys,
	Followed: true, // each folder's blocking query (Store.Follow)
	BadName: func(name string) string {
		if why := badKeyPath(name); why != "" {
			return fmt.Sprintf("The key path %q %s.", name, why)
		}
		return ""
	},
	Pulled: func(_ schema.Decl, live, declared map[string]any) []schema.PullAttr {
		return []schema.PullAttr{{Name: "value", Live: live["value"], Decl: declared["value"]}, {Name: "flags", Live: live["flags"], Decl: declared["flags"]}}
	},
})

// Decl is a Consul KV entry a key block declares: key "<path>" { value =
// ..., flags = ... }; its Name is the key's path. Traefik's own Consul KV
// provider reads keys of this kind.
type Decl struct {
	schema.Declaration
	// Value is the text stored. A value written as an object or a list is
	// stored as compact JSON and compared as JSON (JSON is true); a
	// number or a bool as its text.
	Value      string
	JSON       bool
	ValueRange hcl.Range
	// Flags are the key's flags as declared: Consul's opaque 64-bit
	// number, of which provision keeps the high 32 bits for its marks.
	Flags uint64
	// Consul names the consul block of the key's datacenter (consul =
	// consul.dc2); "" for the project's own.
	Consul      string
	ConsulRange hcl.Range
}

// Keys are the key blocks cfg declares, in block order.
func Keys(cfg *schema.Config) []*Decl { return schema.Decls[*Decl](cfg, Key) }

// Reserved is the KV folder provision keeps for itself (the locks, the
// records, the watchers' elections): no key block may name it.
const Reserved = "provision/"

// MaxFlags is the largest flags a key block may declare.
const MaxFlags = math.MaxUint32

var keySchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "path"}, {Name: "value", Required: true}, {Name: "flags"}, {Name: "consul"}},
	Blocks:     []hcl.BlockHeaderSchema{{Type: "lifecycle"}},
}

// keyIgnorable are the attributes of a key that ignore_changes may name.
var keyIgnorable = schema.Ignorable{Noun: "key", Roots: map[string]int{"value": 0, "flags": 0}}

// keyBlock decodes one instance of a key block: its path is the label,
// "<label>/<each.key>" for an instance of a block with for_each, or its
// path attribute.
func keyBlock(d schema.Decoder, b schema.Block) *Decl {
	k := &Decl{Declaration: schema.Declaration{Name: b.Labels[0], NameRange: b.LabelRanges[0], DeclRange: b.DefRange}}
	if b.Each != nil {
		k.Name += "/" + b.Each.Key
	}
	c := d.Content(b.Body, keySchema)
	k.Lifecycle = d.Lifecycle(keyIgnorable, c.Blocks.OfType("lifecycle"))
	if d.Override(c.Attributes["path"], &k.Name, &k.NameRange) || b.Each == nil {
		if why := badKeyPath(k.Name); why != "" {
			d.Errorf(k.NameRange, b.DefRange, "Invalid key path", "The key path %q %s.", k.Name, why)
		}
	}
	if attr, ok := c.Attributes["value"]; ok {
		k.ValueRange = attr.Expr.Range()
		if v, ok := d.Eval(attr.Expr); ok {
			k.Value, k.JSON = keyValue(d, attr, v)
		}
	}
	if attr, ok := c.Attributes["consul"]; ok {
		k.Consul, k.ConsulRange = d.Str(attr), attr.Expr.Range()
	}
	if attr, ok := c.Attributes["flags"]; ok {
		if v, ok := d.Value(attr, cty.Number); ok {
			n, acc := v.AsBigFloat().Uint64()
			if acc != 0 || !v.AsBigFloat().IsInt() || v.AsBigFloat().Sign() < 0 || n > MaxFlags {
				d.Errorf(attr.Expr.Range(), attr.Range, "Invalid key flags",
					"flags is a whole number from 0 to %d: Consul's flags are 64 bits, and provision keeps the high 32 for the ownership marks it writes with the key.", uint64(MaxFlags))
			} else {
				k.Flags = n
			}
		}
	}
	return k
}

// keyValue is the text a value stores, and whether it is JSON.
func keyValue(d schema.Decoder, attr *hcl.Attribute, v cty.Value) (string, bool) {
	t := v.Type()
	switch {
	case v.IsNull():
		d.Errorf(attr.Expr.Range(), attr.Range, "Invalid key value", "A key's value cannot be null; remove the key block to delete the key.")
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
		d.Errorf(attr.Expr.Range(), attr.Range, "Invalid key value", "The value cannot be written as JSON: %s.", err)
	default:
		d.Errorf(attr.Expr.Range(), attr.Range, "Invalid key value", "A key's value is a string, a number, a bool, or an object or a list (stored as JSON).")
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
	case strings.HasPrefix(p, Reserved):
		return fmt.Sprintf("is under %q, which provision keeps for its locks, records and elections", Reserved)
	}
	return ""
}

// checkKeys reports keys declared twice.
func checkKeys(d schema.Decoder, keys []schema.Decl) {
	type at struct{ datacenter, path string }
	seen := map[at]*schema.Declaration{}
	for _, o := range keys {
		k := o.Decl()
		where := at{o.(*Decl).Consul, k.Name}
		if prev, dup := seen[where]; dup {
			d.Duplicate("Duplicate key block", fmt.Sprintf("key %q", k.Name), k, prev)
			continue
		}
		seen[where] = k
	}
}

// prefix is the folder of a key's path ("apps/edge/" for
// apps/edge/limits; "" for a key at the top).
func prefix(path string) string {
	if i := strings.LastIndex(path, "/"); i >= 0 {
		return path[:i+1]
	}
	return ""
}
