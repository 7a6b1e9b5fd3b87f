package pull

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"strings"

	"github.com/provision-dev/provision/provision/plans"
)

// node is a JSON value as a file holds it: an object keeps its keys'
// order, a scalar its text.
type node struct {
	kind   byte // '{', '[' or 0 for a scalar
	keys   []string
	fields map[string]*node
	items  []*node
	raw    []byte
	// inline: the object or list was on one line, spaced with ", " and
	// ": " when spaced; it is written back so.
	inline, spaced bool
}

// parse reads one JSON value, keeping its objects' key order.
func parse(raw []byte) (*node, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || (raw[0] != '{' && raw[0] != '[') {
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, err
		}
		return &node{raw: raw}, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	n := &node{kind: raw[0], fields: map[string]*node{}, inline: !bytes.Contains(raw, []byte("\n")),
		spaced: bytes.Contains(raw, []byte(", ")) || bytes.Contains(raw, []byte(": "))}
	for dec.More() {
		var key string
		if n.kind == '{' {
			t, err := dec.Token()
			if err != nil {
				return nil, err
			}
			key, _ = t.(string)
		}
		var sub json.RawMessage
		if err := dec.Decode(&sub); err != nil {
			return nil, err
		}
		child, err := parse(sub)
		if err != nil {
			return nil, err
		}
		if n.kind == '[' {
			n.items = append(n.items, child)
			continue
		}
		if _, dup := n.fields[key]; !dup {
			n.keys = append(n.keys, key)
		}
		n.fields[key] = child
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	return n, nil
}

// fromValue is the node of a decoded value (json.Number for numbers): an
// object's keys sorted, as encoding/json writes them.
func fromValue(v any) *node {
	switch v := v.(type) {
	case map[string]any:
		n := &node{kind: '{', fields: map[string]*node{}}
		for _, k := range slices.Sorted(maps.Keys(v)) {
			n.keys = append(n.keys, k)
			n.fields[k] = fromValue(v[k])
		}
		return n
	case []any:
		n := &node{kind: '['}
		for _, x := range v {
			n.items = append(n.items, fromValue(x))
		}
		return n
	}
	return &node{raw: marshal(v)}
}

// merge is orig brought to the value v: the keys v keeps stay where orig
// has them and new ones follow, sorted; a scalar equal to v keeps its
// text; a string of JSON text that v gives as an object or a list stays
// JSON text, merged the same way (the dashboard tool's visState).
func merge(orig *node, v any) *node {
	switch v := v.(type) {
	case map[string]any:
		if orig.kind != '{' {
			return mergeText(orig, v)
		}
		n := &node{kind: '{', fields: map[string]*node{}, inline: orig.inline, spaced: orig.spaced}
		for _, k := range orig.keys {
			if x, ok := v[k]; ok {
				n.keys = append(n.keys, k)
				n.fields[k] = merge(orig.fields[k], x)
			}
		}
		for _, k := range slices.Sorted(maps.Keys(v)) {
			if _, ok := orig.fields[k]; !ok {
				n.keys = append(n.keys, k)
				n.fields[k] = fromValue(v[k])
			}
		}
		return n
	case []any:
		if orig.kind != '[' {
			return mergeText(orig, v)
		}
		n := &node{kind: '[', inline: orig.inline, spaced: orig.spaced}
		for i, x := range v {
			if i < len(orig.items) {
				n.items = append(n.items, merge(orig.items[i], x))
			} else {
				n.items = append(n.items, fromValue(x))
			}
		}
		return n
	}
	if orig.kind == 0 && equal(decode(orig.raw), v) {
		return orig
	}
	return fromValue(v)
}

// mergeText merges v into the JSON text orig holds, when orig is a
// string of JSON; otherwise v replaces it.
func mergeText(orig *node, v any) *node {
	var text string
	if orig.kind == 0 && json.Unmarshal(orig.raw, &text) == nil {
		if inner, err := parse([]byte(text)); err == nil {
			return &node{raw: marshal(string(merge(inner, v).encode("")))}
		}
	}
	return fromValue(v)
}

// encode writes n indented by indent at each level, as encoding/json's
// MarshalIndent does, or on one line for ""; an object or a list that
// was on one line stays on one (with ", " and ": " when it had them).
func (n *node) encode(indent string) []byte {
	var b bytes.Buffer
	n.write(&b, indent, 0, false)
	return b.Bytes()
}

func (n *node) write(b *bytes.Buffer, indent string, level int, spaced bool) {
	if n.kind == 0 {
		b.Write(n.raw)
		return
	}
	if n.inline {
		indent, spaced = "", n.spaced
	}
	size, closing := len(n.items), byte(']')
	if n.kind == '{' {
		size, closing = len(n.keys), '}'
	}
	b.WriteByte(n.kind)
	for i := range size {
		if i > 0 {
			b.WriteByte(',')
			if spaced && indent == "" {
				b.WriteByte(' ')
			}
		}
		if indent != "" {
			b.WriteString("\n" + strings.Repeat(indent, level+1))
		}
		var child *node
		if n.kind == '{' {
			b.Write(marshal(n.keys[i]))
			b.WriteByte(':')
			if indent != "" || spaced {
				b.WriteByte(' ')
			}
			child = n.fields[n.keys[i]]
		} else {
			child = n.items[i]
		}
		child.write(b, indent, level+1, spaced)
	}
	if indent != "" && size > 0 {
		b.WriteString("\n" + strings.Repeat(indent, level))
	}
	b.WriteByte(closing)
}

// rewriteJSON is the JSON text src brought to the value v, in src's
// layout: its key order, its indentation (compact when src is on one
// line) and its final newline.
func rewriteJSON(src []byte, v any) ([]byte, error) {
	orig, err := parse(src)
	if err != nil {
		return nil, err
	}
	out := merge(orig, v).encode(indentOf(src))
	if bytes.HasSuffix(src, []byte("\n")) {
		out = append(out, '\n')
	}
	return out, nil
}

// indentOf is the indentation of src's first indented line: "" when src
// is on one line, two spaces when no line is indented.
func indentOf(src []byte) string {
	lines := bytes.Split(bytes.TrimSpace(src), []byte("\n"))
	if len(lines) < 2 {
		return ""
	}
	for _, l := range lines[1:] {
		if t := bytes.TrimLeft(l, " \t"); len(t) < len(l) {
			return string(l[:len(l)-len(t)])
		}
	}
	return "  "
}

// marshal is v as JSON, with <, > and & as they are.
func marshal(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// decode is JSON text as a value, numbers as json.Number; nil when it is
// not JSON.
func decode(raw []byte) any {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil
	}
	return v
}

// equal reports whether two decoded values are the same JSON value
// (numbers by value).
func equal(a, b any) bool {
	return bytes.Equal(canonical(a), canonical(b))
}

// canonical is v's JSON with numbers in one form.
func canonical(v any) []byte {
	var walk func(any) any
	walk = func(v any) any {
		switch v := v.(type) {
		case json.Number:
			f, err := v.Float64()
			if err != nil {
				return v.String()
			}
			return f
		case map[string]any:
			m := make(map[string]any, len(v))
			for k, x := range v {
				m[k] = walk(x)
			}
			return m
		case []any:
			l := make([]any, len(v))
			for i, x := range v {
				l[i] = walk(x)
			}
			return l
		}
		return v
	}
	return marshal(walk(v))
}

// Settled reports whether a change's live and declared values are the
// same (an update may still write marks, which are no value of the
// specs).
func Settled(c *plans.Change) bool { return equal(decode(c.Before.JSON()), decode(c.After.JSON())) }
