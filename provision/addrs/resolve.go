package addrs

import (
	"fmt"
	"reflect"
	"sync"
)

// Resolve reads, with the set's kinds, every address that JSON decoded
// into v (a pointer): an Addr's kind is known only to a Set, which JSON
// decoding cannot be handed, so UnmarshalText keeps the text and Resolve
// parses it, as ParseTarget does. It walks only the types that can hold
// an Addr, so a plan's request bodies are never visited.
func (set Set) Resolve(v any) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return fmt.Errorf("addrs: Resolve of %T, not a pointer", v)
	}
	return set.resolve(rv.Elem())
}

var addrType = reflect.TypeFor[Addr]()

// resolve resolves the addresses in v, which can be set.
func (set Set) resolve(v reflect.Value) error {
	t := v.Type()
	if !holdsAddr(t) {
		return nil
	}
	switch t.Kind() {
	case reflect.Struct:
		if t == addrType {
			a := v.Addr().Interface().(*Addr)
			if !a.pending {
				return nil
			}
			parsed, err := set.ParseTarget(a.text)
			if err != nil {
				return err
			}
			*a = parsed
			return nil
		}
		for i := range t.NumField() {
			if decoded(t.Field(i)) {
				if err := set.resolve(v.Field(i)); err != nil {
					return err
				}
			}
		}
	case reflect.Pointer:
		if !v.IsNil() {
			return set.resolve(v.Elem())
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			if err := set.resolve(v.Index(i)); err != nil {
				return err
			}
		}
	case reflect.Map:
		return set.resolveMap(v)
	}
	return nil
}

// resolveMap resolves the addresses in a map's keys and values, which are
// set again.
func (set Set) resolveMap(v reflect.Value) error {
	if v.IsNil() {
		return nil
	}
	type entry struct{ k, v reflect.Value }
	var entries []entry
	for it := v.MapRange(); it.Next(); {
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		k.Set(it.Key())
		e.Set(it.Value())
		if err := set.resolve(k); err != nil {
			return err
		}
		if err := set.resolve(e); err != nil {
			return err
		}
		entries = append(entries, entry{k, e})
	}
	v.Clear()
	for _, e := range entries {
		if v.MapIndex(e.k).IsValid() {
			return fmt.Errorf("%v is written twice", e.k.Interface())
		}
		v.SetMapIndex(e.k, e.v)
	}
	return nil
}

// decoded reports whether JSON decodes into the field f: an exported
// one, or the promoted fields of an embedded struct.
func decoded(f reflect.StructField) bool {
	return f.IsExported() || f.Anonymous && f.Type.Kind() == reflect.Struct
}

var holds sync.Map // reflect.Type → bool

// holdsAddr reports whether a value of t can hold an Addr.
func holdsAddr(t reflect.Type) bool {
	if h, ok := holds.Load(t); ok {
		return h.(bool)
	}
	h := holdsAddrIn(t, map[reflect.Type]bool{})
	holds.Store(t, h)
	return h
}

// holdsAddrIn is holdsAddr, seen the types being looked into (a type
// that holds itself holds an Addr only through another field).
func holdsAddrIn(t reflect.Type, seen map[reflect.Type]bool) bool {
	if t == addrType {
		return true
	}
	if seen[t] {
		return false
	}
	seen[t] = true
	switch t.Kind() {
	case reflect.Struct:
		for i := range t.NumField() {
			if f := t.Field(i); decoded(f) && holdsAddrIn(f.Type, seen) {
				return true
			}
		}
	case reflect.Pointer, reflect.Slice, reflect.Array:
		return holdsAddrIn(t.Elem(), seen)
	case reflect.Map:
		return holdsAddrIn(t.Key(), seen) || holdsAddrIn(t.Elem(), seen)
	}
	return false
}
