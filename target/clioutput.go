package target

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/internal/jsonvalue"
)

// A cli target's reply file is read as AgentV reads it: a JSON object
// whose every field has the expected type (output or output_messages, a
// list of messages; text; token_usage {input, output, cached}; cost_usd;
// duration_ms) gives the reply and what it cost; anything else, invalid
// JSON or a field of the wrong type included, is the reply as plain
// text, with no metrics.

// cliOutput is the reply file's object once it has passed the checks.
type cliOutput struct {
	text       json.RawMessage // nil when absent
	output     []cliMessage    // nil when absent
	usage      *agenteval.Usage
	costUSD    *float64
	durationMS *float64
}

type cliMessage struct {
	role       string
	name       string
	content    json.RawMessage
	toolCalls  []cliCall
	startTime  string
	endTime    string
	durationMS *float64
	metadata   map[string]any
}

type cliCall struct {
	tool       string
	input      json.RawMessage
	output     json.RawMessage
	id         string
	status     string
	startTime  string
	endTime    string
	durationMS *float64
}

// decodeOutputFile reads a cli target's reply file.
func decodeOutputFile(data []byte) (*agenteval.AgentResponse, error) {
	// AgentV reads the file with its line endings made \n.
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	plain := func() *agenteval.AgentResponse {
		return &agenteval.AgentResponse{Messages: agenteval.Conversation{{Role: agenteval.RoleAssistant, Content: text}}}
	}
	out, ok := parseCLIOutput([]byte(text))
	if !ok {
		return plain(), nil
	}
	resp := &agenteval.AgentResponse{DurationMS: out.durationMS}
	if out.usage != nil {
		resp.Usage = *out.usage
	}
	resp.Usage.CostUSD = out.costUSD
	msgs := out.output
	switch {
	case len(msgs) > 0:
		conv, err := cliConversation(msgs)
		if err != nil {
			return nil, err
		}
		resp.Messages = conv
	case out.text != nil:
		resp.Messages = agenteval.Conversation{{Role: agenteval.RoleAssistant, Content: jsString(out.text)}}
	default:
		// An object with neither: the whole file is the reply, and its
		// metrics do not count.
		return plain(), nil
	}
	return resp, nil
}

// parseCLIOutput checks the reply file's object field by field; false
// means it is read as plain text.
func parseCLIOutput(data []byte) (cliOutput, bool) {
	var obj map[string]json.RawMessage
	if json.Unmarshal(data, &obj) != nil || obj == nil {
		return cliOutput{}, false
	}
	var out cliOutput
	if v, ok := obj["text"]; ok {
		out.text = v
	}
	// output wins over output_messages whenever it is there, even empty.
	for _, key := range []string{"output", "output_messages"} {
		v, ok := obj[key]
		if !ok {
			continue
		}
		msgs, ok := parseCLIMessages(v)
		if !ok {
			return cliOutput{}, false
		}
		if out.output == nil {
			out.output = msgs
			if out.output == nil {
				out.output = []cliMessage{}
			}
		}
	}
	if v, ok := obj["token_usage"]; ok {
		var u map[string]json.RawMessage
		if !isObject(v) || json.Unmarshal(v, &u) != nil {
			return cliOutput{}, false
		}
		in, ok1 := number(u["input"])
		o, ok2 := number(u["output"])
		if !ok1 || !ok2 {
			return cliOutput{}, false
		}
		usage := &agenteval.Usage{Calls: 1, InputTokens: tokens(*in), OutputTokens: tokens(*o)}
		if c, ok := u["cached"]; ok {
			n, ok := number(c)
			if !ok {
				return cliOutput{}, false
			}
			usage.CachedTokens = tokens(*n)
		}
		out.usage = usage
	}
	for _, f := range []struct {
		key string
		to  **float64
	}{{"cost_usd", &out.costUSD}, {"duration_ms", &out.durationMS}} {
		v, ok := obj[f.key]
		if !ok {
			continue
		}
		n, ok := number(v)
		if !ok {
			return cliOutput{}, false
		}
		// A negative cost or duration is dropped, as AgentV drops it.
		if *n >= 0 {
			*f.to = n
		}
	}
	return out, true
}

func parseCLIMessages(v json.RawMessage) ([]cliMessage, bool) {
	var items []json.RawMessage
	if !isArray(v) || json.Unmarshal(v, &items) != nil {
		return nil, false
	}
	var out []cliMessage
	for _, it := range items {
		var m map[string]json.RawMessage
		if !isObject(it) || json.Unmarshal(it, &m) != nil {
			return nil, false
		}
		var msg cliMessage
		var ok bool
		if msg.role, ok = str(m["role"], true); !ok {
			return nil, false
		}
		for _, f := range []struct {
			key string
			to  *string
		}{{"name", &msg.name}, {"start_time", &msg.startTime}, {"end_time", &msg.endTime}} {
			if *f.to, ok = str(m[f.key], false); !ok {
				return nil, false
			}
		}
		if msg.durationMS, ok = optNumber(m["duration_ms"]); !ok {
			return nil, false
		}
		msg.content = m["content"]
		if md, has := m["metadata"]; has {
			if !isObject(md) || json.Unmarshal(md, &msg.metadata) != nil {
				return nil, false
			}
		}
		if tc, has := m["tool_calls"]; has {
			var calls []json.RawMessage
			if !isArray(tc) || json.Unmarshal(tc, &calls) != nil {
				return nil, false
			}
			for _, c := range calls {
				call, ok := parseCLICall(c)
				if !ok {
					return nil, false
				}
				msg.toolCalls = append(msg.toolCalls, call)
			}
		}
		out = append(out, msg)
	}
	return out, true
}

func parseCLICall(v json.RawMessage) (cliCall, bool) {
	var m map[string]json.RawMessage
	if !isObject(v) || json.Unmarshal(v, &m) != nil {
		return cliCall{}, false
	}
	var c cliCall
	var ok bool
	if c.tool, ok = str(m["tool"], true); !ok {
		return cliCall{}, false
	}
	for _, f := range []struct {
		key string
		to  *string
	}{{"id", &c.id}, {"status", &c.status}, {"start_time", &c.startTime}, {"end_time", &c.endTime}} {
		if *f.to, ok = str(m[f.key], false); !ok {
			return cliCall{}, false
		}
	}
	switch c.status {
	case "", "ok", "error", "timeout", "cancelled", "unknown":
	default:
		return cliCall{}, false
	}
	if c.durationMS, ok = optNumber(m["duration_ms"]); !ok {
		return cliCall{}, false
	}
	c.input, c.output = m["input"], m["output"]
	return c, true
}

// cliConversation turns the output messages into the reply: text content
// (a string, or the text of a list of content blocks), tool calls, and
// for each call with an output, a tool message that carries it.
func cliConversation(msgs []cliMessage) (agenteval.Conversation, error) {
	var conv agenteval.Conversation
	for i, m := range msgs {
		role, ok := agenteval.ParseRole(m.role)
		if !ok {
			return nil, fmt.Errorf("its output message %d has role %q, which is not system, user, assistant or tool", i, m.role)
		}
		msg := agenteval.Message{Role: role, Name: m.name, Content: cliContent(m.content), Metadata: m.metadata,
			StartTime: m.startTime, EndTime: m.endTime}
		if m.durationMS != nil {
			msg.DurationMS = *m.durationMS
		}
		var results agenteval.Conversation
		for _, c := range m.toolCalls {
			call := agenteval.ToolCall{ID: c.id, Name: c.tool, Status: c.status, StartTime: c.startTime, EndTime: c.endTime}
			if c.durationMS != nil {
				call.DurationMS = *c.durationMS
			}
			if len(c.input) > 0 && string(c.input) != "null" {
				var args map[string]any
				if isObject(c.input) && json.Unmarshal(c.input, &args) == nil {
					call.Args = args
					call.KeyOrder = agenteval.KeyOrderOf(c.input)
				} else {
					// Arguments that are not an object are kept as the
					// JSON they were.
					call.RawArgs = string(c.input)
				}
			}
			msg.ToolCalls = append(msg.ToolCalls, call)
			if len(c.output) > 0 && string(c.output) != "null" {
				results = append(results, agenteval.Message{Role: agenteval.RoleTool, ToolCallID: c.id, Name: c.tool, Content: jsonvalue.Text(c.output)})
			}
		}
		conv = append(conv, msg)
		conv = append(conv, results...)
	}
	return conv, nil
}

// cliContent is a message's text: a string as it is, the text blocks of a
// list of content blocks joined by newlines, nothing otherwise.
func cliContent(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []map[string]any
	if !isArray(raw) || json.Unmarshal(raw, &blocks) != nil || len(blocks) == 0 {
		return ""
	}
	var texts []string
	for _, b := range blocks {
		t, _ := b["type"].(string)
		switch t {
		case "text":
			s, _ := b["text"].(string)
			texts = append(texts, s)
		case "image", "file":
		default:
			// Not a list of content blocks: AgentV keeps no text.
			return ""
		}
	}
	return strings.Join(texts, "\n")
}

// jsString is a JSON value as JavaScript's String() renders it: AgentV's
// reading of a text field that is not a string.
func jsString(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	return jsValue(v, false)
}

func jsValue(v any, inArray bool) string {
	switch x := v.(type) {
	case nil:
		if inArray {
			return ""
		}
		return "null"
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	case float64:
		return jsNumber(x)
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = jsValue(e, true)
		}
		return strings.Join(parts, ",")
	}
	return "[object Object]"
}

// jsNumber formats a number as JavaScript does.
func jsNumber(f float64) string {
	if f == 0 {
		return "0"
	}
	if a := math.Abs(f); a >= 1e21 || a < 1e-6 {
		s := strconv.FormatFloat(f, 'e', -1, 64)
		// Go writes 1e+21 and 1e-07; JavaScript, 1e+21 and 1e-7.
		mant, exp, _ := strings.Cut(s, "e")
		sign := exp[:1]
		exp = strings.TrimLeft(exp[1:], "0")
		return mant + "e" + sign + exp
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

func isObject(v json.RawMessage) bool {
	t := bytes.TrimSpace(v)
	return len(t) > 0 && t[0] == '{'
}

func isArray(v json.RawMessage) bool {
	t := bytes.TrimSpace(v)
	return len(t) > 0 && t[0] == '['
}

// str reads a string field: absent is "" (or not ok when required), and
// any other type is not ok.
func str(v json.RawMessage, required bool) (string, bool) {
	if v == nil {
		return "", !required
	}
	var s string
	if t := bytes.TrimSpace(v); len(t) == 0 || t[0] != '"' || json.Unmarshal(t, &s) != nil {
		return "", false
	}
	return s, true
}

func number(v json.RawMessage) (*float64, bool) {
	if v == nil {
		return nil, false
	}
	t := bytes.TrimSpace(v)
	if len(t) == 0 || !(t[0] == '-' || (t[0] >= '0' && t[0] <= '9')) {
		return nil, false
	}
	var f float64
	if json.Unmarshal(t, &f) != nil {
		return nil, false
	}
	return &f, true
}

func optNumber(v json.RawMessage) (*float64, bool) {
	if v == nil {
		return nil, true
	}
	return number(v)
}

func tokens(f float64) int64 { return int64(math.Round(f)) }
