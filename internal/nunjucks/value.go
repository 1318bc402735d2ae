package nunjucks

import (
	"encoding/json"
	"math"
	"math/big"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// Values inside a render are JavaScript's, as Nunjucks has them: nil is
// null, undefinedValue is undefined, numbers are float64, lists are []any,
// mappings are *Object (ordered as a JavaScript object orders its keys),
// a Lookup is a mapping read a key at a time, and *callable is a function.

type undefinedType struct{}

var undefinedValue = undefinedType{}

// Object is a mapping with the key order JavaScript gives an object: keys
// that are array indexes first, in numeric order, then the others in the
// order they were set.
type Object struct {
	keys []string
	vals map[string]any
}

// NewObject returns an empty Object.
func NewObject() *Object { return &Object{vals: map[string]any{}} }

// Set sets key to v (converted as Render converts its variables).
func (o *Object) Set(key string, v any) { o.set(key, fromGo(v)) }

func (o *Object) set(key string, v any) {
	if _, ok := o.vals[key]; !ok {
		o.keys = append(o.keys, key)
	}
	o.vals[key] = v
}

func (o *Object) get(key string) (any, bool) {
	v, ok := o.vals[key]
	return v, ok
}

// Keys is the object's keys in JavaScript's order.
func (o *Object) Keys() []string {
	var idx, rest []string
	for _, k := range o.keys {
		if isArrayIndex(k) {
			idx = append(idx, k)
		} else {
			rest = append(rest, k)
		}
	}
	sort.SliceStable(idx, func(i, j int) bool {
		a, _ := strconv.ParseUint(idx[i], 10, 32)
		b, _ := strconv.ParseUint(idx[j], 10, 32)
		return a < b
	})
	return append(idx, rest...)
}

func isArrayIndex(k string) bool {
	if k == "" || len(k) > 10 || k != "0" && k[0] == '0' {
		return false
	}
	n, err := strconv.ParseUint(k, 10, 32)
	return err == nil && n < math.MaxUint32
}

// Lookup is a mapping whose keys are read one at a time, such as the
// environment: {{ env.HOME }} calls it with "HOME". It lists no keys, so
// a template cannot dump or loop over what it holds.
type Lookup func(key string) (any, bool)

type callable struct {
	name string
	fn   func(r *renderer, at pos, args []any, kw *Object) any
}

// fromGo converts a Go value into the values a render works with.
func fromGo(v any) any {
	switch x := v.(type) {
	case nil:
		return nil
	case undefinedType, *callable:
		return x
	case bool:
		return x
	case string:
		return x
	case float64:
		return x
	case float32:
		return float64(x)
	case int:
		return float64(x)
	case int64:
		return float64(x)
	case int32:
		return float64(x)
	case uint64:
		return float64(x)
	case json.Number:
		f, err := x.Float64()
		if err != nil {
			return x.String()
		}
		return f
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = fromGo(e)
		}
		return out
	case []string:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = e
		}
		return out
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys) // a Go map has no order; sorted is at least stable
		o := NewObject()
		for _, k := range keys {
			o.set(k, fromGo(x[k]))
		}
		return o
	case map[string]string:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = e
		}
		return fromGo(m)
	case *Object:
		return x
	case Lookup:
		return x
	case func(string) (any, bool):
		return Lookup(x)
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Slice, reflect.Array:
		out := make([]any, rv.Len())
		for i := range out {
			out[i] = fromGo(rv.Index(i).Interface())
		}
		return out
	case reflect.Int, reflect.Int8, reflect.Int16:
		return float64(rv.Int())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32:
		return float64(rv.Uint())
	}
	return undefinedValue
}

// typeOf is JavaScript's typeof, with "null" for null.
func typeOf(v any) string {
	switch v.(type) {
	case undefinedType:
		return "undefined"
	case nil:
		return "null"
	case bool:
		return "boolean"
	case float64:
		return "number"
	case string:
		return "string"
	case *callable:
		return "function"
	}
	return "object"
}

func isJSSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0xa0, 0x1680, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000, 0xfeff:
		return true
	}
	return r >= 0x2000 && r <= 0x200a
}

// toString is JavaScript's String(v).
func toString(v any) string {
	switch x := v.(type) {
	case undefinedType:
		return "undefined"
	case nil:
		return "null"
	case bool:
		if x {
			return "true"
		}
		return "false"
	case float64:
		return numberString(x)
	case string:
		return x
	case []any:
		var b strings.Builder
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			if e != nil && e != undefinedValue {
				b.WriteString(toString(e))
			}
		}
		return b.String()
	case *callable:
		return "function " + x.name + "() { [native code] }"
	}
	return "[object Object]"
}

// outputString is what {{ v }} writes: nothing for null and undefined.
func outputString(v any) string {
	if v == nil || v == undefinedValue {
		return ""
	}
	return toString(v)
}

// numberString formats a number as JavaScript's Number.prototype.toString.
func numberString(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case f == 0:
		return "0"
	}
	sign := ""
	if f < 0 {
		sign, f = "-", -f
	}
	// Shortest digits that read back as f, and the exponent.
	e := strconv.FormatFloat(f, 'e', -1, 64)
	mant, exp, _ := strings.Cut(e, "e")
	digits := strings.Replace(mant, ".", "", 1)
	x, _ := strconv.Atoi(exp)
	n := x + 1 // the decimal point sits after n digits
	k := len(digits)
	switch {
	case k <= n && n <= 21:
		return sign + digits + strings.Repeat("0", n-k)
	case 0 < n && n <= 21:
		return sign + digits[:n] + "." + digits[n:]
	case -6 < n && n <= 0:
		return sign + "0." + strings.Repeat("0", -n) + digits
	}
	es := "+"
	if n-1 < 0 {
		es = "-"
	}
	ex := strconv.Itoa(abs(n - 1))
	if k == 1 {
		return sign + digits + "e" + es + ex
	}
	return sign + digits[:1] + "." + digits[1:] + "e" + es + ex
}

func abs(i int) int {
	if i < 0 {
		return -i
	}
	return i
}

// toNumber is JavaScript's Number(v).
func toNumber(v any) float64 {
	switch x := v.(type) {
	case undefinedType:
		return math.NaN()
	case nil:
		return 0
	case bool:
		if x {
			return 1
		}
		return 0
	case float64:
		return x
	case string:
		return stringToNumber(x)
	case []any:
		return stringToNumber(toString(x))
	}
	return math.NaN()
}

func stringToNumber(s string) float64 {
	s = strings.TrimFunc(s, isJSSpace)
	if s == "" {
		return 0
	}
	switch s {
	case "Infinity", "+Infinity":
		return math.Inf(1)
	case "-Infinity":
		return math.Inf(-1)
	}
	if len(s) > 2 && s[0] == '0' {
		base := map[byte]int{'x': 16, 'X': 16, 'o': 8, 'O': 8, 'b': 2, 'B': 2}[s[1]]
		if base != 0 {
			n, ok := new(big.Int).SetString(s[2:], base)
			if !ok {
				return math.NaN()
			}
			f, _ := new(big.Float).SetInt(n).Float64()
			return f
		}
	}
	if !decimalLiteral(s) {
		return math.NaN()
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !math.IsInf(f, 0) {
		return math.NaN()
	}
	return f
}

// decimalLiteral says whether s is a StrDecimalLiteral without its
// Infinity: [+-] digits [. digits] [e [+-] digits], with digits on at
// least one side of the point.
func decimalLiteral(s string) bool { return s != "" && decimalPrefix(s) == len(s) }

// truthy is JavaScript's Boolean(v).
func truthy(v any) bool {
	switch x := v.(type) {
	case undefinedType, nil:
		return false
	case bool:
		return x
	case float64:
		return x != 0 && !math.IsNaN(x)
	case string:
		return x != ""
	}
	return true
}

// toPrimitive turns lists and objects into their text, as JavaScript
// does before it adds or compares them.
func toPrimitive(v any) any {
	switch v.(type) {
	case undefinedType, nil, bool, float64, string:
		return v
	}
	return toString(v)
}

// sameObject says whether two objects are the same one.
func sameObject(a, b any) bool {
	switch x := a.(type) {
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		return len(x) == 0 && x == nil && y == nil || len(x) > 0 && &x[0] == &y[0]
	case *Object:
		y, ok := b.(*Object)
		return ok && x == y
	case *callable:
		y, ok := b.(*callable)
		return ok && x == y
	case Lookup:
		y, ok := b.(Lookup)
		return ok && reflect.ValueOf(x).Pointer() == reflect.ValueOf(y).Pointer()
	}
	return false
}

// strictEqual is JavaScript's ===.
func strictEqual(a, b any) bool {
	ta, tb := typeOf(a), typeOf(b)
	if ta != tb {
		return false
	}
	switch ta {
	case "undefined", "null":
		return true
	case "boolean":
		return a.(bool) == b.(bool)
	case "number":
		return a.(float64) == b.(float64)
	case "string":
		return a.(string) == b.(string)
	}
	return sameObject(a, b)
}

// looseEqual is JavaScript's ==.
func looseEqual(a, b any) bool {
	ta, tb := typeOf(a), typeOf(b)
	if ta == tb {
		return strictEqual(a, b)
	}
	nullish := func(t string) bool { return t == "undefined" || t == "null" }
	switch {
	case nullish(ta) || nullish(tb):
		return nullish(ta) && nullish(tb)
	case ta == "number" && tb == "string":
		return a.(float64) == stringToNumber(b.(string))
	case ta == "string" && tb == "number":
		return stringToNumber(a.(string)) == b.(float64)
	case ta == "boolean":
		return looseEqual(toNumber(a), b)
	case tb == "boolean":
		return looseEqual(a, toNumber(b))
	case ta == "object" || ta == "function":
		return looseEqual(toPrimitive(a), b)
	case tb == "object" || tb == "function":
		return looseEqual(a, toPrimitive(b))
	}
	return false
}

// compareJS compares as JavaScript's < does: strings by UTF-16 code
// units, anything else as numbers. ok is false when either is NaN.
func compareJS(a, b any) (c int, ok bool) {
	pa, pb := toPrimitive(a), toPrimitive(b)
	sa, aStr := pa.(string)
	sb, bStr := pb.(string)
	if aStr && bStr {
		return compareUTF16(sa, sb), true
	}
	x, y := toNumber(pa), toNumber(pb)
	if math.IsNaN(x) || math.IsNaN(y) {
		return 0, false
	}
	switch {
	case x < y:
		return -1, true
	case x > y:
		return 1, true
	}
	return 0, true
}

func compareUTF16(a, b string) int {
	ua, ub := utf16.Encode([]rune(a)), utf16.Encode([]rune(b))
	for i := 0; i < len(ua) && i < len(ub); i++ {
		if ua[i] != ub[i] {
			if ua[i] < ub[i] {
				return -1
			}
			return 1
		}
	}
	switch {
	case len(ua) < len(ub):
		return -1
	case len(ua) > len(ub):
		return 1
	}
	return 0
}

// jsLength is a string's length in UTF-16 code units, as JavaScript
// counts it.
func jsLength(s string) int {
	n := 0
	for _, r := range s {
		n++
		if r > 0xffff {
			n++
		}
	}
	return n
}

// stringify is JSON.stringify(v, null, indent); ok is false where
// JavaScript returns undefined.
func stringify(v any, indent string) (string, bool) {
	var b strings.Builder
	ok := writeJSON(&b, v, indent, "")
	return b.String(), ok
}

func writeJSON(b *strings.Builder, v any, indent, prefix string) bool {
	switch x := v.(type) {
	case undefinedType, *callable:
		return false
	case nil:
		b.WriteString("null")
	case bool, string:
		if s, ok := x.(string); ok {
			writeJSONString(b, s)
		} else {
			b.WriteString(toString(x))
		}
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			b.WriteString("null")
		} else {
			b.WriteString(numberString(x))
		}
	case []any:
		if len(x) == 0 {
			b.WriteString("[]")
			return true
		}
		inner := prefix + indent
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			if indent != "" {
				b.WriteString("\n" + inner)
			}
			if !writeJSON(b, e, indent, inner) {
				b.WriteString("null")
			}
		}
		if indent != "" {
			b.WriteString("\n" + prefix)
		}
		b.WriteByte(']')
	case *loopInfo:
		return writeJSON(b, x.object(), indent, prefix)
	case *Object:
		inner := prefix + indent
		b.WriteByte('{')
		n := 0
		for _, k := range x.Keys() {
			e := x.vals[k]
			if e == undefinedValue {
				continue
			}
			if _, fn := e.(*callable); fn {
				continue
			}
			if n > 0 {
				b.WriteByte(',')
			}
			n++
			if indent != "" {
				b.WriteString("\n" + inner)
			}
			writeJSONString(b, k)
			b.WriteByte(':')
			if indent != "" {
				b.WriteByte(' ')
			}
			writeJSON(b, e, indent, inner)
		}
		if n > 0 && indent != "" {
			b.WriteString("\n" + prefix)
		}
		b.WriteByte('}')
	default: // a Lookup: nothing it holds is listed
		b.WriteString("{}")
	}
	return true
}

func writeJSONString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		i += n
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if r < 0x20 {
				b.WriteString(`\u00`)
				b.WriteByte("0123456789abcdef"[r>>4])
				b.WriteByte("0123456789abcdef"[r&0xf])
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
}

// parseJSON is JSON.parse, with objects in their key order.
func parseJSON(s string) (any, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	v, err := readJSON(dec)
	if err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errTrailing
	}
	return v, nil
}

type jsonError string

func (e jsonError) Error() string { return string(e) }

const errTrailing = jsonError("text after the JSON value")

func readJSON(dec *json.Decoder) (any, error) {
	t, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch x := t.(type) {
	case json.Delim:
		switch x {
		case '[':
			out := []any{}
			for dec.More() {
				v, err := readJSON(dec)
				if err != nil {
					return nil, err
				}
				out = append(out, v)
			}
			_, err := dec.Token()
			return out, err
		case '{':
			o := NewObject()
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				v, err := readJSON(dec)
				if err != nil {
					return nil, err
				}
				o.set(kt.(string), v)
			}
			_, err := dec.Token()
			return o, err
		}
	case json.Number:
		f, _ := x.Float64()
		return f, nil
	}
	return t, nil
}

// upperJS and lowerJS are toUpperCase and toLowerCase; Go's case maps are
// Unicode's simple ones, which differ from JavaScript's only for a few
// letters such as ß.
func upperJS(s string) string { return strings.ToUpper(s) }
func lowerJS(s string) string { return strings.ToLower(s) }

// isWordRune is JavaScript's \w.
func isWordRune(r rune) bool {
	return r == '_' || r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r))
}
