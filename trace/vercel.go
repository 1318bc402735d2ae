package trace

import (
	"fmt"
	"strings"
)

// The Vercel AI SDK's own span attributes (ai.*), which its
// LegacyOpenTelemetry integration (@ai-sdk/otel) and its versions before
// 7 write; its OpenTelemetry integration writes the GenAI conventions,
// read with the rest of them.
//
//   - ai.generateText, ai.streamText, ai.generateObject, ai.streamObject:
//     one call of the SDK, every step in it: ai.prompt (JSON: {system,
//     prompt | messages}), ai.response.text (or .object), the function
//     in ai.telemetry.functionId;
//   - ai.generateText.doGenerate, ai.streamText.doStream (and the object
//     ones): one model call: ai.prompt.messages (the messages the
//     provider was sent, in the SDK's form), ai.response.text,
//     ai.response.toolCalls ([{toolCallId, toolName, input}]; args as
//     JSON text before version 5), ai.response.id, ai.usage.*;
//   - ai.toolCall: ai.toolCall.name, .id, .args (JSON text), .result.
//
// Source: vercel/ai, packages/ai/src/generate-text/generate-text.ts and
// stream-text.ts (recordSpan calls), packages/otel (LegacyOpenTelemetry);
// the fixtures were written by ai 7.0.173 and @ai-sdk/otel 1.0.173.

func mapVercel(ad *argDecoder, a attrs, r *record) {
	op := a.str("ai.operationId")
	if m := a.str("ai.response.model", "ai.model.id"); m != "" {
		r.model = m
	}
	switch {
	case op == "ai.toolCall":
		r.kind = kindTool
		name := a.str("ai.toolCall.name")
		t := &toolExec{}
		args, _ := a.valOf(ad, "ai.toolCall.args", "ai.toolCall.input")
		t.call = ad.args(args, r.pos, "ai.toolCall.args of "+name, &r.problems)
		t.call.name, t.call.id = name, a.str("ai.toolCall.id")
		if v, ok := a.val("ai.toolCall.result", "ai.toolCall.output"); ok {
			t.result, t.hasResult = resultText(ad, v), true
		}
		if r.errText != "" {
			t.isError = true
			if !t.hasResult {
				t.result, t.hasResult = "error: "+r.errText, true
			}
		}
		r.tool = t
	case strings.HasSuffix(op, ".doGenerate") || strings.HasSuffix(op, ".doStream"):
		r.kind = kindLLM
		if v, ok := a.valOf(ad, "ai.prompt.messages"); ok {
			r.input = aiMessages(ad, v, r.pos, "ai.prompt.messages", &r.problems)
		}
		r.output = vercelResponse(ad, a, r, true)
		r.respID = a.str("ai.response.id", "gen_ai.response.id")
		r.usage = vercelUsage(a)
	case op == "ai.generateText" || op == "ai.streamText" || op == "ai.generateObject" || op == "ai.streamObject":
		// The whole call: what the user gave, and the final answer. Its
		// ai.response.toolCalls are its steps', which their model calls
		// record in order.
		r.kind = kindAgent
		r.agent = a.str("ai.telemetry.functionId")
		if v, ok := a.valOf(ad, "ai.prompt"); ok {
			p := obj(v)
			if p == nil {
				if s, ok := v.(string); ok && s != "" {
					p = map[string]any{"prompt": s}
				}
			}
			if sys := str(p, "system"); sys != "" {
				r.system = []string{sys}
			}
			switch pr := p["prompt"].(type) {
			case string:
				r.input = append(r.input, msg{role: "user", content: pr})
			case []any:
				r.input = aiMessages(ad, pr, r.pos, "ai.prompt.prompt", &r.problems)
			}
			if ms, ok := p["messages"]; ok {
				r.input = aiMessages(ad, ms, r.pos, "ai.prompt.messages", &r.problems)
			}
		}
		r.output = vercelResponse(ad, a, r, false)
	default:
		// Embeddings, reranking and the like: not part of a conversation.
		r.kind = kindIgnored
	}
}

// vercelResponse is the assistant message an ai.* span answered: its text
// (or object), and with calls, its tool calls.
func vercelResponse(ad *argDecoder, a attrs, r *record, calls bool) []msg {
	m := msg{role: "assistant", content: a.str("ai.response.text")}
	if m.content == "" {
		if v, ok := a.valOf(ad, "ai.response.object"); ok {
			m.content = ad.text(v)
		}
	}
	if calls {
		if v, ok := a.valOf(ad, "ai.response.toolCalls"); ok {
			for i, c := range list(v) {
				cm := obj(c)
				where := fmt.Sprintf("ai.response.toolCalls[%d]", i)
				args, ok := cm["input"]
				if !ok {
					args = cm["args"]
				}
				cl := ad.args(ad.structured(args), r.pos, where, &r.problems)
				cl.id, cl.name = str(cm, "toolCallId"), str(cm, "toolName")
				m.calls = append(m.calls, cl)
			}
		}
	}
	if m.content == "" && len(m.calls) == 0 {
		return nil
	}
	return []msg{m}
}

func vercelUsage(a attrs) usage {
	u := usageOf(a)
	if u.set {
		return u
	}
	if n, ok := a.int("ai.usage.inputTokens", "ai.usage.promptTokens"); ok {
		u.input, u.set = n, true
	}
	if n, ok := a.int("ai.usage.outputTokens", "ai.usage.completionTokens"); ok {
		u.output, u.set = n, true
	}
	if n, ok := a.int("ai.usage.cachedInputTokens"); ok {
		u.cacheRead = n
	}
	return u
}

// aiMessages reads messages in the AI SDK's form (its ModelMessage, and
// the provider-level prompt it records): {role, content} where content is
// text or a list of parts: {type: text, text}, {type: reasoning, text},
// {type: tool-call, toolCallId, toolName, input} (args before version 5),
// {type: tool-result, toolCallId, toolName, output: {type: text | json |
// error-text | error-json | content, value}} (result before version 5),
// and files and images. A tool message becomes one message per result.
// Mastra records its agents' input in this form too.
func aiMessages(ad *argDecoder, v any, pos Pos, where string, probs *[]problem) []msg {
	var out []msg
	for i, it := range list(v) {
		m := obj(it)
		w := fmt.Sprintf("%s[%d]", where, i)
		if m == nil {
			*probs = append(*probs, warnAt(pos, w+" is not a message object; left out"))
			continue
		}
		role := normRole(str(m, "role"))
		if role == "" {
			*probs = append(*probs, warnAt(pos, fmt.Sprintf("%s: unknown role %q; left out", w, str(m, "role"))))
			continue
		}
		parts, isList := m["content"].([]any)
		if !isList {
			out = append(out, msg{role: role, content: str(m, "content")})
			continue
		}
		om := msg{role: role}
		var texts, reasoning []string
		var results []msg
		for j, p := range parts {
			pm := obj(p)
			pw := fmt.Sprintf("%s.content[%d]", w, j)
			switch typ := str(pm, "type"); typ {
			case "text":
				texts = append(texts, str(pm, "text"))
			case "reasoning", "redacted-reasoning":
				reasoning = append(reasoning, str(pm, "text"))
			case "tool-call":
				args, ok := pm["input"]
				if !ok {
					args = pm["args"]
				}
				c := ad.args(ad.structured(args), pos, pw, probs)
				c.id, c.name = str(pm, "toolCallId"), str(pm, "toolName")
				om.calls = append(om.calls, c)
			case "tool-result":
				content, isErr := aiToolOutput(ad, pm)
				results = append(results, msg{role: "tool", content: content, callID: str(pm, "toolCallId"), name: str(pm, "toolName"), isError: isErr})
			case "image", "file":
				*probs = append(*probs, warnAt(pos, fmt.Sprintf("%s is a %s part, which is not read; left out", pw, typ)))
			default:
				*probs = append(*probs, warnAt(pos, fmt.Sprintf("%s has type %q, which is not text, a tool call or a tool result; left out", pw, typ)))
			}
		}
		om.content = strings.Join(texts, "\n")
		om.reasoning = strings.Join(reasoning, "\n")
		if len(results) > 0 {
			if om.content != "" || len(om.calls) > 0 {
				out = append(out, msg{role: role, content: om.content, calls: om.calls, reasoning: om.reasoning})
			}
			out = append(out, results...)
			continue
		}
		out = append(out, om)
	}
	return out
}

// aiToolOutput is a tool-result part's result as text, and whether it is
// an error.
func aiToolOutput(ad *argDecoder, pm map[string]any) (string, bool) {
	o, ok := pm["output"]
	if !ok {
		// Before version 5: result, and isError.
		isErr, _ := pm["isError"].(bool)
		return ad.text(pm["result"]), isErr
	}
	om := obj(o)
	if om == nil {
		return ad.text(o), false
	}
	switch typ := str(om, "type"); typ {
	case "text", "error-text":
		return str(om, "value"), typ == "error-text"
	case "json", "error-json":
		return ad.text(om["value"]), typ == "error-json"
	case "content":
		var texts []string
		for _, p := range list(om["value"]) {
			pm := obj(p)
			if str(pm, "type") == "text" {
				texts = append(texts, str(pm, "text"))
			} else {
				texts = append(texts, ad.text(p))
			}
		}
		return strings.Join(texts, "\n"), false
	}
	return ad.text(o), false
}
