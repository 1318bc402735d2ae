package trace

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/internal/jsonpos"
	"github.com/agenteval/agenteval/internal/messages"
)

// Helpers that turn the message shapes the formats share into msgs. They
// work on generic JSON values (numbers as json.Number), so the same code
// reads a JSON string attribute, a structured OTLP value and a log file.

// decodeJSON parses text as JSON, keeping numbers exact.
func decodeJSON(text string) (any, error) {
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("unexpected text after the JSON value")
	}
	return v, nil
}

// structured returns v, parsed first when it is a JSON string holding an
// object or a list.
func structured(v any) any {
	if s, ok := v.(string); ok {
		t := strings.TrimSpace(s)
		if strings.HasPrefix(t, "[") || strings.HasPrefix(t, "{") {
			if d, err := decodeJSON(t); err == nil {
				return d
			}
		}
	}
	return v
}

// structuredAll is structured, and also unquotes a JSON string literal.
func structuredAll(v any) any {
	if s, ok := v.(string); ok && strings.HasPrefix(strings.TrimSpace(s), `"`) {
		if d, err := decodeJSON(s); err == nil {
			return d
		}
	}
	return structured(v)
}

// text renders a value as message text: strings as they are, anything
// else as compact JSON.
func text(v any) string { return messages.Text(v) }

func str(m map[string]any, keys ...string) string {
	for _, k := range keys {
		if v, ok := m[k]; ok && v != nil {
			if s, ok := v.(string); ok {
				return s
			}
			return text(v)
		}
	}
	return ""
}

func obj(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

func list(v any) []any {
	l, _ := v.([]any)
	return l
}

func intOf(v any) (int64, bool) {
	switch x := v.(type) {
	case json.Number:
		if n, err := x.Int64(); err == nil {
			return n, true
		}
		if f, err := x.Float64(); err == nil {
			return int64(f), true
		}
	case string:
		if n, err := strconv.ParseInt(x, 10, 64); err == nil {
			return n, true
		}
	case float64:
		return int64(x), true
	case int64:
		return x, true
	}
	return 0, false
}

// decoder reads messages as a trace needs: what cannot be read is left
// out with a warning, never an error, since the trace is what was recorded.
func decoder() *messages.Decoder {
	return &messages.Decoder{Options: messages.Options{Lenient: true}}
}

// report turns what d found into warnings at pos, each naming its path
// below where.
func report(d *messages.Decoder, pos Pos, probs *[]problem) {
	for _, p := range d.Problems {
		*probs = append(*probs, warnAt(pos, p.Path.String()+": "+p.Msg))
	}
}

// parseArgs decodes tool-call arguments given as an object or as JSON
// text. Text that is not a JSON object is kept raw, with a warning, so the
// call still counts and fails the checks of its arguments.
func parseArgs(v any, pos Pos, where string, probs *[]problem) call {
	d := decoder()
	args, raw, order := d.Args(jsonpos.Path{where}, v)
	report(d, pos, probs)
	return call{args: args, rawArgs: raw, keyOrder: order}
}

// contentText reads content given as a string or as a list of parts
// ({type: text, text} and the like): its text, reasoning and images.
// Parts it cannot use are named in a warning.
func contentText(v any, pos Pos, where string, probs *[]problem) messages.Content {
	d := decoder()
	c := d.Content(jsonpos.Path{where}, v)
	report(d, pos, probs)
	return c
}

// openAIMessages reads messages in the OpenAI chat form: {role, content,
// tool_calls: [{id, function: {name, arguments}}], tool_call_id, name}, and
// every other form package messages reads (Ragas's {type: human|ai|tool}
// and {name, args} calls among them).
func openAIMessages(v any, pos Pos, where string, probs *[]problem) []msg {
	v = structured(v)
	if v == nil {
		return nil
	}
	d := decoder()
	conv, _ := d.List(jsonpos.Path{where}, v)
	report(d, pos, probs)
	return fromMessages(conv)
}

// openAIMessage reads one message of that form.
func openAIMessage(v any, pos Pos, where string, probs *[]problem) []msg {
	d := decoder()
	ms := d.Message(jsonpos.Path{where}, v)
	report(d, pos, probs)
	return fromMessages(ms)
}

// toolCalls reads a list of tool calls in any form package messages reads.
func toolCalls(v any, pos Pos, where string, probs *[]problem) []call {
	d := decoder()
	calls, _ := d.ToolCalls(jsonpos.Path{where}, v)
	report(d, pos, probs)
	out := make([]call, 0, len(calls))
	for _, c := range calls {
		out = append(out, fromToolCall(c))
	}
	return out
}

func fromMessages(ms []agenteval.Message) []msg {
	out := make([]msg, 0, len(ms))
	for _, m := range ms {
		out = append(out, fromMessage(m))
	}
	return out
}

// fromMessage is the msg of a decoded message; its reasoning, which the
// decoder keeps in the metadata, goes back to its own field.
func fromMessage(m agenteval.Message) msg {
	om := msg{role: string(m.Role), content: m.Content, callID: m.ToolCallID, name: m.Name, parts: m.Parts}
	for k, v := range m.Metadata {
		if r, ok := v.(string); ok && k == "reasoning" {
			om.reasoning = r
			continue
		}
		if om.meta == nil {
			om.meta = map[string]any{}
		}
		om.meta[k] = v
	}
	for _, c := range m.ToolCalls {
		om.calls = append(om.calls, fromToolCall(c))
	}
	return om
}

func fromToolCall(c agenteval.ToolCall) call {
	return call{id: c.ID, name: c.Name, args: c.Args, rawArgs: c.RawArgs, keyOrder: c.KeyOrder, durationMS: c.DurationMS}
}

// normRole maps the role names of the formats onto ours, by the one table
// of role names (agenteval.ParseRole); "" when it is not one.
func normRole(r string) string {
	if role, ok := agenteval.ParseRole(r); ok {
		return string(role)
	}
	return ""
}

// genAIMessages reads the current OpenTelemetry form:
// [{role, parts: [{type: text|tool_call|tool_call_response|reasoning, ...}],
// finish_reason}]. A message holding tool_call_response parts becomes one
// tool message per response, whatever its role (Anthropic-style APIs send
// results as user messages). Messages in the OpenAI form are read too,
// since some instrumentations write them here.
//
// An assistant message that holds calls and their responses is a whole
// agent run lumped together (the Vercel AI SDK's invoke_agent output:
// its text, then every call, then every response): it is split into the
// calls, their results, and the text, in that order, which is the order
// they happened in.
func genAIMessages(v any, pos Pos, where string, probs *[]problem) []msg {
	var ad argDecoder
	return ad.genAIMessages(v, pos, where, probs)
}

func (a *argDecoder) genAIMessages(v any, pos Pos, where string, probs *[]problem) []msg {
	var out []msg
	for i, it := range list(a.structured(v)) {
		m := obj(it)
		if m == nil {
			*probs = append(*probs, warnAt(pos, fmt.Sprintf("%s[%d] is not a message object; left out", where, i)))
			continue
		}
		w := fmt.Sprintf("%s[%d]", where, i)
		if _, ok := m["parts"]; !ok {
			out = append(out, a.openAIMessage(m, pos, w, probs)...)
			continue
		}
		role := normRole(str(m, "role"))
		if role == "" {
			*probs = append(*probs, warnAt(pos, fmt.Sprintf("%s: unknown role %q; left out", w, str(m, "role"))))
			continue
		}
		om := msg{role: role, name: str(m, "name")}
		var texts, reasoning []string
		var results []msg
		for j, p := range list(m["parts"]) {
			pm := obj(p)
			if pm == nil {
				continue
			}
			pw := fmt.Sprintf("%s.parts[%d]", w, j)
			switch typ := str(pm, "type"); typ {
			case "text":
				texts = append(texts, str(pm, "content", "text"))
			case "tool_call", "function_call":
				c := a.args(a.structured(pm["arguments"]), pos, pw, probs)
				c.id, c.name = str(pm, "id"), str(pm, "name")
				om.calls = append(om.calls, c)
			case "tool_call_response", "function_call_response":
				resp, ok := pm["response"]
				if !ok {
					resp = pm["result"]
				}
				results = append(results, msg{role: "tool", content: a.text(resp), callID: strings.TrimSpace(str(pm, "id")), name: str(pm, "name")})
			case "reasoning", "thinking":
				reasoning = append(reasoning, str(pm, "content", "text"))
			default:
				*probs = append(*probs, warnAt(pos, fmt.Sprintf("%s has type %q, which is not text, a tool call or a tool result; left out", pw, typ)))
			}
		}
		om.content = strings.Join(texts, "\n")
		om.reasoning = strings.Join(reasoning, "\n")
		if len(results) > 0 {
			if len(om.calls) > 0 {
				// A lumped run: the calls, their results, then what was
				// said after them.
				out = append(out, msg{role: role, calls: om.calls, reasoning: om.reasoning})
				out = append(out, results...)
				if om.content != "" {
					out = append(out, msg{role: role, content: om.content})
				}
				continue
			}
			if om.content != "" && role != "tool" {
				out = append(out, msg{role: role, content: om.content})
			}
			out = append(out, results...)
			continue
		}
		if role == "tool" && om.content != "" && len(om.calls) == 0 {
			om.callID = str(m, "id", "tool_call_id")
		}
		out = append(out, om)
	}
	return out
}

// openAIMessages is openAIMessages with the key order of the calls'
// arguments.
func (a *argDecoder) openAIMessages(v any, pos Pos, where string, probs *[]problem) []msg {
	return a.order(openAIMessages(a.structured(v), pos, where, probs))
}

// openAIMessage is openAIMessage with the key order of the calls'
// arguments.
func (a *argDecoder) openAIMessage(v any, pos Pos, where string, probs *[]problem) []msg {
	return a.order(openAIMessage(v, pos, where, probs))
}

// toolCalls is toolCalls with the key order of their arguments.
func (a *argDecoder) toolCalls(v any, pos Pos, where string, probs *[]problem) []call {
	return a.calls(toolCalls(a.structured(v), pos, where, probs))
}

// systemTexts reads gen_ai.system_instructions: a list of parts, or text.
func systemTexts(v any) []string {
	v = structured(v)
	if s, ok := v.(string); ok {
		return []string{s}
	}
	var out []string
	for _, p := range list(v) {
		switch x := p.(type) {
		case string:
			out = append(out, x)
		case map[string]any:
			if t := str(x, "content", "text"); t != "" {
				out = append(out, t)
			}
		}
	}
	return out
}

// firstChoice keeps the first assistant message of a model's output: the
// others are alternative choices, not turns of the conversation.
func firstChoice(out []msg, pos Pos, where string, probs *[]problem) []msg {
	n := 0
	for _, m := range out {
		if m.role == "assistant" {
			n++
		}
	}
	if n <= 1 {
		return out
	}
	*probs = append(*probs, warnAt(pos, fmt.Sprintf("%s holds %d choices; the first is the conversation's, the others are left out", where, n)))
	for i, m := range out {
		if m.role == "assistant" {
			return out[i : i+1]
		}
	}
	return out
}
