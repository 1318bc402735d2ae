package redact

import (
	"encoding/json"
	"reflect"
)

// Value hides known secrets in every string reachable from v, in place: v
// is a pointer, such as a result about to be written, and the strings of
// its structs, slices, maps (their keys too) and interfaces are rewritten.
// It walks the value itself rather than a list of known fields, so that a
// field or a grader's details added later cannot slip past it.
//
// Left alone are unexported fields, which no encoder writes, and string
// types of their own (a verdict, a role): enumerations whose values the
// program chose, not text an agent or a model wrote. A value of a type
// that encodes itself (json.Marshaler) is redacted in its encoded form,
// since its fields may not be what it writes. v must hold no cycles.
func Value(v any) {
	if v == nil || !Any() {
		return
	}
	redactIn(reflect.ValueOf(v))
}

var (
	plainString = reflect.TypeFor[string]()
	marshaler   = reflect.TypeFor[json.Marshaler]()
)

// redactIn hides secrets in v, which is settable or a reference (a
// pointer, slice or map) whose contents are.
func redactIn(v reflect.Value) {
	switch v.Kind() {
	case reflect.String:
		if v.Type() == plainString && v.CanSet() {
			if s := v.String(); s != "" {
				if r := String(s); r != s {
					v.SetString(r)
				}
			}
		}
	case reflect.Pointer:
		if !v.IsNil() {
			redactIn(v.Elem())
		}
	case reflect.Interface:
		if !v.IsNil() && v.CanSet() {
			if n, ok := redactedContent(v.Elem()); ok {
				v.Set(n)
			}
		}
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			if t.Field(i).IsExported() {
				redactIn(v.Field(i))
			}
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return // bytes, not text
		}
		for i := range v.Len() {
			redactIn(v.Index(i))
		}
	case reflect.Array:
		for i := range v.Len() {
			redactIn(v.Index(i))
		}
	case reflect.Map:
		redactMap(v)
	}
}

// redactMap hides secrets in a map's keys and elements. Neither can be set
// in place, so the changed ones are put back once the walk is over.
func redactMap(m reflect.Value) {
	if m.IsNil() {
		return
	}
	type change struct{ old, key, elem reflect.Value }
	var changes []change
	for it := m.MapRange(); it.Next(); {
		k, e := it.Key(), it.Value()
		nk, kc := redacted(k)
		ne, ec := redacted(e)
		if kc || ec {
			changes = append(changes, change{k, nk, ne})
		}
	}
	for _, c := range changes {
		if c.key.Interface() != c.old.Interface() {
			m.SetMapIndex(c.old, reflect.Value{})
		}
		m.SetMapIndex(c.key, c.elem)
	}
}

// redacted hides secrets in a value that cannot be set in place (a map's
// key or element, an interface's content) and says whether the returned
// value is a new one to put back. Pointers, slices and maps are changed in
// place and never new.
func redacted(v reflect.Value) (reflect.Value, bool) {
	switch v.Kind() {
	case reflect.String:
		if v.Type() != plainString {
			return v, false
		}
		s := v.String()
		if r := String(s); r != s {
			return reflect.ValueOf(r), true
		}
		return v, false
	case reflect.Interface:
		if v.IsNil() {
			return v, false
		}
		n, ok := redactedContent(v.Elem())
		if !ok {
			return v, false
		}
		w := reflect.New(v.Type()).Elem()
		w.Set(n)
		return w, true
	case reflect.Struct, reflect.Array:
		// Copied only when it holds a secret: a value written already is
		// walked again by every writer, and must not be written to then,
		// as others may be reading it.
		if !holds(v) {
			return v, false
		}
		c := reflect.New(v.Type()).Elem()
		c.Set(v)
		redactIn(c)
		return c, true
	}
	redactIn(v)
	return v, false
}

// redactedContent is redacted for the content of an interface, which may
// also be replaced by a value of another type.
func redactedContent(v reflect.Value) (reflect.Value, bool) {
	if v.Type().Implements(marshaler) || v.Kind() != reflect.Pointer && reflect.PointerTo(v.Type()).Implements(marshaler) {
		return redactedJSON(v)
	}
	return redacted(v)
}

// redactedJSON redacts a value that encodes itself through its encoding:
// when that holds a secret, the value is replaced by its decoded JSON with
// the secrets hidden, which encodes the same but for them.
func redactedJSON(v reflect.Value) (reflect.Value, bool) {
	if v.Kind() == reflect.Pointer && v.IsNil() {
		return v, false
	}
	b, err := json.Marshal(v.Interface())
	if err != nil {
		return v, false
	}
	var generic any
	if json.Unmarshal(b, &generic) != nil {
		return v, false
	}
	before, _ := json.Marshal(generic)
	redactIn(reflect.ValueOf(&generic))
	after, _ := json.Marshal(generic)
	if string(before) == string(after) {
		return v, false
	}
	if generic == nil {
		return reflect.Zero(v.Type()), true
	}
	return reflect.ValueOf(generic), true
}

// holds reports whether redacting v would change it, without changing
// anything.
func holds(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.String:
		return v.Type() == plainString && v.Len() > 0 && String(v.String()) != v.String()
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return false
		}
		if v.Kind() == reflect.Interface {
			if e := v.Elem(); e.Type().Implements(marshaler) || e.Kind() != reflect.Pointer && reflect.PointerTo(e.Type()).Implements(marshaler) {
				_, changed := redactedJSON(e)
				return changed
			}
		}
		return holds(v.Elem())
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			if t.Field(i).IsExported() && holds(v.Field(i)) {
				return true
			}
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return false
		}
		fallthrough
	case reflect.Array:
		for i := range v.Len() {
			if holds(v.Index(i)) {
				return true
			}
		}
	case reflect.Map:
		for it := v.MapRange(); it.Next(); {
			if holds(it.Key()) || holds(it.Value()) {
				return true
			}
		}
	}
	return false
}
