package grade

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/internal/schemacheck"
	"github.com/agenteval/agenteval/internal/strictjson"
	"github.com/agenteval/agenteval/internal/suggest"
)

// Text checks grade the last assistant message that has text.

// Text is the options of the checks that compare the reply with one text:
// contains, icontains, equals, iequals, starts_with, ends_with and regex.
type Text struct {
	Value string `json:"value" doc:"the text to look for (for regex, an RE2 pattern)"`
}

// TextList is the options of the checks that look for several texts:
// contains_any, contains_all and their i variants.
type TextList struct {
	Value Strings `json:"value" doc:"the texts to look for: one, or a list"`
}

// textCheck is one text check's behaviour.
type textCheck struct {
	fold bool // case-insensitive
	test func(out string, vals []string) (bool, string)
}

func (c textCheck) grade(name string, vals []string) Func {
	want := vals
	if c.fold {
		want = make([]string, len(vals))
		for i, v := range vals {
			want[i] = strings.ToLower(v)
		}
	}
	shown := any(vals[0])
	if len(vals) > 1 {
		shown = vals
	}
	text := fmt.Sprintf("%s %s", name, show(shown))
	return func(_ context.Context, in *agenteval.GradeInput) (Outcome, error) {
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
	}
}

// oneText defines a check of the reply against one text. lists are the
// checks of the same kind that take a list (contains_any, contains_all):
// a list given as the value is an error that names them.
func oneText(name, doc string, c textCheck, lists ...*Definition) *Definition {
	d := deterministic(Definition{Name: name, Doc: doc}, func(o Text, _ Env) (Func, error) {
		if o.Value == "" {
			return nil, fmt.Errorf("needs value: the text to look for")
		}
		return c.grade(name, []string{o.Value}), nil
	})
	if len(lists) == 0 {
		return d
	}
	names := Names(lists)
	bind := d.bind
	d.bind = func(options any, defs []*Definition) (bound, error) {
		b, err := bind(options, defs)
		settings, _ := options.(map[string]any)
		if _, isList := settings["value"].([]any); err != nil && isList {
			err = fmt.Errorf("%w; use %s for a list", err, strings.Join(names, " or "))
		}
		return b, err
	}
	return d
}

// listText defines a check of the reply against several texts.
func listText(name, doc string, c textCheck) *Definition {
	return deterministic(Definition{Name: name, Doc: doc}, func(o TextList, _ Env) (Func, error) {
		switch {
		case o.Value == nil:
			return nil, fmt.Errorf("needs value: the texts to look for, as a list")
		case len(o.Value) == 0:
			return nil, fmt.Errorf("value is an empty list; give at least one text")
		}
		for i, v := range o.Value {
			if v == "" {
				return nil, fmt.Errorf("value[%d] is empty, which every reply contains; remove it", i)
			}
		}
		return c.grade(name, o.Value), nil
	})
}

// equals, starts_with and ends_with compare the reply and the value with
// their surrounding white space trimmed, as AgentV does: a reply that ends
// in a newline still equals "42".
func equals(out string, v []string) (bool, string) {
	if strings.TrimSpace(out) == strings.TrimSpace(v[0]) {
		return true, "the reply equals the value"
	}
	return false, fmt.Sprintf("the reply is %s", quoteShort(out))
}

// The text checks.
var (
	Contains     = oneText("contains", "the reply contains value", textCheck{test: containsAll}, ContainsAny, ContainsAll)
	IContains    = oneText("icontains", "the reply contains value, ignoring case", textCheck{fold: true, test: containsAll}, IContainsAny, IContainsAll)
	ContainsAny  = listText("contains_any", "the reply contains at least one of value[]", textCheck{test: containsAny})
	IContainsAny = listText("icontains_any", "contains_any, ignoring case", textCheck{fold: true, test: containsAny})
	ContainsAll  = listText("contains_all", "the reply contains every one of value[]", textCheck{test: containsAll})
	IContainsAll = listText("icontains_all", "contains_all, ignoring case", textCheck{fold: true, test: containsAll})
	Equals       = oneText("equals", "the reply is exactly value", textCheck{test: equals})
	IEquals      = oneText("iequals", "equals, ignoring case", textCheck{fold: true, test: equals})
	StartsWith   = oneText("starts_with", "the reply starts with value", textCheck{test: startsWith})
	EndsWith     = oneText("ends_with", "the reply ends with value", textCheck{test: endsWith})
	Regex        = deterministic(Definition{Name: "regex", Doc: "the reply matches the regular expression value (RE2 syntax; flags: i, m, s as in JavaScript, or (?i) in the pattern)"}, newRegex)
	IsJSON       = deterministic(Definition{Name: "is_json", Doc: "the reply is valid JSON"}, newIsJSON)
	JSONSchema   = deterministic(Definition{Name: "json_schema", Doc: "the reply is JSON that validates against schema (an object, or a file path relative to the eval file)"}, newJSONSchema)
	Levenshtein  = deterministic(Definition{Name: "levenshtein", Doc: "the reply is within max_distance edits of value (default 5)"}, newLevenshtein)
)

func startsWith(out string, v []string) (bool, string) {
	if strings.HasPrefix(strings.TrimSpace(out), strings.TrimSpace(v[0])) {
		return true, "the reply starts with the value"
	}
	return false, fmt.Sprintf("the reply starts %s", quoteShort(out))
}

func endsWith(out string, v []string) (bool, string) {
	if strings.HasSuffix(strings.TrimSpace(out), strings.TrimSpace(v[0])) {
		return true, "the reply ends with the value"
	}
	r := []rune(out)
	if len(r) > 40 {
		out = "…" + string(r[len(r)-40:])
	}
	return false, fmt.Sprintf("the reply ends %q", out)
}

func binary(text string, ok bool, evidence string) Outcome {
	o := Outcome{Assertions: []agenteval.Assertion{{Text: text, Passed: ok, Evidence: evidence}}, Reason: evidence}
	if ok {
		o.Score = 1
	}
	return o
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

// RegexOptions is the options of regex.
type RegexOptions struct {
	Value string `json:"value" doc:"the pattern, in RE2 syntax"`
	Flags string `json:"flags" doc:"JavaScript-style flags: i (ignore case), m (^ and $ at line ends), s (. matches newlines); g, u and y change nothing here"`
}

func newRegex(o RegexOptions, _ Env) (Func, error) {
	if o.Value == "" {
		return nil, fmt.Errorf("needs value: a regular expression")
	}
	inline := ""
	for _, f := range o.Flags {
		switch f {
		case 'i', 'm', 's':
			if !strings.ContainsRune(inline, f) {
				inline += string(f)
			}
		case 'g', 'u', 'y', 'd':
			// A test for a match is the same with them.
		default:
			return nil, fmt.Errorf("flags %q: %q is not a flag agenteval knows (i, m, s, g, u, y)", o.Flags, f)
		}
	}
	pattern := o.Value
	if inline != "" {
		pattern = "(?" + inline + ")" + pattern
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, fmt.Errorf("value is not a valid regular expression (RE2 syntax: no lookaround or backreferences): %v", err)
	}
	text := "regex " + o.Value
	if o.Flags != "" {
		text = "regex /" + o.Value + "/" + o.Flags
	}
	return func(_ context.Context, in *agenteval.GradeInput) (Outcome, error) {
		out := in.Output.LastAssistant()
		if m := re.FindString(out); m != "" || re.MatchString(out) {
			return binary(text, true, fmt.Sprintf("matched %q", m)), nil
		}
		return binary(text, false, "no match in the reply "+quoteShort(out)), nil
	}, nil
}

func newIsJSON(NoOptions, Env) (Func, error) {
	return func(_ context.Context, in *agenteval.GradeInput) (Outcome, error) {
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

// JSONSchemaOptions is the options of json_schema.
type JSONSchemaOptions struct {
	// Schema is a JSON Schema object, or the path of a schema file
	// (relative to the eval file).
	Schema any `json:"schema" alias:"value" doc:"a JSON Schema object, or the path of a schema file relative to the eval file"`
}

func newJSONSchema(o JSONSchemaOptions, env Env) (Func, error) {
	var raw []byte
	switch s := o.Schema.(type) {
	case nil:
		return nil, fmt.Errorf("needs schema: a JSON Schema object, or the path of a schema file")
	case string:
		p := s
		if !filepath.IsAbs(p) && env.Dir != "" {
			p = filepath.Join(env.Dir, p)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("read schema: %w", err)
		}
		raw = b
	case map[string]any:
		raw, _ = json.Marshal(s)
	default:
		return nil, fmt.Errorf("schema must be an object or a file path, not %s", show(o.Schema))
	}
	sch, err := schemacheck.Compile(raw)
	if err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	return func(_ context.Context, in *agenteval.GradeInput) (Outcome, error) {
		out := strings.TrimSpace(in.Output.LastAssistant())
		if err := sch.Validate([]byte(out)); err != nil {
			return binary("json_schema", false, err.Error()), nil
		}
		return binary("json_schema", true, "valid against the schema"), nil
	}, nil
}

// LevenshteinOptions is the options of levenshtein.
type LevenshteinOptions struct {
	Value       string `json:"value" doc:"the text the reply should be close to"`
	MaxDistance *int   `json:"max_distance" doc:"the most edits allowed (default 5)"`
}

func newLevenshtein(o LevenshteinOptions, _ Env) (Func, error) {
	limit := 5
	if o.MaxDistance != nil {
		if *o.MaxDistance < 0 {
			return nil, fmt.Errorf("max_distance must not be negative")
		}
		limit = *o.MaxDistance
	}
	return func(_ context.Context, in *agenteval.GradeInput) (Outcome, error) {
		d := suggest.Levenshtein(in.Output.LastAssistant(), o.Value)
		return binary(fmt.Sprintf("within %d edits of %q", limit, truncate(o.Value, 60)), d <= limit, fmt.Sprintf("distance %d", d)), nil
	}, nil
}
