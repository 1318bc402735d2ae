package trace

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
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
func text(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case json.Number:
		return string(x)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimRight(b.String(), "\n")
}

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

// parseArgs decodes tool-call arguments given as an object or as JSON
// text. Text that is not a JSON object is kept raw, with a warning, so the
// call still counts and fails the checks of its arguments.
func parseArgs(v any, pos Pos, where string, probs *[]problem) call {
	switch x := v.(type) {
	case nil:
		return call{args: map[string]any{}}
	case map[string]any:
		return call{args: x}
	case string:
		t := strings.TrimSpace(x)
		if t == "" {
			return call{args: map[string]any{}}
		}
		if d, err := decodeJSON(t); err == nil {
			if m, ok := d.(map[string]any); ok {
				return call{args: m}
			}
		}
		*probs = append(*probs, warnAt(pos, where+": the arguments are not a JSON object; kept as raw text, and every check of this call's arguments will fail"))
		return call{rawArgs: x}
	}
	*probs = append(*probs, warnAt(pos, where+": the arguments are not a JSON object; kept as raw text, and every check of this call's arguments will fail"))
	return call{rawArgs: text(v)}
}

// contentText joins the text of content given as a string or as a list of
// parts ({type: text, text} and the like). Parts that are not text are
// named in a warning.
func contentText(v any, pos Pos, where string, probs *[]problem) (string, string) {
	switch x := v.(type) {
	case nil:
		return "", ""
	case string:
		return x, ""
	case []any:
		var texts, reasoning []string
		for i, p := range x {
			switch pm := p.(type) {
			case string:
				texts = append(texts, pm)
			case map[string]any:
				typ := str(pm, "type")
				switch typ {
				case "text", "input_text", "output_text", "":
					if t := str(pm, "text", "content"); t != "" {
						texts = append(texts, t)
					}
				case "reasoning", "thinking":
					reasoning = append(reasoning, str(pm, "reasoning", "thinking", "text", "content"))
				case "redacted_thinking", "tool_use", "tool_call", "function_call":
					// Calls are read from the message's own call list.
				default:
					*probs = append(*probs, warnAt(pos, fmt.Sprintf("%s: content part %d has type %q, which is not text; left out", where, i, typ)))
				}
			}
		}
		return strings.Join(texts, "\n"), strings.Join(reasoning, "\n")
	}
	return text(v), ""
}

// openAIMessages reads messages in the OpenAI chat form: {role, content,
// tool_calls: [{id, function: {name, arguments}}], tool_call_id, name}.
// Ragas's {type: human|ai|tool} and {name, args} calls are accepted too.
func openAIMessages(v any, pos Pos, where string, probs *[]problem) []msg {
	var out []msg
	for i, it := range list(structured(v)) {
		m := obj(it)
		if m == nil {
			continue
		}
		w := fmt.Sprintf("%s[%d]", where, i)
		role := str(m, "role", "type")
		content, reasoning := contentText(m["content"], pos, w, probs)
		om := msg{role: normRole(role), content: content, reasoning: reasoning, callID: str(m, "tool_call_id"), name: str(m, "name")}
		for j, tc := range list(m["tool_calls"]) {
			om.calls = append(om.calls, openAICall(obj(tc), pos, fmt.Sprintf("%s.tool_calls[%d]", w, j), probs))
		}
		if fc := obj(m["function_call"]); fc != nil {
			c := parseArgs(fc["arguments"], pos, w+".function_call", probs)
			c.name = str(fc, "name")
			om.calls = append(om.calls, c)
		}
		if om.role == "" {
			*probs = append(*probs, warnAt(pos, w+": the message has no role; left out"))
			continue
		}
		out = append(out, om)
	}
	return out
}

func openAICall(tc map[string]any, pos Pos, where string, probs *[]problem) call {
	if tc == nil {
		return call{}
	}
	var c call
	if fn := obj(tc["function"]); fn != nil {
		c = parseArgs(fn["arguments"], pos, where, probs)
		c.name = str(fn, "name")
	} else {
		args := tc["args"]
		if args == nil {
			args = tc["arguments"]
		}
		if args == nil {
			args = tc["input"]
		}
		c = parseArgs(args, pos, where, probs)
		c.name = str(tc, "name", "function")
	}
	c.id = str(tc, "id", "tool_call_id", "call_id")
	return c
}

// normRole maps the role names of the formats onto ours.
func normRole(r string) string {
	switch strings.ToLower(strings.TrimSpace(r)) {
	case "system", "developer":
		return "system"
	case "user", "human":
		return "user"
	case "assistant", "ai", "model", "agent", "bot":
		return "assistant"
	case "tool", "function", "ipython":
		return "tool"
	}
	return ""
}

// genAIMessages reads the current OpenTelemetry form:
// [{role, parts: [{type: text|tool_call|tool_call_response|reasoning, ...}],
// finish_reason}]. A message holding tool_call_response parts becomes one
// tool message per response, whatever its role (Anthropic-style APIs send
// results as user messages). Messages in the OpenAI form are read too,
// since some instrumentations write them here.
func genAIMessages(v any, pos Pos, where string, probs *[]problem) []msg {
	var out []msg
	for i, it := range list(structured(v)) {
		m := obj(it)
		if m == nil {
			*probs = append(*probs, warnAt(pos, fmt.Sprintf("%s[%d] is not a message object; left out", where, i)))
			continue
		}
		w := fmt.Sprintf("%s[%d]", where, i)
		if _, ok := m["parts"]; !ok {
			out = append(out, openAIMessages([]any{m}, pos, w, probs)...)
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
				c := parseArgs(pm["arguments"], pos, pw, probs)
				c.id, c.name = str(pm, "id"), str(pm, "name")
				om.calls = append(om.calls, c)
			case "tool_call_response", "function_call_response":
				resp, ok := pm["response"]
				if !ok {
					resp = pm["result"]
				}
				results = append(results, msg{role: "tool", content: text(resp), callID: strings.TrimSpace(str(pm, "id"))})
			case "reasoning", "thinking":
				reasoning = append(reasoning, str(pm, "content", "text"))
			default:
				*probs = append(*probs, warnAt(pos, fmt.Sprintf("%s has type %q, which is not text, a tool call or a tool result; left out", pw, typ)))
			}
		}
		om.content = strings.Join(texts, "\n")
		om.reasoning = strings.Join(reasoning, "\n")
		if len(results) > 0 {
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
