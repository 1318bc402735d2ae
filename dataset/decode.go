package dataset

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/internal/jsonpos"
	"github.com/agenteval/agenteval/internal/strictjson"
	"github.com/agenteval/agenteval/internal/suggest"
)

// Problem is one thing wrong with a row, located by its JSON path inside the
// row. Warning problems do not make the row invalid.
type Problem struct {
	Path    jsonpos.Path
	Msg     string
	Warning bool
}

var rowKeys = []string{"id", "user_input", "messages", "reference", "reference_tool_calls", "reference_topics", "rubrics", "metadata"}

var messageKeys = []string{"type", "role", "content", "tool_calls", "tool_call_id", "name", "metadata"}

var toolCallKeys = []string{"id", "type", "name", "args", "arguments", "function", "tool", "input", "raw_args"}

// decoder collects problems while it decodes one row.
type decoder struct {
	problems []Problem
	// raw is the JSON being decoded, for the key order of tool-call
	// arguments; skip is how many leading path elements lie outside it.
	raw  []byte
	skip int
	// referenceOnly accepts rows without a conversation: they only carry
	// references for conversations read from elsewhere.
	referenceOnly bool
}

func (d *decoder) fail(p jsonpos.Path, format string, a ...any) {
	d.problems = append(d.problems, Problem{Path: p, Msg: fmt.Sprintf(format, a...)})
}

func (d *decoder) warn(p jsonpos.Path, format string, a ...any) {
	d.problems = append(d.problems, Problem{Path: p, Msg: fmt.Sprintf(format, a...), Warning: true})
}

// DecodeSample decodes one row, in Ragas or OpenAI-messages form, and
// validates its conversation. It returns the sample (nil when the row is not
// a JSON object) and every problem found, errors and warnings alike.
//
// The row is parsed once into generic JSON values; positions are worked out
// from the raw bytes only for the problems found, so valid rows pay nothing
// for good error messages.
func DecodeSample(raw []byte) (*agenteval.Sample, []Problem) {
	var d decoder
	s := d.row(raw)
	return s, d.problems
}

func (d *decoder) row(raw []byte) *agenteval.Sample {
	d.raw = raw
	var v any
	if err := strictjson.Decode(raw, &v); err != nil {
		var se *json.SyntaxError
		var te *strictjson.TrailingError
		switch {
		case errors.As(err, &te):
			d.problems = append(d.problems, Problem{Path: jsonpos.Path{syntaxOffset(te.Offset + 1)}, Msg: "malformed JSON: unexpected text after the row's closing brace; each row must be one complete JSON object"})
		case errors.As(err, &se):
			d.problems = append(d.problems, Problem{Path: jsonpos.Path{syntaxOffset(se.Offset)}, Msg: "malformed JSON: " + se.Error() + "; each row must be one complete JSON object"})
		case errors.Is(err, io.ErrUnexpectedEOF):
			d.problems = append(d.problems, Problem{Path: jsonpos.Path{syntaxOffset(len(raw))}, Msg: "malformed JSON: unexpected end of JSON input; each row must be one complete JSON object"})
		default:
			d.fail(nil, "malformed JSON: %v; each row must be one complete JSON object", err)
		}
		return nil
	}
	top, ok := v.(map[string]any)
	if !ok {
		d.fail(nil, "a row must be a JSON object, not %s", kindOf(v))
		return nil
	}
	s := &agenteval.Sample{}
	for k, v := range top {
		p := jsonpos.Path{k}
		switch k {
		case "id":
			s.ID = d.id(p, v)
		case "user_input", "messages":
			// handled below, to check that exactly one is present
		case "reference":
			s.Reference = d.str(p, v)
		case "reference_tool_calls":
			if v != nil {
				s.ReferenceToolCalls = d.toolCalls(p, v, true)
				if s.ReferenceToolCalls == nil {
					s.ReferenceToolCalls = []agenteval.ToolCall{}
				}
			}
		case "reference_topics":
			if v != nil {
				s.ReferenceTopics = d.strList(p, v)
			}
		case "rubrics":
			if v != nil {
				s.Rubrics = d.strMap(p, v)
			}
		case "metadata":
			if v != nil {
				if m := d.object(p, v); m != nil {
					if s.Metadata == nil {
						s.Metadata = map[string]any{}
					}
					for mk, mv := range m {
						s.Metadata[mk] = mv
					}
				}
			}
		default:
			if near := suggest.Closest(k, rowKeys); near != "" {
				d.fail(keyOf(p), "unknown field; did you mean %q?", near)
				continue
			}
			// Extra columns are kept, so that nothing in the user's data is lost.
			if s.Metadata == nil {
				s.Metadata = map[string]any{}
			}
			if _, taken := s.Metadata[k]; !taken {
				s.Metadata[k] = v
			}
		}
	}
	ui, hasUI := top["user_input"]
	msgs, hasMsgs := top["messages"]
	switch {
	case hasUI && hasMsgs:
		d.fail(jsonpos.Path{"messages"}, "the row has both user_input and messages; keep one of them")
	case !hasUI && !hasMsgs:
		if d.referenceOnly {
			break
		}
		d.fail(nil, "the row has no conversation; put its messages under \"user_input\" (Ragas) or \"messages\" (OpenAI)")
	case hasUI:
		s.UserInput = d.conversation(jsonpos.Path{"user_input"}, ui)
	default:
		s.UserInput = d.conversation(jsonpos.Path{"messages"}, msgs)
	}
	return s
}

// syntaxOffset marks a raw byte offset inside a path; problemOffset
// understands it.
type syntaxOffset int64

func (d *decoder) id(p jsonpos.Path, v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case json.Number:
		return string(x)
	}
	d.fail(p, "id must be a string or a number, not %s", kindOf(v))
	return ""
}

func (d *decoder) str(p jsonpos.Path, v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	}
	d.fail(p, "must be a string, not %s", kindOf(v))
	return ""
}

func (d *decoder) strList(p jsonpos.Path, v any) []string {
	items, ok := v.([]any)
	if !ok {
		d.fail(p, "must be a list of strings, not %s", kindOf(v))
		return nil
	}
	out := make([]string, 0, len(items))
	for i, it := range items {
		out = append(out, d.str(p.Append(i), it))
	}
	return out
}

func (d *decoder) strMap(p jsonpos.Path, v any) map[string]string {
	m, ok := v.(map[string]any)
	if !ok {
		d.fail(p, "must be an object of name: text pairs, not %s", kindOf(v))
		return nil
	}
	out := make(map[string]string, len(m))
	for k, it := range m {
		out[k] = d.str(p.Append(k), it)
	}
	return out
}

func (d *decoder) object(p jsonpos.Path, v any) map[string]any {
	m, ok := v.(map[string]any)
	if !ok {
		d.fail(p, "must be a JSON object, not %s", kindOf(v))
		return nil
	}
	return m
}

func (d *decoder) conversation(p jsonpos.Path, v any) agenteval.Conversation {
	items, ok := v.([]any)
	if !ok {
		d.fail(p, "must be a list of messages, not %s", kindOf(v))
		return nil
	}
	conv := make(agenteval.Conversation, 0, len(items))
	good := true
	for i, it := range items {
		m, ok := d.message(p.Append(i), it)
		good = good && ok
		conv = append(conv, m)
	}
	if !good {
		// Structural rules on messages that did not decode would only repeat
		// the problems already reported.
		return conv
	}
	for _, me := range agenteval.MessageErrors(conv.Validate()) {
		mp := p.Append(me.Index)
		if me.Field != "" {
			mp = append(mp, parseField(me.Field)...)
		}
		d.fail(mp, "%s", me.Msg)
	}
	return conv
}

// parseField turns "tool_calls[1].name" into path elements.
func parseField(f string) jsonpos.Path {
	var out jsonpos.Path
	for _, part := range strings.Split(f, ".") {
		name, rest, _ := strings.Cut(part, "[")
		if name != "" {
			out = append(out, name)
		}
		for rest != "" {
			num, after, _ := strings.Cut(rest, "]")
			if n, err := strconv.Atoi(num); err == nil {
				out = append(out, n)
			}
			_, rest, _ = strings.Cut(after, "[")
		}
	}
	return out
}

func (d *decoder) message(p jsonpos.Path, v any) (agenteval.Message, bool) {
	var m agenteval.Message
	f, ok := v.(map[string]any)
	if !ok {
		d.fail(p, "a message must be a JSON object, not %s", kindOf(v))
		return m, false
	}
	before := len(d.problems)
	var tr, rr agenteval.Role
	if typ := f["type"]; typ != nil {
		tr = d.role(p.Append("type"), typ)
	}
	if role := f["role"]; role != nil {
		rr = d.role(p.Append("role"), role)
	}
	switch {
	case tr != "" && rr != "" && tr != rr:
		d.fail(p.Append("role"), "role %q disagrees with type %q; keep one of them", rr, tr)
	case tr != "":
		m.Role = tr
	case rr != "":
		m.Role = rr
	case f["type"] == nil && f["role"] == nil:
		d.fail(p, "message has no type or role; set \"type\" to human, ai or tool (Ragas) or \"role\" to user, assistant, tool or system")
	}
	for k, fv := range f {
		switch k {
		case "type", "role":
		case "content":
			m.Content = d.content(p.Append(k), fv)
		case "tool_calls":
			if fv != nil {
				m.ToolCalls = d.toolCalls(p.Append(k), fv, false)
			}
		case "tool_call_id":
			m.ToolCallID = d.id(p.Append(k), fv)
		case "name":
			m.Name = d.str(p.Append(k), fv)
		case "metadata":
			if fv != nil {
				m.Metadata = d.object(p.Append(k), fv)
			}
		default:
			// Other keys (refusal, annotations, audio, ...) are allowed, as
			// OpenAI exports carry them; only a likely typo is reported.
			if near := suggest.Closest(k, messageKeys); near != "" {
				d.fail(keyOf(p.Append(k)), "unknown field; did you mean %q?", near)
			}
		}
	}
	return m, len(d.problems) == before
}

func (d *decoder) role(p jsonpos.Path, v any) agenteval.Role {
	s := d.str(p, v)
	if s == "" {
		return ""
	}
	r, ok := agenteval.ParseRole(s)
	if !ok {
		if p[len(p)-1] == "type" {
			d.fail(p, "unknown message type %q; use human, ai or tool", s)
		} else {
			d.fail(p, "unknown role %q; use user, assistant, tool or system", s)
		}
	}
	return r
}

// content accepts a string, null, or OpenAI's list of content parts, whose
// text parts are joined with newlines.
func (d *decoder) content(p jsonpos.Path, v any) string {
	parts, ok := v.([]any)
	if !ok {
		return d.str(p, v)
	}
	var texts []string
	for i, part := range parts {
		pm, ok := part.(map[string]any)
		if !ok {
			d.fail(p.Append(i), "a content part must be an object like {\"type\": \"text\", \"text\": ...}, not %s", kindOf(part))
			continue
		}
		if typ, _ := pm["type"].(string); typ == "text" || typ == "" {
			if t, ok := pm["text"].(string); ok {
				texts = append(texts, t)
			}
		}
	}
	return strings.Join(texts, "\n")
}

// toolCalls decodes a list of calls. It accepts Ragas's {name, args}, OpenAI's
// {id, type, function: {name, arguments}} with arguments as a JSON string,
// and AgentV's {tool, input}. In a recorded assistant message, arguments that
// are not valid JSON are kept as raw text (the model really produced them);
// in a reference they are an error.
func (d *decoder) toolCalls(p jsonpos.Path, v any, reference bool) []agenteval.ToolCall {
	items, ok := v.([]any)
	if !ok {
		d.fail(p, "tool calls must be a list, not %s", kindOf(v))
		return nil
	}
	out := make([]agenteval.ToolCall, 0, len(items))
	for i, it := range items {
		ip := p.Append(i)
		f, ok := it.(map[string]any)
		if !ok {
			d.fail(ip, "a tool call must be a JSON object like {\"name\": ..., \"args\": {...}}, not %s", kindOf(it))
			continue
		}
		var tc agenteval.ToolCall
		var args any
		var rawArgs string
		argsPath := ip
		for k, fv := range f {
			switch k {
			case "id":
				tc.ID = d.id(ip.Append(k), fv)
			case "type":
			case "name", "tool":
				tc.Name = d.str(ip.Append(k), fv)
			case "args", "arguments", "input":
				args, argsPath = fv, ip.Append(k)
			case "raw_args":
				// Our own export keeps undecodable arguments here.
				rawArgs = d.str(ip.Append(k), fv)
			case "function":
				fn, ok := fv.(map[string]any)
				if !ok {
					d.fail(ip.Append(k), "function must be an object with name and arguments")
					continue
				}
				if n, ok := fn["name"]; ok {
					tc.Name = d.str(ip.Append(k, "name"), n)
				}
				if a, ok := fn["arguments"]; ok {
					args, argsPath = a, ip.Append(k, "arguments")
				}
			default:
				if near := suggest.Closest(k, toolCallKeys); near != "" {
					d.fail(keyOf(ip.Append(k)), "unknown field; did you mean %q?", near)
				}
			}
		}
		if tc.Name == "" {
			d.fail(ip, "tool call has no name; give \"name\" (or function.name)")
		}
		tc.Args, tc.RawArgs = d.args(argsPath, args, reference)
		tc.KeyOrder = d.keyOrder(argsPath, args, tc.Args)
		if rawArgs != "" && len(tc.Args) == 0 {
			if reference {
				d.fail(ip.Append("raw_args"), "a reference call cannot have raw_args; write its arguments as a JSON object")
			} else {
				d.warn(ip.Append("raw_args"), "arguments were not valid JSON when recorded; kept as raw text, and every check of this call's arguments will fail")
				tc.Args, tc.RawArgs = nil, rawArgs
			}
		}
		out = append(out, tc)
	}
	return out
}

func (d *decoder) args(p jsonpos.Path, v any, reference bool) (map[string]any, string) {
	switch x := v.(type) {
	case nil:
		return map[string]any{}, ""
	case map[string]any:
		return x, ""
	case string:
		inner := strings.TrimSpace(x)
		if inner == "" {
			return map[string]any{}, ""
		}
		var decoded any
		err := strictjson.Decode([]byte(inner), &decoded)
		if err == nil {
			if m, ok := decoded.(map[string]any); ok {
				return m, ""
			}
		}
		problem := "not valid JSON"
		if err == nil {
			problem = "JSON " + strings.TrimPrefix(strings.TrimPrefix(kindOf(decoded), "a "), "an ") + ", not an object"
		}
		if reference {
			d.fail(p, "arguments string is %s; write the expected arguments as a JSON object", problem)
			return nil, ""
		}
		// The model really produced this: keep it, so the call fails the
		// checks of its arguments instead of the whole row being dropped.
		d.warn(p, "arguments are %s; kept as raw text, and every check of this call's arguments will fail", problem)
		return nil, x
	}
	d.fail(p, "arguments must be a JSON object, not %s", kindOf(v))
	return nil, ""
}

// keyOrder finds the written order of the objects nested in a call's
// arguments: from the JSON text of OpenAI's string form, or from the row's
// raw bytes for an object. Only arguments with nested objects look.
func (d *decoder) keyOrder(p jsonpos.Path, written any, args map[string]any) map[string][]string {
	if !agenteval.HasNestedObjects(args) {
		return nil
	}
	switch x := written.(type) {
	case string:
		return agenteval.KeyOrderOf([]byte(x))
	case map[string]any:
		if d.raw == nil || len(p) < d.skip {
			return nil
		}
		return agenteval.KeyOrderOf(d.raw[jsonpos.Offset(d.raw, p[d.skip:]):])
	}
	return nil
}

// keyOf points a path at its last key rather than at that key's value.
func keyOf(p jsonpos.Path) jsonpos.Path {
	if len(p) == 0 {
		return p
	}
	if k, ok := p[len(p)-1].(string); ok {
		out := append(jsonpos.Path{}, p[:len(p)-1]...)
		return append(out, jsonpos.KeyName(k))
	}
	return p
}

func kindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "an object"
	case []any:
		return "a list"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	}
	return fmt.Sprintf("%T", v)
}

// sortProblems orders problems by where they are in the row, so reports
// read top to bottom whatever order the decoder met them in.
func sortProblems(raw []byte, ps []Problem) {
	offs := make([]int, len(ps))
	for i, p := range ps {
		offs[i] = problemOffset(raw, p.Path)
	}
	idx := make([]int, len(ps))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return offs[idx[a]] < offs[idx[b]] })
	sorted := make([]Problem, len(ps))
	for i, j := range idx {
		sorted[i] = ps[j]
	}
	copy(ps, sorted)
}

func problemOffset(raw []byte, p jsonpos.Path) int {
	if len(p) == 1 {
		if so, ok := p[0].(syntaxOffset); ok {
			off := int(so) - 1
			if off < 0 {
				off = 0
			}
			return off
		}
	}
	return jsonpos.Offset(raw, p)
}

// DecodeMessages decodes a JSON list of messages in any form a dataset row
// accepts (role or Ragas type; tool calls as {name, args} or OpenAI's
// function form), without the structural rules of a whole conversation:
// agents return fragments, such as an assistant message and its tool
// results. Problems are joined into one error naming the JSON path.
func DecodeMessages(data []byte) (agenteval.Conversation, error) {
	var v any
	if err := strictjson.Decode(data, &v); err != nil {
		return nil, fmt.Errorf("messages are not valid JSON: %w", err)
	}
	items, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("messages must be a JSON list, not %s", kindOf(v))
	}
	d := decoder{raw: data, skip: 1}
	var out agenteval.Conversation
	for i, it := range items {
		m, _ := d.message(jsonpos.Path{"messages", i}, it)
		out = append(out, m)
	}
	var errs []error
	for _, p := range d.problems {
		if !p.Warning {
			errs = append(errs, fmt.Errorf("%s: %s", p.Path, p.Msg))
		}
	}
	return out, errors.Join(errs...)
}
