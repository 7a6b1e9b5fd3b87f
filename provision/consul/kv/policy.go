package kv

import (
	"encoding/json"

	"github.com/provision-dev/provision/provision/addrs"
	"github.com/provision-dev/provision/provision/policies"
	"github.com/provision-dev/provision/schema"
	"github.com/zclconf/go-cty/cty"
)

// KeyPolicy is what a policy sees of a key (resource_policy "key"
// "..."), as a key block names its attributes: path, value (its text) and
// flags.
var KeyPolicy = policies.Kind{Name: Key.Name(), Attrs: keyAttrs, Of: func(*schema.Config) policies.Reader { return keyAttrsOf }}

var keyAttrs = cty.Object(map[string]cty.Type{"path": cty.String, "value": cty.String, "flags": cty.Number})

func keyAttrsOf(addr addrs.Addr, view json.RawMessage, _ bool) (cty.Value, error) {
	var v struct {
		Value string `json:"value"`
		Flags uint64 `json:"flags"`
	}
	if err := json.Unmarshal(view, &v); err != nil {
		return cty.NilVal, err
	}
	return cty.ObjectVal(map[string]cty.Value{"path": cty.StringVal(addr.Name), "value": cty.StringVal(v.Value), "flags": cty.NumberUIntVal(v.Flags)}), nil
}
