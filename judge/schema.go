package judge

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// Object is a JSON object whose keys keep their order when marshalled.
// Schemas are built from it so that a model writes its reason before its
// verdict, which makes the verdict better; a Go map would sort the keys.
type Object []Field

// Field is one key of an Object.
type Field struct {
	Key   string
	Value any
}

// MarshalJSON writes the fields in order.
func (o Object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(f.Key)
		b.Write(k)
		b.WriteByte(':')
		v, err := json.Marshal(f.Value)
		if err != nil {
			return nil, fmt.Errorf("schema field %s: %w", f.Key, err)
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// ObjectSchema builds a strict object schema: every property required, no
// others allowed, as OpenAI's strict structured output demands.
func ObjectSchema(props ...Field) map[string]any {
	required := make([]any, len(props))
	for i, p := range props {
		required[i] = p.Key
	}
	return map[string]any{
		"type":                 "object",
		"additionalProperties": false,
		"required":             required,
		"properties":           Object(props),
	}
}

// String, Boolean, Integer and ArrayOf are schema leaves.
func String(desc string) map[string]any {
	return map[string]any{"type": "string", "description": desc}
}

// Boolean is a boolean schema with a description.
func Boolean(desc string) map[string]any {
	return map[string]any{"type": "boolean", "description": desc}
}

// Enum is a string schema limited to the given values.
func Enum(desc string, values ...string) map[string]any {
	vs := make([]any, len(values))
	for i, v := range values {
		vs[i] = v
	}
	return map[string]any{"type": "string", "enum": vs, "description": desc}
}

// ArrayOf is an array schema.
func ArrayOf(items map[string]any, desc string) map[string]any {
	return map[string]any{"type": "array", "items": items, "description": desc}
}

// Criterion is one statement the judge decides as passed or not.
type Criterion struct {
	// ID names the criterion in results; it need not be a valid JSON key.
	ID   string
	Text string
}

// key is the schema property of criterion i: short and always valid.
func key(i int) string { return "c" + strconv.Itoa(i+1) }

// criteriaSchema has one required property per criterion, each
// {reason, passed}, so that a model that follows the schema cannot skip one.
func criteriaSchema(criteria []Criterion) map[string]any {
	props := make([]Field, len(criteria))
	for i, c := range criteria {
		props[i] = Field{Key: key(i), Value: ObjectSchema(
			Field{"reason", String("Why, citing the conversation: " + truncate(c.Text, 200))},
			Field{"passed", Boolean("true when the criterion is met")},
		)}
	}
	return ObjectSchema(props...)
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
