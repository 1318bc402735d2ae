package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	oteltrace "go.opentelemetry.io/otel/trace"
)

// otlpAgentMain is a command agent that reports its tool calls only in
// its OpenTelemetry spans: its replies are plain text. It exports with the
// official Go SDK and OTLP/HTTP exporter, configured from the environment
// (OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_BSP_SCHEDULE_DELAY), parents each turn
// on the request's traceparent, and names the conversation in
// gen_ai.conversation.id, as the GenAI semantic conventions say.
//
// A message naming a city gets a get_weather call; "book" also gets a
// book_table call. With OTLP_AGENT_NO_PARENT set it ignores the
// traceparent, so only the conversation id matches its spans.
func otlpAgentMain() int {
	ctx := context.Background()
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	res := resource.NewSchemaless(attribute.String("service.name", "weather-agent"))
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	defer tp.Shutdown(ctx)
	tracer := tp.Tracer("weather-agent")
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var req struct {
			ConversationID string `json:"conversation_id"`
			Messages       []struct {
				Role    string `json:"role"`
				Content string `json:"content"`
			} `json:"messages"`
			TraceParent string `json:"traceparent"`
		}
		if err := json.Unmarshal(sc.Bytes(), &req); err != nil {
			fmt.Println(`{"error": "bad request"}`)
			continue
		}
		user := ""
		for _, m := range req.Messages {
			if m.Role == "user" {
				user = m.Content
			}
		}
		tctx := ctx
		if req.TraceParent != "" && os.Getenv("OTLP_AGENT_NO_PARENT") == "" {
			tctx = propagation.TraceContext{}.Extract(ctx, propagation.MapCarrier{"traceparent": req.TraceParent})
		}
		conv := attribute.String("gen_ai.conversation.id", req.ConversationID)
		actx, agent := tracer.Start(tctx, "invoke_agent weather-agent", oteltrace.WithAttributes(
			attribute.String("gen_ai.operation.name", "invoke_agent"), attribute.String("gen_ai.agent.name", "weather-agent"), conv))
		type call struct{ id, name, args, result string }
		var calls []call
		for _, city := range []string{"Paris", "Lisbon", "Oslo"} {
			if strings.Contains(user, city) {
				calls = append(calls, call{fmt.Sprintf("call_%d", len(calls)+1), "get_weather", fmt.Sprintf(`{"city":%q}`, city), "sunny, 21C"})
			}
		}
		if strings.Contains(strings.ToLower(user), "book") {
			calls = append(calls, call{fmt.Sprintf("call_%d", len(calls)+1), "book_table", `{"time":"8pm"}`, "booked"})
		}
		userMsg := fmt.Sprintf(`[{"role":"user","parts":[{"type":"text","content":%q}]}]`, user)
		var parts []string
		for _, c := range calls {
			parts = append(parts, fmt.Sprintf(`{"type":"tool_call","id":%q,"name":%q,"arguments":%s}`, c.id, c.name, c.args))
		}
		if len(calls) > 0 {
			_, chat := tracer.Start(actx, "chat fake-model", oteltrace.WithAttributes(attribute.String("gen_ai.operation.name", "chat"), conv,
				attribute.String("gen_ai.input.messages", userMsg),
				attribute.String("gen_ai.output.messages", `[{"role":"assistant","parts":[`+strings.Join(parts, ",")+`],"finish_reason":"tool_call"}]`),
				attribute.Int("gen_ai.usage.input_tokens", 40), attribute.Int("gen_ai.usage.output_tokens", 12)))
			chat.End()
		}
		for _, c := range calls {
			// The tool spans carry no conversation id: they are matched by
			// their trace.
			_, tool := tracer.Start(actx, "execute_tool "+c.name, oteltrace.WithAttributes(attribute.String("gen_ai.operation.name", "execute_tool"),
				attribute.String("gen_ai.tool.name", c.name), attribute.String("gen_ai.tool.call.id", c.id),
				attribute.String("gen_ai.tool.call.arguments", c.args), attribute.String("gen_ai.tool.call.result", c.result)))
			tool.End()
		}
		reply := "It is sunny."
		_, chat := tracer.Start(actx, "chat fake-model", oteltrace.WithAttributes(attribute.String("gen_ai.operation.name", "chat"), conv,
			attribute.String("gen_ai.response.id", fmt.Sprintf("chatcmpl-%d", len(req.Messages))),
			attribute.String("gen_ai.output.messages", fmt.Sprintf(`[{"role":"assistant","parts":[{"type":"text","content":%q}],"finish_reason":"stop"}]`, reply)),
			attribute.Int("gen_ai.usage.input_tokens", 60), attribute.Int("gen_ai.usage.output_tokens", 5)))
		chat.End()
		agent.End()
		out, _ := json.Marshal(map[string]string{"content": reply})
		fmt.Println(string(out))
	}
	return 0
}
