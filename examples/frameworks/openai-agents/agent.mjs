// A restaurant agent built with the OpenAI Agents SDK, served to agenteval
// as an http target. The agent keeps each conversation's history in a
// MemorySession keyed by conversation_id, and its reply lists the tool calls
// it made, so agenteval grades them without traces.
import { Agent, run, tool } from '@openai/agents';
import { z } from 'zod';

// The tools, with canned data.
const findRestaurants = tool({
  name: 'find_restaurants',
  description: 'Find restaurants by cuisine and area.',
  parameters: z.object({ cuisine: z.string(), area: z.string() }),
  execute: async ({ cuisine }) => JSON.stringify([{ name: 'Trattoria Roma', cuisine, area: 'river', rating: 4.6 }]),
});
const checkAvailability = tool({
  name: 'check_availability',
  description: 'Check whether a restaurant has a free table.',
  parameters: z.object({ restaurant: z.string(), time: z.string(), party_size: z.number().int() }),
  execute: async () => JSON.stringify({ available: true }),
});
const bookTable = tool({
  name: 'book_table',
  description: 'Book a table and get a confirmation code.',
  parameters: z.object({ restaurant: z.string(), time: z.string(), party_size: z.number().int(), name: z.string() }),
  execute: async () => JSON.stringify({ confirmation: 'TR-1042' }),
});

const agent = new Agent({
  name: 'restaurant',
  instructions: 'You help people find a restaurant and book a table. Check availability before booking.',
  model: process.env.MODEL ?? 'gpt-4.1-mini',
  tools: [findRestaurants, checkAvailability, bookTable],
});

// ---- glue: agenteval's http target ----
import http from 'node:http';
import { MemorySession, setTracingDisabled } from '@openai/agents';
setTracingDisabled(true); // the SDK's own traces go to OpenAI, not OTLP
const sessions = new Map();
http.createServer(async (req, res) => {
  let body = '';
  for await (const chunk of req) body += chunk;
  const { conversation_id: id, messages } = JSON.parse(body);
  if (!sessions.has(id)) sessions.set(id, new MemorySession());
  const result = await run(agent, messages.at(-1).content, { session: sessions.get(id) });
  const out = result.newItems.map((it) => it.rawItem).flatMap((r) =>
    r.type === 'function_call' ? [{ role: 'assistant', tool_calls: [{ id: r.callId, name: r.name, args: JSON.parse(r.arguments) }] }]
    : r.type === 'function_call_result' ? [{ role: 'tool', tool_call_id: r.callId, content: r.output.text ?? r.output }] : []);
  res.setHeader('Content-Type', 'application/json');
  res.end(JSON.stringify({ messages: [...out, { role: 'assistant', content: result.finalOutput }] }));
}).listen(Number(process.env.AGENT_PORT ?? 3101), '127.0.0.1');
