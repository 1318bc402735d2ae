package trace

import "fmt"

// Mastra's spans, as its OtelExporter (@mastra/otel-exporter) writes them:
// each carries mastra.span.type, and some GenAI attributes besides.
//
//   - agent_run (invoke_agent): the run's input, the messages it was
//     given, in mastra.agent_run.input (the AI SDK's message form); its
//     answer in mastra.agent_run.output ({text}); the thread, when the
//     run has memory, in gen_ai.conversation.id and
//     mastra.metadata.threadId;
//   - model_step (agent_step): one step: mastra.model_step.output is
//     {text, toolCalls: [{toolCallId, toolName, args}]}; its input holds
//     earlier calls only as "[tool: name]" placeholders, so it is not
//     read;
//   - model_inference (chat): the model call of a step: its usage. Its
//     gen_ai.output.messages hold the step's text alone, empty when the
//     step made calls, so its messages are the step's, read there;
//   - tool_call (execute_tool): gen_ai.tool.call.arguments and .result;
//   - model_generation and model_chunk: the same content again (the whole
//     run's, and each streamed piece); not read.
//
// Source: mastra-ai/mastra, observability/otel-exporter/src
// (gen-ai-semantics.ts, gen-ai-messages.ts) and packages/core/src/agent
// (the agent_run span); the fixtures were written by @mastra/core 1.71.0
// and @mastra/otel-exporter 1.4.0.

func mapMastra(ad *argDecoder, a attrs, name string, r *record) {
	switch typ := a.str("mastra.span.type"); typ {
	case "agent_run":
		r.kind = kindAgent
		if sys, ok := a.val("gen_ai.system_instructions"); ok {
			r.system = systemTexts(sys)
		}
		if v, ok := a.valOf(ad, "mastra.agent_run.input"); ok {
			switch x := v.(type) {
			case string:
				r.input = []msg{{role: "user", content: x}}
			default:
				r.input = aiMessages(ad, x, r.pos, "mastra.agent_run.input", &r.problems)
			}
		}
		if v, ok := a.valOf(ad, "mastra.agent_run.output"); ok {
			if t := str(obj(v), "text"); t != "" {
				r.output = []msg{{role: "assistant", content: t}}
			}
		}
	case "model_step":
		r.kind = kindLLM
		v, _ := a.valOf(ad, "mastra.model_step.output")
		out := obj(v)
		m := msg{role: "assistant", content: str(out, "text")}
		for i, c := range list(out["toolCalls"]) {
			cm := obj(c)
			args, ok := cm["args"]
			if !ok {
				args = cm["input"]
			}
			cl := ad.args(ad.structured(args), r.pos, fmt.Sprintf("mastra.model_step.output.toolCalls[%d]", i), &r.problems)
			cl.id, cl.name = str(cm, "toolCallId"), str(cm, "toolName")
			m.calls = append(m.calls, cl)
		}
		if m.content != "" || len(m.calls) > 0 {
			r.output = []msg{m}
		}
	case "model_inference":
		r.kind = kindUsage
		r.usage = usageOf(a)
	case "model_generation":
		// With an older core, the model call itself (its chat span).
		if a.str("gen_ai.operation.name") == "chat" {
			r.kind = kindUsage
			r.usage = usageOf(a)
			return
		}
		r.kind = kindIgnored
	case "model_chunk":
		r.kind = kindIgnored
	default:
		mapGenAI(ad, a, name, resInfo{}, r)
	}
}
