package trace

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Flattened, indexed message attributes, as OpenLLMetry
// (gen_ai.prompt.N.role, gen_ai.prompt.N.tool_calls.K.name) and
// OpenInference (llm.input_messages.N.message.role,
// llm.input_messages.N.message.tool_calls.K.tool_call.function.name)
// write them.
//
// Sources: traceloop/openllmetry, packages/opentelemetry-semantic-
// conventions-ai; Arize-ai/openinference, spec/semantic_conventions.md.

// indexed groups the attributes under prefix by their first index: for
// "gen_ai.prompt." it returns {0: {"role": v, "tool_calls.0.name": v}}.
func indexed(ad *argDecoder, a attrs, prefix string) (map[int]map[string]any, []int) {
	under := map[string]any{}
	for k, v := range a {
		if rest, ok := strings.CutPrefix(k, prefix); ok {
			under[rest] = orderedValue(ad, v)
		}
	}
	return subIndexed(under, "")
}

// indexedMessages reads OpenLLMetry's gen_ai.prompt.N.* or
// gen_ai.completion.N.*.
func indexedMessages(ad *argDecoder, a attrs, prefix string, r *record) []msg {
	byIdx, idx := indexed(ad, a, prefix)
	var out []msg
	for _, i := range idx {
		f := byIdx[i]
		where := fmt.Sprintf("%s%d", prefix, i)
		role := str(f, "role")
		if role == "" && strings.Contains(prefix, "completion") {
			role = "assistant"
		}
		body := contentText(ad.structured(f["content"]), r.pos, where+".content", &r.problems)
		m := msg{role: normRole(role), content: body.Text, parts: body.Parts, reasoning: body.Reasoning, callID: str(f, "tool_call_id")}
		calls, cidx := subIndexed(f, "tool_calls.")
		for _, j := range cidx {
			c := calls[j]
			cl := ad.args(ad.structured(c["arguments"]), r.pos, fmt.Sprintf("%s.tool_calls.%d", where, j), &r.problems)
			cl.id, cl.name = str(c, "id"), str(c, "name")
			m.calls = append(m.calls, cl)
		}
		if fn := str(f, "function_call.name"); fn != "" {
			cl := ad.args(ad.structured(f["function_call.arguments"]), r.pos, where+".function_call", &r.problems)
			cl.name = fn
			m.calls = append(m.calls, cl)
		}
		if m.role == "" {
			r.problems = append(r.problems, warnAt(r.pos, fmt.Sprintf("%s has no known role (%q); left out", where, role)))
			continue
		}
		out = append(out, m)
	}
	return out
}

// subIndexed groups fields like "tool_calls.0.name" by their index.
func subIndexed(f map[string]any, prefix string) (map[int]map[string]any, []int) {
	out := map[int]map[string]any{}
	for k, v := range f {
		rest, ok := strings.CutPrefix(k, prefix)
		if !ok {
			continue
		}
		num, field, _ := strings.Cut(rest, ".")
		i, err := strconv.Atoi(num)
		if err != nil || i < 0 {
			continue
		}
		if out[i] == nil {
			out[i] = map[string]any{}
		}
		out[i][field] = v
	}
	idx := make([]int, 0, len(out))
	for i := range out {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	return out, idx
}

// oiMessages reads OpenInference's llm.input_messages.N.message.* or
// llm.output_messages.N.message.*.
func oiMessages(ad *argDecoder, a attrs, prefix string, r *record) []msg {
	byIdx, idx := indexed(ad, a, prefix)
	var out []msg
	for _, i := range idx {
		f := map[string]any{}
		for k, v := range byIdx[i] {
			f[strings.TrimPrefix(k, "message.")] = v
		}
		where := fmt.Sprintf("%s%d", prefix, i)
		m := msg{role: normRole(str(f, "role")), content: str(f, "content"), callID: str(f, "tool_call_id"), name: str(f, "name")}
		parts, pidx := subIndexed(f, "contents.")
		var texts, reasoning []string
		for _, j := range pidx {
			p := parts[j]
			switch typ := str(p, "message_content.type"); typ {
			case "text", "":
				texts = append(texts, str(p, "message_content.text"))
			case "reasoning":
				reasoning = append(reasoning, str(p, "message_content.text"))
			case "tool_use":
			default:
				r.problems = append(r.problems, warnAt(r.pos, fmt.Sprintf("%s.message.contents.%d has type %q, which is not text; left out", where, j, typ)))
			}
		}
		if m.content == "" && len(texts) > 0 {
			m.content = strings.Join(texts, "\n")
		}
		m.reasoning = strings.Join(reasoning, "\n")
		calls, cidx := subIndexed(f, "tool_calls.")
		for _, j := range cidx {
			c := calls[j]
			cl := ad.args(ad.structured(c["tool_call.function.arguments"]), r.pos, fmt.Sprintf("%s.message.tool_calls.%d", where, j), &r.problems)
			cl.id, cl.name = str(c, "tool_call.id"), str(c, "tool_call.function.name")
			m.calls = append(m.calls, cl)
		}
		if fn := str(f, "function_call_name"); fn != "" {
			cl := ad.args(ad.structured(f["function_call_arguments_json"]), r.pos, where+".message.function_call", &r.problems)
			cl.name = fn
			m.calls = append(m.calls, cl)
		}
		if m.role == "" {
			r.problems = append(r.problems, warnAt(r.pos, fmt.Sprintf("%s has no known role (%q); left out", where, str(f, "role"))))
			continue
		}
		out = append(out, m)
	}
	return out
}
