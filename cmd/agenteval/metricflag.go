package main

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/agenteval/agenteval/grade"
	"github.com/agenteval/agenteval/internal/strictjson"
)

// parseMetricFlags turns --metric values into grader specs. Each value is a
// comma-separated list of NAME or NAME(key=value, ...). A value is JSON when
// it parses as JSON (numbers, true/false, lists, objects, "quoted strings"),
// else plain text. The keys name, weight, threshold, required and negate set
// the grader's common fields; the rest are its own settings.
//
//	tool_call_accuracy(strict_order=false)
//	tool_calls(mode=any_order, args_match=superset)
//	contains(value=Golden Dragon, name=mentions_restaurant)
//	contains_any(value=["booked", "reserved"])
func parseMetricFlags(values []string) ([]grade.Spec, error) {
	var specs []grade.Spec
	seen := map[string]bool{}
	for _, v := range values {
		items, err := splitTop(v, ',')
		if err != nil {
			return nil, fmt.Errorf("--metric %q: %w", v, err)
		}
		for _, item := range items {
			item = strings.TrimSpace(item)
			if item == "" {
				continue
			}
			spec, err := parseMetric(item)
			if err != nil {
				return nil, fmt.Errorf("--metric %q: %w", item, err)
			}
			name := spec.Name
			if name == "" {
				name = spec.Type
			}
			if seen[name] {
				return nil, fmt.Errorf("--metric: two metrics are named %q; give one another name, as in %s(name=%s_2, ...)", name, spec.Type, name)
			}
			seen[name] = true
			specs = append(specs, spec)
		}
	}
	return specs, nil
}

func parseMetric(item string) (grade.Spec, error) {
	var spec grade.Spec
	name, rest, hasArgs := strings.Cut(item, "(")
	spec.Type = strings.TrimSpace(name)
	if spec.Type == "" {
		return spec, fmt.Errorf("missing metric name before '('")
	}
	if !hasArgs {
		return spec, nil
	}
	rest = strings.TrimSpace(rest)
	if !strings.HasSuffix(rest, ")") {
		return spec, fmt.Errorf("missing ')' at the end of the settings")
	}
	params, err := splitTop(rest[:len(rest)-1], ',')
	if err != nil {
		return spec, err
	}
	for _, p := range params {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		k, raw, ok := strings.Cut(p, "=")
		if !ok {
			return spec, fmt.Errorf("setting %q has no '='; write key=value", p)
		}
		k = strings.TrimSpace(k)
		val := parseValue(strings.TrimSpace(raw))
		switch k {
		case "name":
			spec.Name = fmt.Sprint(val)
		case "weight", "threshold":
			f, err := toFloat(val)
			if err != nil {
				return spec, fmt.Errorf("%s must be a number, not %q", k, raw)
			}
			if k == "weight" {
				spec.Weight = &f
			} else {
				spec.Threshold = &f
			}
		case "required", "negate":
			b, ok := val.(bool)
			if !ok {
				return spec, fmt.Errorf("%s must be true or false, not %q", k, raw)
			}
			if k == "required" {
				spec.Required = b
			} else {
				spec.Negate = b
			}
		default:
			settings, _ := spec.Options.(map[string]any)
			if settings == nil {
				settings = map[string]any{}
				spec.Options = settings
			}
			settings[k] = val
		}
	}
	return spec, nil
}

func toFloat(v any) (float64, error) {
	switch n := v.(type) {
	case json.Number:
		return n.Float64()
	case string:
		return strconv.ParseFloat(n, 64)
	}
	return 0, fmt.Errorf("not a number")
}

// parseValue reads JSON when the text is JSON, a 'single-quoted' string
// without its quotes, a [list, of, items] as a list (each item read the
// same way), and anything else as plain text.
func parseValue(s string) any {
	if len(s) >= 2 && s[0] == '\'' && s[len(s)-1] == '\'' {
		return s[1 : len(s)-1]
	}
	var v any
	if err := strictjson.Decode([]byte(s), &v); err == nil {
		return v
	}
	if len(s) >= 2 && s[0] == '[' && s[len(s)-1] == ']' {
		items, err := splitTop(s[1:len(s)-1], ',')
		if err == nil {
			list := []any{}
			for _, it := range items {
				if it = strings.TrimSpace(it); it != "" {
					list = append(list, parseValue(it))
				}
			}
			return list
		}
	}
	return s
}

// splitTop splits s at sep where sep is outside quotes and brackets. A
// single quote starts a quoted value only at the start of a value (after
// '=', '(', '[' or a separator), so "Dragon's" is plain text.
func splitTop(s string, sep byte) ([]string, error) {
	var out []string
	depth, start := 0, 0
	var quote byte
	valueStart := func(i int) bool {
		for j := i - 1; j >= 0; j-- {
			switch s[j] {
			case ' ', '\t':
				continue
			case '=', '(', '[', ',', ':':
				return true
			}
			return false
		}
		return true
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == '\\' && quote == '"' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '"' || (c == '\'' && valueStart(i)):
			quote = c
		case c == '(' || c == '[' || c == '{':
			depth++
		case c == ')' || c == ']' || c == '}':
			depth--
			if depth < 0 {
				return nil, fmt.Errorf("unbalanced %q at character %d", c, i+1)
			}
		case c == sep && depth == 0:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unclosed %c quote", quote)
	}
	if depth != 0 {
		return nil, fmt.Errorf("unbalanced brackets")
	}
	return append(out, s[start:]), nil
}
