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
	"github.com/agenteval/agenteval/internal/messages"
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
	// msgs decodes the row's messages and reference calls; its problems
	// join the row's at the end.
	msgs *messages.Decoder
}

// messages returns the decoder of the row's messages, made on first use.
func (d *decoder) messages() *messages.Decoder {
	if d.msgs == nil {
		d.msgs = &messages.Decoder{Options: messages.Options{UnknownKey: d.unknownKey, KeyOrder: d.keyOrder}}
	}
	return d.msgs
}

// takeMessageProblems moves the message decoder's problems into the row's.
func (d *decoder) takeMessageProblems() {
	if d.msgs == nil {
		return
	}
	for _, p := range d.msgs.Problems {
		d.problems = append(d.problems, Problem(p))
	}
	d.msgs.Problems = nil
}

// unknownKey reports a key of a message or tool call that is probably a
// typo. Other keys are allowed, as OpenAI exports carry them (refusal,
// annotations, audio, ...).
func (d *decoder) unknownKey(p jsonpos.Path, what string, known []string) {
	if what != "a message" && what != "a tool call" {
		return
	}
	k, _ := p[len(p)-1].(jsonpos.KeyName)
	if near := suggest.Closest(string(k), known); near != "" {
		d.messages().Problems = append(d.messages().Problems, messages.Problem{Path: p, Msg: fmt.Sprintf("unknown field; did you mean %q?", near)})
	}
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
	defer d.takeMessageProblems()
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
				s.ReferenceToolCalls = d.referenceCalls(p, v)
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

// referenceCalls decodes the calls a conversation should make. Their
// arguments are written by a person, so arguments that do not parse are an
// error, not raw text kept for grading.
func (d *decoder) referenceCalls(p jsonpos.Path, v any) []agenteval.ToolCall {
	md := d.messages()
	md.StrictArgs = true
	defer func() { md.StrictArgs = false }()
	calls, results := md.ToolCalls(p, v)
	if len(results) > 0 {
		d.fail(p, "a reference call has no output; the conversation holds what tools returned")
	}
	if calls == nil {
		calls = []agenteval.ToolCall{}
	}
	return calls
}

func (d *decoder) conversation(p jsonpos.Path, v any) agenteval.Conversation {
	md := d.messages()
	before := md.Errors()
	conv, src := md.List(p, v)
	if md.Errors() > before || conv == nil {
		// Structural rules on messages that did not decode would only repeat
		// the problems already reported.
		return conv
	}
	for _, me := range agenteval.MessageErrors(conv.Validate()) {
		mp := p
		if me.Index < len(src) {
			mp = p.Append(src[me.Index])
		}
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

// keyOrder finds the written order of the objects nested in a call's
// arguments object from the row's raw bytes.
func (d *decoder) keyOrder(p jsonpos.Path) map[string][]string {
	if d.raw == nil || len(p) < d.skip {
		return nil
	}
	return agenteval.KeyOrderOf(d.raw[jsonpos.Offset(d.raw, p[d.skip:]):])
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

func kindOf(v any) string { return messages.KindOf(v) }

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
	if _, ok := v.([]any); !ok {
		return nil, fmt.Errorf("messages must be a JSON list, not %s", kindOf(v))
	}
	d := decoder{raw: data, skip: 1}
	out, _ := d.messages().List(jsonpos.Path{"messages"}, v)
	d.takeMessageProblems()
	var errs []error
	for _, p := range d.problems {
		if !p.Warning {
			errs = append(errs, fmt.Errorf("%s: %s", p.Path, p.Msg))
		}
	}
	return out, errors.Join(errs...)
}
