// Package jsonvalue compares decoded JSON values the way a person reading
// them would: numbers by value, whatever Go type holds them, and integers
// too large for a float64 exactly. It imports only the standard library.
package jsonvalue

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"strconv"
	"strings"
)

// Number returns v as a float64 when it is a JSON number in any Go form.
func Number(v any) (float64, bool) {
	switch n := v.(type) {
	case json.Number:
		f, err := strconv.ParseFloat(string(n), 64)
		return f, err == nil || isRangeErr(err)
	case float64:
		return n, true
	case float32:
		return float64(n), true
	case int:
		return float64(n), true
	case int8:
		return float64(n), true
	case int16:
		return float64(n), true
	case int32:
		return float64(n), true
	case int64:
		return float64(n), true
	case uint:
		return float64(n), true
	case uint8:
		return float64(n), true
	case uint16:
		return float64(n), true
	case uint32:
		return float64(n), true
	case uint64:
		return float64(n), true
	}
	return 0, false
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

// IntegerText returns the decimal text of v when it is an integer literal
// or an integer Go value, so that integers too large for a float64 still
// compare exactly.
func IntegerText(v any) (string, bool) {
	switch n := v.(type) {
	case json.Number:
		s := string(n)
		if strings.ContainsAny(s, ".eE") {
			return "", false
		}
		var z big.Int
		if _, ok := z.SetString(s, 10); !ok {
			return "", false
		}
		return z.String(), true
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		return fmt.Sprint(n), true
	}
	return "", false
}

// Equal reports whether two decoded JSON values are equal: numbers by value
// (2 == 2.0), strings and booleans exactly, arrays element by element and
// objects key by key, in any key order.
func Equal(a, b any) bool {
	if ai, ok := IntegerText(a); ok {
		if bi, ok := IntegerText(b); ok {
			return ai == bi
		}
	}
	if af, ok := Number(a); ok {
		bf, ok := Number(b)
		return ok && af == bf
	}
	switch x := a.(type) {
	case nil:
		return b == nil
	case string:
		y, ok := b.(string)
		return ok && x == y
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !Equal(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !Equal(xv, yv) {
				return false
			}
		}
		return true
	}
	// Values built in Go with other types: fall back to their JSON form.
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(ja) == string(jb)
}

// Text is a raw JSON value as a tool message holds it: a string as
// itself, anything else as compact JSON (or as written, if it is not
// valid JSON).
func Text(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) == nil {
		return b.String()
	}
	return string(raw)
}
