package grade

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/internal/jsonvalue"
	"github.com/agenteval/agenteval/internal/strictjson"
	"github.com/agenteval/agenteval/judge"
)

// ToolCalls is the trajectory grader.
var ToolCalls = define(Definition{Name: "tool_calls", Aliases: []string{"tool_trajectory"},
	Doc: "trajectory check with partial credit (mode: exact|in_order|any_order|subset|superset; args_match: exact|subset|superset|ignore)"},
	func(o ToolCallsOptions) bool { return callsNeedJudge(o.Expected) }, newToolCalls)

// Trajectory modes.
const (
	ModeExact    = "exact"     // the same calls in the same order, nothing else
	ModeInOrder  = "in_order"  // expected calls in this order; others may come between
	ModeAnyOrder = "any_order" // expected calls in any order; others allowed
	ModeSubset   = "subset"    // every call made is an expected one; some may be missing
	ModeSuperset = "superset"  // every expected call is made; others allowed (= any_order)
)

// Argument matching.
const (
	ArgsExact    = "exact"    // the call has exactly the expected arguments
	ArgsSuperset = "superset" // the call has at least the expected arguments
	ArgsSubset   = "subset"   // the call has no argument beyond the expected ones
	ArgsIgnore   = "ignore"   // only names count
)

// expectedString renders an expected call for people.
func expectedString(e agenteval.ExpectedCall) string {
	switch {
	case e.AnyArgs:
		return e.Tool + "(any)"
	case e.Args == nil:
		return e.Tool + "({})"
	}
	b, _ := json.Marshal(e.Args)
	return e.Tool + "(" + string(b) + ")"
}

// ToolCallsOptions is the options of tool_calls.
type ToolCallsOptions struct {
	Mode      string `json:"mode" enum:"exact,in_order,any_order,subset,superset" doc:"how the calls made must line up with the expected ones (default in_order)"`
	ArgsMatch string `json:"args_match" enum:"exact,subset,superset,ignore" doc:"how a call's arguments must match (default exact)"`
	// Expected nil takes the sample's reference_tool_calls.
	Expected ExpectedCalls `json:"expected" doc:"the expected calls: {tool, args, output}; leave it out to use the sample's reference_tool_calls"`
	// Minimums, with mode any_order, asks for at least n calls per tool
	// instead of a list of calls.
	Minimums map[string]int `json:"minimums" doc:"with mode any_order: the fewest calls per tool, instead of expected"`
	// ArgsFields compares only these argument paths (dotted), as AgentV's
	// args_match given as a list does.
	ArgsFields []string `json:"args_fields" doc:"compare only these argument paths (dotted, such as query or filter.city) instead of args_match"`
}

// ExpectedCalls is a list of expected calls, as eval files and --metric
// flags write them: {tool (or name), args (or arguments, input; "any" for
// any), output (a value, or {value} or {check}), turn}.
type ExpectedCalls []agenteval.ExpectedCall

// UnmarshalJSON reads the written forms of a list of expected calls.
func (c *ExpectedCalls) UnmarshalJSON(b []byte) error {
	var raw []map[string]any
	if err := decodeValue(json.RawMessage(b), &raw); err != nil {
		return notA(b, c)
	}
	out := make(ExpectedCalls, 0, len(raw))
	for i, r := range raw {
		e, err := parseExpectedCall(r)
		if err != nil {
			return fmt.Errorf("[%d]: %w", i, err)
		}
		out = append(out, e)
	}
	*c = out
	return nil
}

type toolCallsGrader struct {
	mode, argsMatch string
	argsFields      []string
	expected        []agenteval.ExpectedCall // nil: take the sample's reference_tool_calls
	minimums        map[string]int
	judge           *judge.Judge // for $check; nil when no check is used
}

func newToolCalls(o ToolCallsOptions, env Env) (Func, error) {
	g := &toolCallsGrader{mode: strings.ReplaceAll(o.Mode, "-", "_"), argsMatch: o.ArgsMatch, minimums: o.Minimums, argsFields: o.ArgsFields}
	if g.mode == "" {
		g.mode = ModeInOrder
	}
	switch g.mode {
	case ModeExact, ModeInOrder, ModeAnyOrder, ModeSubset, ModeSuperset:
	default:
		return nil, fmt.Errorf("mode %q is not one of exact, in_order, any_order, subset, superset", o.Mode)
	}
	if g.argsMatch == "" {
		g.argsMatch = ArgsExact
	}
	switch g.argsMatch {
	case ArgsExact, ArgsSuperset, ArgsSubset, ArgsIgnore:
	default:
		return nil, fmt.Errorf("args_match %q is not one of exact, subset, superset, ignore", o.ArgsMatch)
	}
	if o.Minimums != nil && g.mode != ModeAnyOrder {
		return nil, fmt.Errorf("minimums works only with mode: any_order")
	}
	if o.Expected != nil {
		g.expected = []agenteval.ExpectedCall{}
		for i, e := range o.Expected {
			if e.Turn != 0 {
				return nil, fmt.Errorf("expected[%d]: turn belongs to a test's expected_tool_calls; tool_calls grades one turn, or the whole conversation at test level", i)
			}
			if err := checkExpected(e); err != nil {
				return nil, fmt.Errorf("expected[%d]: %w", i, err)
			}
			g.expected = append(g.expected, e)
		}
	}
	if callsNeedJudge(o.Expected) {
		g.judge = env.Judge
	}
	return g.grade, nil
}

// parseExpectedCall reads {tool|name, args, output} as written in an eval
// file or a --metric flag.
func parseExpectedCall(raw map[string]any) (agenteval.ExpectedCall, error) {
	e := agenteval.ExpectedCall{AnyArgs: true}
	for k, v := range raw {
		switch k {
		case "tool", "name":
			s, ok := v.(string)
			if !ok || s == "" {
				return e, fmt.Errorf("%s must be a non-empty string", k)
			}
			e.Tool = s
		case "args", "arguments", "input":
			switch a := v.(type) {
			case string:
				if a != "any" {
					return e, fmt.Errorf("args must be an object or \"any\", not the string %q", a)
				}
			case map[string]any:
				e.Args, e.AnyArgs = a, false
			case nil:
				e.Args, e.AnyArgs = map[string]any{}, false
			default:
				return e, fmt.Errorf("args must be an object or \"any\", not %s", show(v))
			}
		case "turn":
			n, ok := number(v)
			if !ok || n < 1 || n != float64(int(n)) {
				return e, fmt.Errorf("turn must be a turn number (1 or more), not %s", show(v))
			}
			e.Turn = int(n)
		case "max_duration_ms", "maxDurationMs":
			n, ok := number(v)
			if !ok || n < 0 {
				return e, fmt.Errorf("max_duration_ms must be a number of milliseconds, not %s", show(v))
			}
			e.MaxDurationMS = n
		case "args_match", "argsMatch":
			switch a := v.(type) {
			case string:
				switch a {
				case ArgsExact, ArgsSuperset, ArgsSubset, ArgsIgnore:
					e.ArgsMatch = a
				default:
					return e, fmt.Errorf("args_match %q is not one of exact, subset, superset, ignore (or a list of argument paths)", a)
				}
			case []any:
				for _, f := range a {
					e.ArgsFields = append(e.ArgsFields, pyStrJSON(f))
				}
			default:
				return e, fmt.Errorf("args_match must be exact, subset, superset, ignore or a list of argument paths")
			}
		case "output":
			out := v
			if m, ok := v.(map[string]any); ok && len(m) == 1 {
				if val, ok := m["value"]; ok {
					out = val
				}
				if chk, ok := m["check"].(string); ok {
					out = map[string]any{"$check": chk}
				}
			}
			e.Output = &out
		default:
			return e, fmt.Errorf("unknown key %q in an expected call; use tool, args, output, args_match, max_duration_ms (and turn, in expected_tool_calls)", k)
		}
	}
	return e, checkExpected(e)
}

// checkExpected checks an expected call however it was made: it names a
// tool, and its matchers are ones we know.
func checkExpected(e agenteval.ExpectedCall) error {
	if e.Tool == "" {
		return fmt.Errorf("an expected call needs tool (its name)")
	}
	if e.Literal {
		return nil
	}
	return checkMatchers(e.Args)
}

// checkMatchers rejects $-objects that are not matchers we know, so a typo
// like {"$reqex": ...} is not silently compared as a literal.
func checkMatchers(args map[string]any) error {
	for k, v := range args {
		m, ok := v.(map[string]any)
		if !ok || len(m) != 1 {
			continue
		}
		for op, arg := range m {
			if !strings.HasPrefix(op, "$") {
				continue
			}
			switch op {
			case "$any":
			case "$text":
			case "$check":
				if s, ok := arg.(string); !ok || strings.TrimSpace(s) == "" {
					return fmt.Errorf("args.%s: $check needs the statement the value must satisfy", k)
				}
			case "$regex":
				s, ok := arg.(string)
				if !ok {
					return fmt.Errorf("args.%s: $regex needs a string pattern", k)
				}
				if _, err := regexp.Compile(s); err != nil {
					return fmt.Errorf("args.%s: bad $regex: %v", k, err)
				}
			default:
				return fmt.Errorf("args.%s: unknown matcher %q; use $any, $text, $regex or $check", k, op)
			}
		}
	}
	return nil
}

// matchValue compares an actual argument with an expected value or matcher.
func matchValue(want, got any, literal bool) bool {
	if m, ok := want.(map[string]any); ok && len(m) == 1 && !literal {
		if _, ok := m["$any"]; ok {
			return true
		}
		if _, ok := m["$check"]; ok {
			// Decided later by the judge, on the calls matched otherwise.
			return true
		}
		if t, ok := m["$text"]; ok {
			// agent_inspect compares str(expected) with str(actual).
			return pyStr(t) == pyStr(got)
		}
		if p, ok := m["$regex"].(string); ok {
			re, err := regexp.Compile(p)
			if err != nil {
				return false
			}
			return re.MatchString(pyStrJSON(got))
		}
	}
	return jsonvalue.Equal(want, got)
}

// pyStrJSON is the text a regex sees: strings bare, other values as JSON.
func pyStrJSON(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// callRecord is a call made, with the result the tool returned, if known.
type callRecord struct {
	call   agenteval.ToolCall
	result *string
}

// records pairs each call with its tool message: by tool_call_id where IDs
// are given, otherwise by position within the block of tool messages that
// follows the assistant message.
func records(conv agenteval.Conversation) []callRecord {
	var out []callRecord
	for i := 0; i < len(conv); i++ {
		m := conv[i]
		if m.Role != agenteval.RoleAssistant || len(m.ToolCalls) == 0 {
			continue
		}
		base := len(out)
		for _, c := range m.ToolCalls {
			out = append(out, callRecord{call: c})
		}
		for j := i + 1; j < len(conv) && conv[j].Role == agenteval.RoleTool; j++ {
			content := conv[j].Content
			matched := false
			if id := conv[j].ToolCallID; id != "" {
				for k := base; k < len(out); k++ {
					if out[k].call.ID == id && out[k].result == nil {
						out[k].result, matched = &content, true
						break
					}
				}
			}
			// Without a matching ID, a result answers the first call of the
			// block that has none yet.
			for k := base; !matched && k < len(out); k++ {
				if out[k].result == nil {
					out[k].result, matched = &content, true
				}
			}
		}
	}
	return out
}

// match says whether a call satisfies an expected call, and if not, why.
func (g *toolCallsGrader) match(e agenteval.ExpectedCall, r callRecord) (bool, string) {
	c := r.call
	if c.Name != e.Tool {
		return false, fmt.Sprintf("called %s instead", c.Name)
	}
	mode, fields := g.argsMatch, g.argsFields
	if e.ArgsMatch != "" || len(e.ArgsFields) > 0 {
		mode, fields = e.ArgsMatch, e.ArgsFields
	}
	if !e.AnyArgs && mode != ArgsIgnore {
		if c.Args == nil && c.RawArgs != "" {
			return false, fmt.Sprintf("arguments are not valid JSON: %s", truncate(c.RawArgs, 80))
		}
		if len(fields) > 0 {
			if why := fieldsProblem(fields, e.Args, c.Args, e.Literal); why != "" {
				return false, why
			}
		} else if why := argsProblem(mode, e.Args, c.Args, e.Literal); why != "" {
			return false, why
		}
	}
	if e.Output != nil {
		if r.result == nil {
			return false, "no tool result to compare with the expected output"
		}
		if isCheck(*e.Output) {
			return true, ""
		}
		if !outputEqual(*e.Output, *r.result) {
			return false, fmt.Sprintf("output: want %s, got %s", show(*e.Output), show(truncate(*r.result, 80)))
		}
	}
	return true, ""
}

// fieldsProblem compares only the given argument paths.
func fieldsProblem(fields []string, want, got map[string]any, literal bool) string {
	var probs []string
	for _, f := range fields {
		wv, wok := atPath(want, f)
		gv, gok := atPath(got, f)
		switch {
		case !wok && !gok:
		case !gok:
			probs = append(probs, fmt.Sprintf("missing arg %s", f))
		case !wok:
			probs = append(probs, fmt.Sprintf("arg %s: not expected, got %s", f, show(gv)))
		case !matchValue(wv, gv, literal):
			probs = append(probs, fmt.Sprintf("arg %s: want %s, got %s", f, show(wv), show(gv)))
		}
	}
	return strings.Join(probs, "; ")
}

// atPath finds a dotted path in nested objects.
func atPath(m map[string]any, path string) (any, bool) {
	var cur any = m
	for _, p := range strings.Split(path, ".") {
		o, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = o[p]; !ok {
			return nil, false
		}
	}
	return cur, true
}

func argsProblem(mode string, want, got map[string]any, literal bool) string {
	var probs []string
	checkWanted := mode != ArgsSubset
	for _, k := range sortedKeys(want) {
		gv, ok := got[k]
		if !ok {
			if checkWanted {
				probs = append(probs, fmt.Sprintf("missing arg %s", k))
			}
			continue
		}
		if !matchValue(want[k], gv, literal) {
			probs = append(probs, fmt.Sprintf("arg %s: want %s, got %s", k, show(want[k]), show(gv)))
		}
	}
	if mode == "" || mode == ArgsExact || mode == ArgsSubset {
		for _, k := range sortedKeys(got) {
			if _, ok := want[k]; !ok {
				probs = append(probs, fmt.Sprintf("unexpected arg %s=%s", k, show(got[k])))
			}
		}
	}
	return strings.Join(probs, "; ")
}

func outputEqual(want any, got string) bool {
	if s, ok := want.(string); ok && strings.TrimSpace(s) == strings.TrimSpace(got) {
		return true
	}
	var gv any
	if err := strictjson.Decode([]byte(got), &gv); err != nil {
		return false
	}
	return jsonvalue.Equal(want, gv)
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// isCheck reports whether a value is a {"$check": ...} matcher.
func isCheck(v any) bool {
	m, ok := v.(map[string]any)
	if !ok || len(m) != 1 {
		return false
	}
	_, ok = m["$check"]
	return ok
}

// callsNeedJudge reports whether any expected call has an LLM-judged
// check, on an argument or on the output.
func callsNeedJudge(calls []agenteval.ExpectedCall) bool {
	for _, e := range calls {
		if e.Literal {
			continue
		}
		for _, v := range e.Args {
			if isCheck(v) {
				return true
			}
		}
		if e.Output != nil && isCheck(*e.Output) {
			return true
		}
	}
	return false
}
