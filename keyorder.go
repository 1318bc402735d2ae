package agenteval

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
)

// KeyOrderOf reads the JSON object at the start of data (what follows it is
// ignored) and returns the written order of the keys of each object nested
// in it, by JSON Pointer ("/q", "/q/items/0"), for objects of two keys or
// more. The outer object itself is not recorded: its keys are a call's
// argument names, which every grader reads by name. It returns nil when
// data does not start with an object, or nothing nested has an order.
//
// Decoded JSON objects are Go maps, which have no order; Python keeps the
// order keys were written in, and Ragas's ToolCallAccuracy compares str() of
// nested dicts, so the order is kept beside the map for it.
func KeyOrderOf(data []byte) map[string][]string {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	out := map[string][]string{}
	if !readOrder(dec, "", '{', out, true) || len(out) == 0 {
		return nil
	}
	return out
}

// readOrder reads the rest of an object or array whose opening delimiter
// has been read, recording key orders under path.
func readOrder(dec *json.Decoder, path string, open json.Delim, out map[string][]string, top bool) bool {
	var keys []string
	for i := 0; dec.More(); i++ {
		child := path + "/" + strconv.Itoa(i)
		if open == '{' {
			tok, err := dec.Token()
			if err != nil {
				return false
			}
			k, _ := tok.(string)
			keys = append(keys, k)
			child = path + "/" + escapePointer(k)
		}
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		if d, ok := tok.(json.Delim); ok && (d == '{' || d == '[') {
			if !readOrder(dec, child, d, out, false) {
				return false
			}
		}
	}
	if _, err := dec.Token(); err != nil { // the closing delimiter
		return false
	}
	if open == '{' && !top && len(keys) > 1 {
		out[path] = keys
	}
	return true
}

func escapePointer(k string) string {
	if !strings.ContainsAny(k, "~/") {
		return k
	}
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(k)
}

// ChildPointer is the JSON Pointer of a key or index below path, as
// KeyOrderOf writes them.
func ChildPointer(path string, keyOrIndex any) string {
	switch k := keyOrIndex.(type) {
	case int:
		return path + "/" + strconv.Itoa(k)
	case string:
		return path + "/" + escapePointer(k)
	}
	return path
}

// HasNestedObjects reports whether any argument value holds an object of
// two keys or more, the only thing whose key order can matter.
func HasNestedObjects(args map[string]any) bool {
	for _, v := range args {
		if nestedObject(v) {
			return true
		}
	}
	return false
}

func nestedObject(v any) bool {
	switch x := v.(type) {
	case map[string]any:
		if len(x) > 1 {
			return true
		}
		for _, e := range x {
			if nestedObject(e) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if nestedObject(e) {
				return true
			}
		}
	}
	return false
}
