package schema

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// Address is an object's address as a person writes it: after -target,
// in a plan, and in an import block's to and a removed block's from.
// (plans.Addr is the same address as a plan holds it.)
type Address struct {
	// Module is the module instance that declares the object, as
	// module.gated["a"]; empty for the root's, or, with no Kind, the
	// address of a module instance alone.
	Module string
	// In is the object's place block, "agent.node-a" or "search.t1", when
	// written; empty otherwise.
	In   string
	Kind string
	Name string
}

var bareName = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_-]*$`)

// FormatAddr renders the address of an object as a user writes it after
// -target and in an import block: service.gated-api-1, index[".dashboard"]
// (a name that is not a plain identifier is quoted).
func FormatAddr(kind, name string) string {
	if bareName.MatchString(name) {
		return kind + "." + name
	}
	return kind + "[" + strconv.Quote(name) + "]"
}

// ParseAddress parses an address as FormatAddr writes it (and a dotted
// name written plainly, index..dashboard), optionally after its place
// (agent.AGENT., search.CLUSTER.) and after the module instances that
// declare it (module.NAME, module.NAME["KEY"], module.NAME[N], repeated);
// or a module instance alone. It is the one parser of addresses: an
// import block's traversal is written out as this text first
// (traversalText).
func ParseAddress(s string) (Address, error) {
	module, rest, err := cutModule(s)
	if err != nil {
		return Address{}, err
	}
	if rest == "" && module != "" {
		return Address{Module: module}, nil
	}
	a, err := parseObject(rest)
	a.Module = module
	return a, err
}

// cutModule cuts the module instances off the front of an address.
func cutModule(s string) (module, rest string, err error) {
	for strings.HasPrefix(s, "module.") {
		name := strings.TrimPrefix(s, "module.")
		end := strings.IndexAny(name, ".[")
		if end < 0 {
			end = len(name)
		}
		step := "module." + name[:end]
		rest := name[end:]
		if strings.HasPrefix(rest, "[") {
			close := strings.Index(rest, "]")
			if close < 0 {
				return "", "", fmt.Errorf("%q has a module key without its closing bracket", s)
			}
			key := rest[1:close]
			if _, err := strconv.Atoi(key); err != nil {
				if _, err := strconv.Unquote(key); err != nil {
					return "", "", fmt.Errorf("%q has a module key that is neither a quoted string nor a number", s)
				}
			}
			step += rest[:close+1]
			rest = rest[close+1:]
		}
		if name[:end] == "" {
			return "", "", fmt.Errorf("%q names a module without a name", s)
		}
		if module != "" {
			module += "."
		}
		module += step
		s = strings.TrimPrefix(rest, ".")
	}
	return module, s, nil
}

// parseObject parses an address without its module instances.
func parseObject(s string) (Address, error) {
	var in string
	for _, k := range Kinds {
		if rest, ok := strings.CutPrefix(s, k.Place+"."); ok && k.Place != "" {
			if name, obj, ok := strings.Cut(rest, "."); ok && name != "" && strings.HasPrefix(obj, k.Name) {
				in, s = k.Place+"."+name, obj
			}
		}
	}
	if kind, rest, ok := strings.Cut(s, "["); ok && strings.HasSuffix(rest, "]") {
		name, err := strconv.Unquote(strings.TrimSuffix(rest, "]"))
		if _, known := kindOf(kind); err == nil && known {
			return Address{In: in, Kind: kind, Name: name}, nil
		}
	}
	kind, name, ok := strings.Cut(s, ".")
	_, known := kindOf(kind)
	if known && ok && name != "" {
		return Address{In: in, Kind: kind, Name: name}, nil
	}
	if kind, _, _ := strings.Cut(kind, "["); ok && !known && kind != "" {
		return Address{}, fmt.Errorf("%q is not a kind of object provision manages; the kinds are %s", kind, kindNames())
	}
	return Address{}, fmt.Errorf("%q is not an address", s)
}

// traversalText writes an address written as a traversal (an import
// block's to) as ParseAddress reads it; key, when set, is the value of a
// computed name in brackets (kind[each.value]). It fails on a name in
// brackets that is not a string.
func traversalText(tr hcl.Traversal, key *cty.Value) (string, error) {
	var b strings.Builder
	for i, step := range tr {
		switch step := step.(type) {
		case hcl.TraverseRoot:
			b.WriteString(step.Name)
		case hcl.TraverseAttr:
			b.WriteString("." + step.Name)
		case hcl.TraverseIndex:
			v := step.Key
			if key != nil && i == len(tr)-1 {
				v = *key
			}
			switch {
			case v.IsNull() || !v.IsKnown():
				return "", fmt.Errorf("the name in brackets must be a string")
			case v.Type() == cty.String:
				b.WriteString("[" + strconv.Quote(v.AsString()) + "]")
			case v.Type() == cty.Number && i < len(tr)-1:
				b.WriteString("[" + v.AsBigFloat().Text('f', -1) + "]")
			default:
				return "", fmt.Errorf("the name in brackets must be a string")
			}
		default:
			return "", fmt.Errorf("it is not an address")
		}
	}
	return b.String(), nil
}

// upper starts a sentence made of an error's text.
func upper(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
