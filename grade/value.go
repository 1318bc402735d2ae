package grade

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"sort"
	"strconv"
	"strings"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/internal/jsonvalue"
)

// number returns v as a float64 when it is a JSON number in any Go form.
func number(v any) (float64, bool) { return jsonvalue.Number(v) }

// show renders a value compactly for evidence text.
func show(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	s := string(b)
	if len(s) > 120 {
		s = s[:117] + "..."
	}
	return s
}

// pyStr renders a decoded JSON value the way Python's str() renders the
// value json.loads would give: strings bare, other values as repr. Ragas's
// tool_call_accuracy compares arguments by str(), so this is what makes our
// numbers match it: str(2) != str(2.0), str(True) == "True". Nested dicts
// have their keys sorted; pyStrOrdered prints them in written order, as
// Python does.
func pyStr(v any) string { return pyStrOrdered(v, nil, "") }

// pyStrOrdered is pyStr with the written order of nested objects' keys
// (agenteval.KeyOrderOf), v being the value at JSON Pointer path. An
// object without a recorded order, or whose recorded keys are not its
// keys, is printed with its keys sorted.
func pyStrOrdered(v any, order map[string][]string, path string) string {
	if s, ok := v.(string); ok {
		return s
	}
	var b strings.Builder
	pyRepr(&b, v, order, path)
	return b.String()
}

func pyRepr(b *strings.Builder, v any, order map[string][]string, path string) {
	if it, ok := jsonvalue.IntegerText(v); ok {
		if it == "-0" {
			it = "0"
		}
		b.WriteString(it)
		return
	}
	if f, ok := number(v); ok {
		b.WriteString(pyFloat(f))
		return
	}
	switch x := v.(type) {
	case nil:
		b.WriteString("None")
	case bool:
		if x {
			b.WriteString("True")
		} else {
			b.WriteString("False")
		}
	case string:
		pyQuote(b, x)
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			pyRepr(b, e, order, agenteval.ChildPointer(path, i))
		}
		b.WriteByte(']')
	case map[string]any:
		keys := order[path]
		if !sameKeys(keys, x) {
			keys = sortedKeys(x)
		}
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteString(", ")
			}
			pyQuote(b, k)
			b.WriteString(": ")
			pyRepr(b, x[k], order, agenteval.ChildPointer(path, k))
		}
		b.WriteByte('}')
	default:
		fmt.Fprint(b, x)
	}
}

// sameKeys reports whether keys lists exactly the keys of m.
func sameKeys(keys []string, m map[string]any) bool {
	if len(keys) != len(m) {
		return false
	}
	for _, k := range keys {
		if _, ok := m[k]; !ok {
			return false
		}
	}
	return true
}

// pyFloat is Python's repr of a float: the shortest round-tripping digits,
// fixed notation for exponents in [-4, 16), scientific outside, and always a
// ".0" on whole numbers in fixed notation.
func pyFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	sci := strconv.FormatFloat(f, 'e', -1, 64)
	exp, _ := strconv.Atoi(sci[strings.IndexByte(sci, 'e')+1:])
	if exp < -4 || exp >= 16 {
		return sci
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.ContainsRune(s, '.') {
		s += ".0"
	}
	return s
}

// pyQuote writes Python's repr of a string.
func pyQuote(b *strings.Builder, s string) {
	quote := byte('\'')
	if strings.ContainsRune(s, '\'') && !strings.ContainsRune(s, '"') {
		quote = '"'
	}
	b.WriteByte(quote)
	for _, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == rune(quote):
			b.WriteByte('\\')
			b.WriteByte(quote)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(b, `\x%02x`, r)
		case r > 0x7f && !strconv.IsPrint(r):
			switch {
			case r < 0x100:
				fmt.Fprintf(b, `\x%02x`, r)
			case r < 0x10000:
				fmt.Fprintf(b, `\u%04x`, r)
			default:
				fmt.Fprintf(b, `\U%08x`, r)
			}
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte(quote)
}

// pyHashKey renders a value as a canonical key with Python's equality for
// hashable values, as Ragas's tool_call_f1 builds sets of (name, args): numbers
// equal by exact value (2 == 2.0), booleans equal to 1 and 0, lists as tuples
// and dicts as frozensets (key order does not matter).
func pyHashKey(b *strings.Builder, v any) {
	if it, ok := jsonvalue.IntegerText(v); ok {
		var z big.Int
		z.SetString(it, 10)
		b.WriteString("n:")
		b.WriteString(z.String())
		return
	}
	if f, ok := number(v); ok {
		if math.IsInf(f, 0) || math.IsNaN(f) {
			b.WriteString("n:" + pyFloat(f))
			return
		}
		r := new(big.Rat).SetFloat64(f)
		b.WriteString("n:")
		b.WriteString(r.RatString())
		return
	}
	switch x := v.(type) {
	case nil:
		b.WriteString("None")
	case bool:
		if x {
			b.WriteString("n:1")
		} else {
			b.WriteString("n:0")
		}
	case string:
		b.WriteString(strconv.Quote(x))
	case []any:
		b.WriteByte('(')
		for _, e := range x {
			pyHashKey(b, e)
			b.WriteByte(',')
		}
		b.WriteByte(')')
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteByte('{')
		for _, k := range keys {
			b.WriteString(strconv.Quote(k))
			b.WriteByte(':')
			pyHashKey(b, x[k])
			b.WriteByte(',')
		}
		b.WriteByte('}')
	default:
		fmt.Fprintf(b, "%#v", x)
	}
}
