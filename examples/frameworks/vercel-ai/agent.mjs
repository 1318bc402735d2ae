// A restaurant agent built with the Vercel AI SDK, served to agenteval as
// an http target. The AI SDK is stateless, so the agent answers from the
// full history each request carries. Its reply is only text: the tool calls
// reach agenteval as OpenTelemetry spans (@ai-sdk/otel writes the GenAI
// conventions' execute_tool spans), which `agenteval run --otlp-listen`
// receives and puts into the transcript.
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, stepCountIs, tool } from 'ai';
import { z } from 'zod';

// The tools, with canned data.
const tools = {
  find_restaurants: tool({
    description: 'Find restaurants by cuisine and area.',
    inputSchema: z.object({ cuisine: z.string(), area: z.string() }),
    execute: async ({ cuisine }) => [{ name: 'Trattoria Roma', cuisine, area: 'river', rating: 4.6 }],
  }),
  check_availability: tool({
    description: 'Check whether a restaurant has a free table.',
    inputSchema: z.object({ restaurant: z.string(), time: z.string(), party_size: z.number().int() }),
    execute: async () => ({ available: true }),
  }),
  book_table: tool({
    description: 'Book a table and get a confirmation code.',
    inputSchema: z.object({ restaurant: z.string(), time: z.string(), party_size: z.number().int(), name: z.string() }),
    execute: async () => ({ confirmation: 'TR-1042' }),
  }),
};
// The provider reads OPENAI_BASE_URL and OPENAI_API_KEY.
const openai = createOpenAI();
const respond = (messages) => generateText({
  model: openai(process.env.MODEL ?? 'gpt-4.1-mini'),
  instructions: 'You help people find a restaurant and book a table. Check availability before booking.',
  messages,
  tools,
  stopWhen: stepCountIs(6),
});

// ---- glue: OpenTelemetry, and agenteval's http target ----
import http from 'node:http';
import { OpenTelemetry } from '@ai-sdk/otel';
import { context, propagation } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { BatchSpanProcessor, NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { registerTelemetry } from 'ai';
// The exporter reads OTEL_EXPORTER_OTLP_ENDPOINT, the batch processor
// OTEL_BSP_SCHEDULE_DELAY; register() sets the W3C trace context propagator.
new NodeTracerProvider({ spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())] }).register();
registerTelemetry(new OpenTelemetry());
http.createServer(async (req, res) => {
  let body = '';
  for await (const chunk of req) body += chunk;
  const history = JSON.parse(body).messages
    .filter((m) => (m.role === 'user' || m.role === 'assistant') && m.content).map(({ role, content }) => ({ role, content }));
  const turn = propagation.extract(context.active(), req.headers); // the turn's traceparent
  const result = await context.with(turn, () => respond(history));
  res.setHeader('Content-Type', 'application/json');
  res.end(JSON.stringify({ content: result.text }));
}).listen(Number(process.env.AGENT_PORT ?? 3103), '127.0.0.1');
