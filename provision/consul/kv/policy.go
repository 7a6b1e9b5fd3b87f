package kv

import (
	"encoding/json"

	"github.com/provision-dev/provision/provision/addrs"
	"github.com/provision-dev/provision/provision/policies"
	"github.com/provision-dev/provision/schema"
	"github.com/zclconf/go-cty/cty"
)

// KeyPolicy is what a policy sees of a key (resource_policy "key"
// "..."), as a key block names its attributes: path, value (its text: a
// value the block writes as an object is its JSON) and flags.
var KeyPolicy = policies.Kind{Name: Key.Name(), Attrs: keyAttrs, Of: func(*schema.Config) policies.Reader { return keyAttrsOf }}

var keyAttrs = cty.Object(map[string]cty.Type{"path": cty.String, "value": cty.String, "flags": cty.Number})

// keyAttrsOf reads a key's view (keyView): its value is text, or, for a
// key whose block writes JSON, the JSON itself, which a policy sees as the
// text the key holds (jsondecode(attrs.value) reads it). A key with no
// view (none read) is an empty one.
func keyAttrsOf(addr addrs.Addr, view json.RawMessage, _ bool) (cty.Value, error) {
	var v struct {
		Value json.RawMessage `json:"value"`
		Flags uint64          `json:"flags"`
	}
	if view != nil {
		if err := json.Unmarshal(view, &v); err != nil {
			return cty.NilVal, err
		}
	}
	text := string(v.Value)
	if err := json.Unmarshal(v.Value, &text); err != nil && len(v.Value) > 0 && v.Value[0] == '"' {
		return cty.NilVal, err
	}
	return cty.ObjectVal(map[string]cty.Value{"path": cty.StringVal(addr.Name), "value": cty.StringVal(text), "flags": cty.NumberUIntVal(v.Flags)}), nil
}
