package grade

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"

	"github.com/agenteval/agenteval/internal/suggest"
)

// paramTyper is implemented by option types that take several JSON forms,
// such as a string or a list of strings.
type paramTyper interface {
	ParamTypes() []string
}

// paramsOf describes the settings of an options struct: each exported
// field with a json name, its `doc` tag, its `enum` tag (comma-separated)
// and `alias` tag (comma-separated).
func paramsOf(t reflect.Type) []Param {
	if t.Kind() != reflect.Struct {
		return nil
	}
	var out []Param
	for i := range t.NumField() {
		f := t.Field(i)
		name := jsonName(f)
		if name == "" {
			continue
		}
		p := Param{Name: name, Types: typesOf(f.Type), Doc: f.Tag.Get("doc")}
		if e := f.Tag.Get("enum"); e != "" {
			p.Enum = strings.Split(e, ",")
		}
		if a := f.Tag.Get("alias"); a != "" {
			p.Aliases = strings.Split(a, ",")
		}
		out = append(out, p)
	}
	return out
}

func jsonName(f reflect.StructField) string {
	if !f.IsExported() {
		return ""
	}
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	if name == "-" || name == "" {
		return ""
	}
	return name
}

func typesOf(t reflect.Type) []string {
	if t.Implements(reflect.TypeFor[paramTyper]()) {
		return reflect.Zero(t).Interface().(paramTyper).ParamTypes()
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return []string{"string"}
	case reflect.Bool:
		return []string{"boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return []string{"integer"}
	case reflect.Float32, reflect.Float64:
		return []string{"number"}
	case reflect.Slice, reflect.Array:
		return []string{"array"}
	case reflect.Map, reflect.Struct:
		return []string{"object"}
	}
	return nil
}

// decodeOptions turns a grader's options into its options struct: O or *O
// as they are, a map of settings decoded field by field.
func decodeOptions[O any](options any, params []Param) (O, error) {
	var o O
	switch v := options.(type) {
	case nil:
		return o, nil
	case O:
		return v, nil
	case *O:
		if v != nil {
			o = *v
		}
		return o, nil
	case map[string]any:
		err := decodeSettings(v, &o, params)
		return o, err
	}
	return o, fmt.Errorf("options must be a %T or a map of settings, not %T", o, options)
}

// decodeSettings decodes settings into the struct at ptr. Aliases are
// renamed first; unknown keys are errors with a hint from params and the
// common settings.
func decodeSettings(settings map[string]any, ptr any, params []Param) error {
	if len(settings) == 0 {
		return nil
	}
	v := reflect.ValueOf(ptr).Elem()
	fields := map[string]int{}
	if v.Kind() == reflect.Struct {
		for i := range v.NumField() {
			if n := jsonName(v.Type().Field(i)); n != "" {
				fields[n] = i
			}
		}
	}
	canonical := map[string]string{}
	for _, p := range params {
		canonical[p.Name] = p.Name
		for _, a := range p.Aliases {
			canonical[a] = p.Name
		}
	}
	given := map[string]string{} // canonical name -> key as written
	for _, k := range sortedKeys(settings) {
		name, ok := canonical[k]
		if !ok {
			return unknownSetting(k, params)
		}
		if other, dup := given[name]; dup {
			return fmt.Errorf("give %s or %s, not both", other, k)
		}
		given[name] = k
		i, ok := fields[name]
		if !ok {
			return unknownSetting(k, params)
		}
		val := settings[k]
		if ft := v.Field(i).Type(); ft.Kind() == reflect.String || (ft.Kind() == reflect.Pointer && ft.Elem().Kind() == reflect.String) {
			// YAML's value: 42 is text to a string setting.
			switch val.(type) {
			case json.Number, float64, int, int64, bool:
				val = pyStrJSON(val)
			}
		}
		if err := decodeValue(val, v.Field(i).Addr().Interface()); err != nil {
			return settingError(k, err)
		}
	}
	return nil
}

// checkSettings checks the settings of a grader that has no options
// struct (a definition written by hand) against its params, with the same
// hints a built-in grader gives: an unknown or repeated setting, a value
// of the wrong JSON type, a value not among the enum. It returns a copy
// with aliases renamed to the params' names and a number or true/false
// given to a string-only setting turned into text, as YAML's value: 42
// is for a built-in grader.
func checkSettings(settings map[string]any, params []Param) (map[string]any, error) {
	byName := map[string]*Param{}
	for i := range params {
		byName[params[i].Name] = &params[i]
		for _, a := range params[i].Aliases {
			byName[a] = &params[i]
		}
	}
	out := make(map[string]any, len(settings))
	given := map[string]string{} // a param's name -> key as written
	for _, k := range sortedKeys(settings) {
		p, ok := byName[k]
		if !ok {
			return nil, unknownSetting(k, params)
		}
		if other, dup := given[p.Name]; dup {
			return nil, fmt.Errorf("give %s or %s, not both", other, k)
		}
		given[p.Name] = k
		v := settings[k]
		if slices.Equal(p.Types, []string{"string"}) {
			switch v.(type) {
			case json.Number, float64, int, int64, bool:
				v = pyStrJSON(v)
			}
		}
		if err := checkValue(*p, v); err != nil {
			return nil, fmt.Errorf("setting %q %w", k, err)
		}
		out[p.Name] = v
	}
	return out, nil
}

// checkValue checks one setting's value against its param's JSON types
// and enum. A null passes: it is the setting left empty.
func checkValue(p Param, v any) error {
	if v == nil {
		return nil
	}
	is := jsonTypesOf(v)
	if len(p.Types) > 0 && !slices.ContainsFunc(p.Types, func(t string) bool { return slices.Contains(is, t) }) {
		words := make([]string, len(p.Types))
		for i, t := range p.Types {
			words[i] = jsonTypeWord(t)
		}
		return fmt.Errorf("must be %s, not %s", strings.Join(words, " or "), jsonTypeWord(is[0]))
	}
	if s, ok := v.(string); ok && len(p.Enum) > 0 && !slices.Contains(p.Enum, s) {
		msg := fmt.Sprintf("must be one of %s, not %q", strings.Join(p.Enum, ", "), s)
		if near := suggest.Closest(s, p.Enum); near != "" {
			msg += fmt.Sprintf("; did you mean %q?", near)
		}
		return errors.New(msg)
	}
	return nil
}

// jsonTypesOf says which JSON Schema types a decoded value is, the most
// particular first: a whole number is an integer and a number.
func jsonTypesOf(v any) []string {
	if n, ok := v.(json.Number); ok {
		if _, err := n.Int64(); err == nil {
			return []string{"integer", "number"}
		}
		return []string{"number"}
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.String:
		return []string{"string"}
	case reflect.Bool:
		return []string{"boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return []string{"integer", "number"}
	case reflect.Float32, reflect.Float64:
		if f := rv.Float(); f == math.Trunc(f) && !math.IsInf(f, 0) {
			return []string{"integer", "number"}
		}
		return []string{"number"}
	case reflect.Slice, reflect.Array:
		return []string{"array"}
	case reflect.Map, reflect.Struct:
		return []string{"object"}
	}
	return []string{rv.Kind().String()}
}

// jsonTypeWord names a JSON Schema type in words.
func jsonTypeWord(t string) string {
	switch t {
	case "string":
		return "a string"
	case "boolean":
		return "true or false"
	case "integer":
		return "a whole number"
	case "number":
		return "a number"
	case "array":
		return "a list"
	case "object":
		return "an object"
	}
	return t
}

// decodeValue decodes one decoded YAML or JSON value into ptr, keeping
// numbers as json.Number where ptr holds an any.
func decodeValue(val any, ptr any) error {
	b, err := json.Marshal(val)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return dec.Decode(ptr)
}

func settingError(key string, err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Errorf("setting %q must be %s, not %s", key, typeWord(te.Type), jsonKindWord(te.Value))
	}
	if msg := err.Error(); strings.HasPrefix(msg, "[") {
		return fmt.Errorf("%s%w", key, err)
	}
	return fmt.Errorf("%s: %w", key, err)
}

// jsonKindWord names a JSON kind as encoding/json reports it.
func jsonKindWord(kind string) string {
	switch kind {
	case "array":
		return "a list"
	case "object":
		return "an object"
	case "number":
		return "a number"
	case "string":
		return "a string"
	case "bool":
		return "true or false"
	}
	return kind
}

func typeWord(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Bool:
		return "true or false"
	case reflect.String:
		return "a string"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Int, reflect.Int64, reflect.Int32:
		return "a whole number"
	case reflect.Float64, reflect.Float32:
		return "a number"
	}
	return t.String()
}

func unknownSetting(k string, params []Param) error {
	for _, c := range Common {
		if c.Name == k {
			return fmt.Errorf("%q is set beside the grader's type, not among its own settings (in Go, Spec.%s)", k, strings.ToUpper(k[:1])+k[1:])
		}
	}
	var own, all []string
	for _, p := range params {
		own = append(own, p.Name)
		all = append(all, p.Name)
		all = append(all, p.Aliases...)
	}
	var common []string
	for _, c := range Common {
		if c.Name != "type" {
			common = append(common, c.Name)
			all = append(all, c.Name)
		}
	}
	msg := fmt.Sprintf("unknown setting %q", k)
	if near := suggest.Closest(k, all); near != "" {
		return fmt.Errorf("%s; did you mean %q?", msg, near)
	}
	if len(own) == 0 {
		return fmt.Errorf("%s; this grader has no settings of its own (every grader takes %s)", msg, strings.Join(common, ", "))
	}
	return fmt.Errorf("%s; known settings: %s (and %s, which every grader takes)", msg, strings.Join(own, ", "), strings.Join(common, ", "))
}

// Strings is a setting given as one string or a list of them.
type Strings []string

// ParamTypes says a string or a list.
func (Strings) ParamTypes() []string { return []string{"string", "array"} }

// UnmarshalJSON accepts "x", ["x", "y"], and numbers or booleans, which
// count as their text.
func (s *Strings) UnmarshalJSON(b []byte) error {
	var v any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return err
	}
	switch x := v.(type) {
	case []any:
		out := make(Strings, len(x))
		for i, e := range x {
			out[i] = pyStrJSON(e)
		}
		*s = out
	case nil:
		*s = nil
	case map[string]any:
		return errors.New("must be a string or a list of strings, not an object")
	default:
		*s = Strings{pyStrJSON(x)}
	}
	return nil
}

// notA is the error of an option type that got JSON of the wrong kind, in
// the form settingError words.
func notA(b []byte, ptr any) error {
	kind := "value"
	switch t := bytes.TrimSpace(b); {
	case len(t) == 0:
	case t[0] == '"':
		kind = "string"
	case t[0] == '{':
		kind = "object"
	case t[0] == '[':
		kind = "array"
	case t[0] == 't' || t[0] == 'f':
		kind = "bool"
	default:
		kind = "number"
	}
	return &json.UnmarshalTypeError{Value: kind, Type: reflect.TypeOf(ptr)}
}
