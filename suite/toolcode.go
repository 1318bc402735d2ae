package suite

import (
	"encoding/json"
	"regexp"
	"strings"
)

// An agent_inspect dataset (the schema of its README, "Creating your own
// evaluation dataset") writes each expected tool as a string holding a
// Python list literal, such as
//
//	[{'tool_code': 'get_user_details(user_id=ivan_rossi_8555)', 'output': '$AnyValue'}]
//
// agent_inspect's paper_experiments/convert_to_data_sample.py reads it in
// three tries: as JSON, as a Python literal (ast.literal_eval), and, when
// both fail, with a regular expression that finds only the tool's name.
// parseToolString follows the same tries with the same outcomes, so a
// dataset scores here as it does there: a tool_code whose arguments hold
// nested quotes (flights=[{'flight_number': ...}]) is not a valid literal,
// and only its name is checked, as in agent_inspect.

// toolCode is a parsed tool_code: the tool's name and its arguments, each a
// string as the converter leaves it.
type toolCode struct {
	tool  string
	names []string // argument names, in written order
	args  map[string]string
	// nameOnly is set when the string could not be read as JSON or a
	// Python literal, so only the name was found.
	nameOnly bool
	// unknown is set when not even a name was found (the converter's
	// "unknown" tool).
	unknown bool
}

// parseToolString reads one expected-tool string.
func parseToolString(s string) toolCode {
	var parsed any
	if err := json.Unmarshal([]byte(s), &parsed); err == nil {
		if code, ok := firstToolCode(parsed); ok {
			return parseToolCode(code)
		}
	}
	if v, err := pyLiteral(s); err == nil {
		if code, ok := firstToolCode(v); ok {
			return parseToolCode(code)
		}
	}
	// The converter's last try: the name after 'tool_code': '.
	if m := toolCodeName.FindString(s); m != "" {
		tc := parseToolCode(m[strings.LastIndexByte(m, '\'')+1:])
		tc.nameOnly = true
		return tc
	}
	return toolCode{tool: "unknown", unknown: true, args: map[string]string{}}
}

var (
	toolCodeName = regexp.MustCompile(`'tool_code':\s*'(\w+)`)
	toolCall     = regexp.MustCompile(`^(\w+)\((.*)\)`)
	toolArg      = regexp.MustCompile(`(\w+)=([^,]+(?:\[.*?\])?)`)
)

// firstToolCode is the tool_code of the first element of a list, when the
// list is non-empty and that element is a mapping with a tool_code.
func firstToolCode(v any) (string, bool) {
	list, ok := v.([]any)
	if !ok || len(list) == 0 {
		return "", false
	}
	m, ok := list[0].(map[string]any)
	if !ok {
		return "", false
	}
	code, ok := m["tool_code"].(string)
	return code, ok
}

// parseToolCode reads name(arg=value, ...) as the converter's parse_tool_code
// does: values are split at commas, trimmed, and stripped of one pair of
// matching quotes; text it cannot read leaves the whole string as the name.
func parseToolCode(code string) toolCode {
	tc := toolCode{args: map[string]string{}}
	// Python's re.match: anchored at the start; '.' stops at a newline.
	line, _, _ := strings.Cut(code, "\n")
	m := toolCall.FindStringSubmatch(line)
	if m == nil {
		tc.tool = code
		return tc
	}
	tc.tool = m[1]
	for _, a := range toolArg.FindAllStringSubmatch(m[2], -1) {
		v := strings.TrimSpace(a[2])
		if len(v) >= 2 && (v[0] == '\'' || v[0] == '"') && v[len(v)-1] == v[0] {
			v = v[1 : len(v)-1]
		}
		if _, dup := tc.args[a[1]]; !dup {
			tc.names = append(tc.names, a[1])
		}
		tc.args[a[1]] = v
	}
	return tc
}

// checkedValue reports whether the converter turns an argument into an
// LLM check rather than an exact value: "$AnyValue", "No Remarks", and any
// argument named expression.
func checkedValue(name, value string) bool {
	return value == "$AnyValue" || value == "No Remarks" || name == "expression"
}
