package trace

import (
	"fmt"
	"strings"
)

// Google ADK's spans (JavaScript and Python write the same attributes):
//
//   - call_llm: the model call, with the request and the response as JSON
//     text in gcp.vertex.agent.llm_request ({model, contents, config:
//     {system_instruction, tools}}) and gcp.vertex.agent.llm_response
//     ({content, usage_metadata, finish_reason}); contents are Gemini's
//     {role: user | model, parts: [{text} | {function_call: {id, name,
//     args}} | {function_response: {id, name, response}}]}, camelCase
//     from JavaScript, snake_case from Python;
//   - execute_tool NAME: gcp.vertex.agent.tool_call_args and
//     gcp.vertex.agent.tool_response (a result that is not an object is
//     wrapped as {"result": ...}, which is what the model is sent);
//   - execute_tool (merged): the responses of parallel calls again, as
//     one event; not read;
//   - invoke_agent NAME: the agent, and the session in
//     gen_ai.conversation.id.
//
// Source: google/adk-js, core/src/telemetry/tracing.ts; google/adk-python,
// src/google/adk/telemetry/tracing.py; the fixture was written by
// @google/adk 2.0.0.

func mapADK(ad *argDecoder, a attrs, name string, r *record) {
	switch {
	case a.str("gen_ai.operation.name") == "execute_tool" || a.has("gcp.vertex.agent.tool_call_args"):
		toolName := a.str("gen_ai.tool.name")
		if toolName == "(merged tools)" {
			r.kind = kindIgnored
			return
		}
		r.kind = kindTool
		if toolName == "" {
			toolName = strings.TrimPrefix(name, "execute_tool ")
		}
		t := &toolExec{}
		args, ok := a.valOf(ad, "gen_ai.tool.call.arguments")
		if !ok {
			args, _ = a.valOf(ad, "gcp.vertex.agent.tool_call_args")
		}
		t.call = ad.args(args, r.pos, "tool "+toolName, &r.problems)
		t.call.name, t.call.id = toolName, a.str("gen_ai.tool.call.id")
		if v, ok := a.valOf(ad, "gen_ai.tool.call.result", "gcp.vertex.agent.tool_response"); ok {
			t.result, t.hasResult = ad.text(v), true
		}
		if r.errText != "" {
			t.isError = true
			if !t.hasResult {
				t.result, t.hasResult = "error: "+r.errText, true
			}
		}
		r.tool = t
	case a.has("gcp.vertex.agent.llm_request"):
		r.kind = kindLLM
		req, _ := a.valOf(ad, "gcp.vertex.agent.llm_request")
		rq := obj(req)
		cfg := obj(first(rq, "config"))
		if sys := first(cfg, "systemInstruction", "system_instruction"); sys != nil {
			if s, ok := sys.(string); ok {
				r.system = []string{s}
			} else {
				var texts []string
				for _, p := range list(obj(sys)["parts"]) {
					texts = append(texts, str(obj(p), "text"))
				}
				r.system = []string{strings.Join(texts, "\n")}
			}
		}
		r.input = geminiContents(ad, list(first(rq, "contents")), r.pos, "gcp.vertex.agent.llm_request.contents", &r.problems)
		resp, _ := a.valOf(ad, "gcp.vertex.agent.llm_response")
		if c := obj(first(obj(resp), "content")); c != nil {
			r.output = geminiContents(ad, []any{c}, r.pos, "gcp.vertex.agent.llm_response.content", &r.problems)
		}
		r.usage = usageOf(a)
		if m := a.str("gen_ai.request.model"); m != "" && r.model == "" {
			r.model = m
		}
	default:
		mapGenAI(ad, a, name, resInfo{}, r)
	}
}

// first is the value of the first of keys m has.
func first(m map[string]any, keys ...string) any {
	for _, k := range keys {
		if v, ok := m[k]; ok {
			return v
		}
	}
	return nil
}

// geminiContents reads Gemini contents: a user content holding function
// responses becomes one tool message per response.
func geminiContents(ad *argDecoder, contents []any, pos Pos, where string, probs *[]problem) []msg {
	var out []msg
	for i, c := range contents {
		cm := obj(c)
		w := fmt.Sprintf("%s[%d]", where, i)
		role := normRole(str(cm, "role"))
		if role == "" {
			*probs = append(*probs, warnAt(pos, fmt.Sprintf("%s: unknown role %q; left out", w, str(cm, "role"))))
			continue
		}
		m := msg{role: role}
		var texts, reasoning []string
		var results []msg
		for j, p := range list(cm["parts"]) {
			pm := obj(p)
			pw := fmt.Sprintf("%s.parts[%d]", w, j)
			switch {
			case first(pm, "functionCall", "function_call") != nil:
				fc := obj(first(pm, "functionCall", "function_call"))
				cl := ad.args(fc["args"], pos, pw, probs)
				cl.id, cl.name = str(fc, "id"), str(fc, "name")
				m.calls = append(m.calls, cl)
			case first(pm, "functionResponse", "function_response") != nil:
				fr := obj(first(pm, "functionResponse", "function_response"))
				results = append(results, msg{role: "tool", content: ad.text(fr["response"]), callID: str(fr, "id"), name: str(fr, "name")})
			case pm["text"] != nil:
				if b, _ := pm["thought"].(bool); b {
					reasoning = append(reasoning, str(pm, "text"))
				} else {
					texts = append(texts, str(pm, "text"))
				}
			default:
				*probs = append(*probs, warnAt(pos, pw+" is not text, a function call or a function response; left out"))
			}
		}
		m.content = strings.Join(texts, "\n")
		m.reasoning = strings.Join(reasoning, "\n")
		if len(results) > 0 {
			if m.content != "" || len(m.calls) > 0 {
				out = append(out, m)
			}
			out = append(out, results...)
			continue
		}
		out = append(out, m)
	}
	return out
}
