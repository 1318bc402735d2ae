package grade

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/internal/schemacheck"
	"github.com/agenteval/agenteval/internal/strictjson"
	"github.com/agenteval/agenteval/internal/suggest"
)

// Text checks grade the last assistant message that has text.

type textCheck struct {
	name    string
	help    string
	list    bool // value is a list of strings
	fold    bool // case-insensitive
	test    func(out string, vals []string) (bool, string)
	explain string
}

func init() {
	checks := []textCheck{
		{name: "contains", help: "the reply contains value", test: containsAll},
		{name: "icontains", help: "the reply contains value, ignoring case", fold: true, test: containsAll},
		{name: "contains_any", help: "the reply contains at least one of value[]", list: true, test: containsAny},
		{name: "icontains_any", help: "contains_any, ignoring case", list: true, fold: true, test: containsAny},
		{name: "contains_all", help: "the reply contains every one of value[]", list: true, test: containsAll},
		{name: "icontains_all", help: "contains_all, ignoring case", list: true, fold: true, test: containsAll},
		{name: "equals", help: "the reply is exactly value", test: func(out string, v []string) (bool, string) {
			if out == v[0] {
				return true, "the reply equals the value"
			}
			return false, fmt.Sprintf("the reply is %s", quoteShort(out))
		}},
		{name: "iequals", help: "equals, ignoring case", fold: true, test: func(out string, v []string) (bool, string) {
			if out == v[0] {
				return true, "the reply equals the value, ignoring case"
			}
			return false, fmt.Sprintf("the reply is %s", quoteShort(out))
		}},
		{name: "starts_with", help: "the reply starts with value", test: func(out string, v []string) (bool, string) {
			if strings.HasPrefix(out, v[0]) {
				return true, "the reply starts with the value"
			}
			return false, fmt.Sprintf("the reply starts %s", quoteShort(out))
		}},
		{name: "ends_with", help: "the reply ends with value", test: func(out string, v []string) (bool, string) {
			if strings.HasSuffix(out, v[0]) {
				return true, "the reply ends with the value"
			}
			r := []rune(out)
			if len(r) > 40 {
				out = "…" + string(r[len(r)-40:])
			}
			return false, fmt.Sprintf("the reply ends %q", out)
		}},
	}
	for _, c := range checks {
		c := c
		register(c.name, c.help, func(params map[string]any) (gradeFunc, error) { return newTextCheck(c, params) })
	}
	register("regex", "the reply matches the regular expression value (RE2 syntax; (?i) for case-insensitive)", newRegex)
	register("is_json", "the reply is valid JSON", newIsJSON)
	register("json_schema", "the reply is JSON that validates against schema (an object, or a file path)", newJSONSchema)
	register("levenshtein", "the reply is within max_distance edits of value (default 5)", newLevenshtein)
}

func newTextCheck(c textCheck, params map[string]any) (gradeFunc, error) {
	var cfg struct {
		Value any `json:"value"`
	}
	if err := decodeParams(params, &cfg, "value"); err != nil {
		return nil, err
	}
	vals, err := stringValues(cfg.Value, c.list)
	if err != nil {
		return nil, err
	}
	want := vals
	if c.fold {
		want = make([]string, len(vals))
		for i, v := range vals {
			want[i] = strings.ToLower(v)
		}
	}
	text := fmt.Sprintf("%s %s", c.name, show(cfg.Value))
	return func(_ context.Context, in *agenteval.GradeInput) (outcome, error) {
		out := in.Output.LastAssistant()
		subject := out
		if c.fold {
			subject = strings.ToLower(out)
		}
		ok, ev := c.test(subject, want)
		if c.fold && !ok {
			// Evidence should quote what the agent wrote, not its lowercase form.
			_, ev = c.test(out, vals)
		}
		return binary(text, ok, ev), nil
	}, nil
}

func binary(text string, ok bool, evidence string) outcome {
	o := outcome{assertions: []agenteval.Assertion{{Text: text, Passed: ok, Evidence: evidence}}, reason: evidence}
	if ok {
		o.score = 1
	}
	return o
}

// stringValues reads value as one string, or as a list of strings when the
// check takes several.
func stringValues(v any, list bool) ([]string, error) {
	switch x := v.(type) {
	case nil:
		return nil, fmt.Errorf("needs value: the text to look for")
	case string:
		if list {
			return []string{x}, nil
		}
		return []string{x}, nil
	case []any:
		if !list {
			return nil, fmt.Errorf("value must be one string; use the _any or _all variant for a list")
		}
		if len(x) == 0 {
			return nil, fmt.Errorf("value is an empty list; give at least one string")
		}
		out := make([]string, len(x))
		for i, e := range x {
			s, ok := e.(string)
			if !ok {
				out[i] = pyStrJSON(e)
				continue
			}
			out[i] = s
		}
		return out, nil
	case json.Number, float64, bool:
		return []string{pyStrJSON(x)}, nil
	}
	return nil, fmt.Errorf("value must be a string%s, not %s", map[bool]string{true: " or a list of strings"}[list], show(v))
}

func containsAll(out string, vals []string) (bool, string) {
	var missing []string
	for _, v := range vals {
		if !strings.Contains(out, v) {
			missing = append(missing, fmt.Sprintf("%q", v))
		}
	}
	if len(missing) == 0 {
		return true, "found in the reply"
	}
	return false, fmt.Sprintf("missing %s in the reply %s", strings.Join(missing, ", "), quoteShort(out))
}

func containsAny(out string, vals []string) (bool, string) {
	for _, v := range vals {
		if strings.Contains(out, v) {
			return true, fmt.Sprintf("found %q", v)
		}
	}
	return false, fmt.Sprintf("none found in the reply %s", quoteShort(out))
}

func quoteShort(s string) string { return fmt.Sprintf("%q", truncate(s, 120)) }

func newRegex(params map[string]any) (gradeFunc, error) {
	var cfg struct {
		Value string `json:"value"`
	}
	if err := decodeParams(params, &cfg, "value"); err != nil {
		return nil, err
	}
	if cfg.Value == "" {
		return nil, fmt.Errorf("needs value: a regular expression")
	}
	re, err := regexp.Compile(cfg.Value)
	if err != nil {
		return nil, fmt.Errorf("value is not a valid regular expression (RE2 syntax): %v", err)
	}
	text := "regex " + cfg.Value
	return func(_ context.Context, in *agenteval.GradeInput) (outcome, error) {
		out := in.Output.LastAssistant()
		if m := re.FindString(out); m != "" || re.MatchString(out) {
			return binary(text, true, fmt.Sprintf("matched %q", m)), nil
		}
		return binary(text, false, "no match in the reply "+quoteShort(out)), nil
	}, nil
}

func newIsJSON(params map[string]any) (gradeFunc, error) {
	if err := decodeParams(params, &struct{}{}); err != nil {
		return nil, err
	}
	return func(_ context.Context, in *agenteval.GradeInput) (outcome, error) {
		out := strings.TrimSpace(in.Output.LastAssistant())
		if _, err := parseJSON(out); err != nil {
			return binary("is_json", false, fmt.Sprintf("not JSON: %v", err)), nil
		}
		return binary("is_json", true, "valid JSON"), nil
	}, nil
}

func parseJSON(s string) (any, error) {
	var v any
	err := strictjson.Decode([]byte(s), &v)
	return v, err
}

func newJSONSchema(params map[string]any) (gradeFunc, error) {
	var cfg struct {
		Schema any `json:"schema"`
		Value  any `json:"value"`
	}
	if err := decodeParams(params, &cfg, "schema", "value"); err != nil {
		return nil, err
	}
	src := cfg.Schema
	if src == nil {
		src = cfg.Value
	}
	var raw []byte
	switch s := src.(type) {
	case nil:
		return nil, fmt.Errorf("needs schema: a JSON Schema object, or the path of a schema file")
	case string:
		b, err := os.ReadFile(s)
		if err != nil {
			return nil, fmt.Errorf("read schema: %w", err)
		}
		raw = b
	case map[string]any:
		raw, _ = json.Marshal(s)
	default:
		return nil, fmt.Errorf("schema must be an object or a file path, not %s", show(src))
	}
	sch, err := schemacheck.Compile(raw)
	if err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	return func(_ context.Context, in *agenteval.GradeInput) (outcome, error) {
		out := strings.TrimSpace(in.Output.LastAssistant())
		if err := sch.Validate([]byte(out)); err != nil {
			return binary("json_schema", false, err.Error()), nil
		}
		return binary("json_schema", true, "valid against the schema"), nil
	}, nil
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", "; ")), " ")
}

func newLevenshtein(params map[string]any) (gradeFunc, error) {
	var cfg struct {
		Value       string `json:"value"`
		MaxDistance *int   `json:"max_distance"`
	}
	if err := decodeParams(params, &cfg, "value", "max_distance"); err != nil {
		return nil, err
	}
	limit := 5
	if cfg.MaxDistance != nil {
		if *cfg.MaxDistance < 0 {
			return nil, fmt.Errorf("max_distance must not be negative")
		}
		limit = *cfg.MaxDistance
	}
	return func(_ context.Context, in *agenteval.GradeInput) (outcome, error) {
		d := suggest.Levenshtein(in.Output.LastAssistant(), cfg.Value)
		return binary(fmt.Sprintf("within %d edits of %q", limit, truncate(cfg.Value, 60)), d <= limit, fmt.Sprintf("distance %d", d)), nil
	}, nil
}
