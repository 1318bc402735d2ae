package jsonvalue

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Orders decodes JSON and remembers the written key order of every object
// it returned. Decoded objects are Go maps, which forget the order; but
// Python keeps it, and Ragas compares a call's nested arguments by their
// str(), so a reader that decodes a whole record (a log line, a span
// attribute) before it knows which part holds a call's arguments asks
// Orders afterwards, by the map itself.
//
// The zero value is ready to use. Reset forgets what was decoded: a reader
// calls it once per record, so that a long file does not pile up orders.
// An Orders is not safe for concurrent use.
type Orders struct {
	objs map[uintptr]ordered
}

type ordered struct {
	// m holds the map, so that its address is not reused by another map
	// while Orders knows it.
	m    map[string]any
	keys []string
}

// Decode decodes data as one JSON value, numbers as json.Number, as
// encoding/json with UseNumber does, and notes the key order of each
// object of two keys or more in it. Text after the value is an error.
func (o *Orders) Decode(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	w := walker{data: data, o: o}
	w.value(v)
	w.ws()
	if w.i < len(data) {
		return nil, fmt.Errorf("unexpected text after the JSON value at offset %d", w.i)
	}
	return v, nil
}

// DecodeString is Decode of JSON text held in a string.
func (o *Orders) DecodeString(text string) (any, error) { return o.Decode([]byte(text)) }

// Note records the key order of an object built in code from something
// ordered (an OTLP kvlist, say), as if Decode had read it. Keys must be
// m's keys, each once; otherwise nothing is recorded.
func (o *Orders) Note(m map[string]any, keys []string) {
	if len(m) < 2 || len(keys) != len(m) {
		return
	}
	for i, k := range keys {
		if _, ok := m[k]; !ok || slices.Contains(keys[:i], k) {
			return
		}
	}
	if o.objs == nil {
		o.objs = map[uintptr]ordered{}
	}
	o.objs[reflect.ValueOf(m).Pointer()] = ordered{m: m, keys: slices.Clone(keys)}
}

// Reset forgets every object decoded so far.
func (o *Orders) Reset() { clear(o.objs) }

// Keys returns the keys of m in the order they were written, when m is an
// object this Orders decoded and still holds exactly those keys; else
// they are sorted, as encoding/json writes a map.
func (o *Orders) Keys(m map[string]any) []string {
	if keys, ok := o.lookup(m); ok {
		return keys
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func (o *Orders) lookup(m map[string]any) ([]string, bool) {
	if o == nil || len(m) < 2 || o.objs == nil {
		return nil, false
	}
	e, ok := o.objs[reflect.ValueOf(m).Pointer()]
	if !ok || len(e.keys) != len(m) {
		return nil, false
	}
	for _, k := range e.keys {
		if _, ok := m[k]; !ok {
			return nil, false
		}
	}
	return e.keys, true
}

// KeyOrder returns the written order of the keys of each object nested in
// args (not of args itself, whose keys are argument names), by JSON
// Pointer below args: the form of agenteval.KeyOrderOf, which finds the
// same from the text. It returns nil when no nested object's order is
// known, args included when it was not decoded by this Orders.
func (o *Orders) KeyOrder(args map[string]any) map[string][]string {
	if o == nil || len(o.objs) == 0 {
		return nil
	}
	out := map[string][]string{}
	for k, v := range args {
		o.nested(v, "/"+escapePointer(k), out)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

func (o *Orders) nested(v any, path string, out map[string][]string) {
	switch x := v.(type) {
	case map[string]any:
		if keys, ok := o.lookup(x); ok {
			out[path] = slices.Clone(keys)
		}
		for k, e := range x {
			o.nested(e, path+"/"+escapePointer(k), out)
		}
	case []any:
		for i, e := range x {
			o.nested(e, path+"/"+strconv.Itoa(i), out)
		}
	}
}

func escapePointer(k string) string {
	if !strings.ContainsAny(k, "~/") {
		return k
	}
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(k)
}

// Text is v as a tool message or a log holds it: a string as itself, a
// number as written, anything else as compact JSON with its objects' keys
// in written order (sorted where the order is not known), and <, > and &
// not escaped, since they are text to a model, not HTML.
func (o *Orders) Text(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case json.Number:
		return string(x)
	}
	var b bytes.Buffer
	if err := o.write(&b, v); err != nil {
		return fmt.Sprint(v)
	}
	return b.String()
}

func (o *Orders) write(b *bytes.Buffer, v any) error {
	switch x := v.(type) {
	case map[string]any:
		b.WriteByte('{')
		for i, k := range o.Keys(x) {
			if i > 0 {
				b.WriteByte(',')
			}
			writeString(b, k)
			b.WriteByte(':')
			if err := o.write(b, x[k]); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := o.write(b, e); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case string:
		writeString(b, x)
	default:
		var e bytes.Buffer
		enc := json.NewEncoder(&e)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			return err
		}
		b.Write(bytes.TrimRight(e.Bytes(), "\n"))
	}
	return nil
}

func writeString(b *bytes.Buffer, s string) {
	var e bytes.Buffer
	enc := json.NewEncoder(&e)
	enc.SetEscapeHTML(false)
	enc.Encode(s) // a string always encodes
	b.Write(bytes.TrimRight(e.Bytes(), "\n"))
}

// walker goes over JSON text that encoding/json has just decoded into v,
// in step with v, to note the order of each object's keys. The text is
// known to be valid, so it only has to find where things are.
type walker struct {
	data []byte
	i    int
	o    *Orders
}

func (w *walker) ws() {
	for w.i < len(w.data) {
		switch w.data[w.i] {
		case ' ', '\t', '\r', '\n':
			w.i++
		default:
			return
		}
	}
}

func (w *walker) value(v any) {
	w.ws()
	if w.i >= len(w.data) {
		return
	}
	switch w.data[w.i] {
	case '{':
		w.i++
		m, _ := v.(map[string]any)
		var keys []string
		for {
			w.ws()
			if w.i >= len(w.data) {
				return
			}
			if w.data[w.i] == '}' {
				w.i++
				break
			}
			if w.data[w.i] == ',' {
				w.i++
				continue
			}
			k := w.key()
			w.ws()
			w.i++ // the colon
			w.value(m[k])
			// A key written twice keeps its first place and its last
			// value, as in a Python dict.
			if !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
		if m != nil && len(keys) > 1 && len(keys) == len(m) {
			if w.o.objs == nil {
				w.o.objs = map[uintptr]ordered{}
			}
			w.o.objs[reflect.ValueOf(m).Pointer()] = ordered{m: m, keys: keys}
		}
	case '[':
		w.i++
		l, _ := v.([]any)
		for n := 0; ; {
			w.ws()
			if w.i >= len(w.data) {
				return
			}
			switch w.data[w.i] {
			case ']':
				w.i++
				return
			case ',':
				w.i++
				continue
			}
			var e any
			if n < len(l) {
				e = l[n]
			}
			w.value(e)
			n++
		}
	case '"':
		w.skipString()
	default:
		for w.i < len(w.data) {
			switch w.data[w.i] {
			case ',', '}', ']', ' ', '\t', '\r', '\n':
				return
			}
			w.i++
		}
	}
}

// key reads an object key as encoding/json decodes it.
func (w *walker) key() string {
	start := w.i
	plain := w.skipString()
	raw := w.data[start:w.i]
	if plain && len(raw) >= 2 {
		return string(raw[1 : len(raw)-1])
	}
	var k string
	json.Unmarshal(raw, &k)
	return k
}

// skipString moves past a string; plain says it had no escapes and only
// ASCII, so its bytes are its value.
func (w *walker) skipString() (plain bool) {
	plain = true
	w.i++ // the opening quote
	for w.i < len(w.data) {
		c := w.data[w.i]
		switch {
		case c == '\\':
			plain = false
			w.i += 2
			continue
		case c == '"':
			w.i++
			return plain
		case c >= 0x80:
			plain = false
		}
		w.i++
	}
	return plain
}
