// A restaurant agent built with Google ADK, served over A2A by ADK's own
// toA2a. ADK keeps each conversation in a session named by the A2A
// contextId, and reports the agent's function calls and responses as A2A
// data parts, which agenteval's a2a target reads as tool calls.
import { FunctionTool, LlmAgent } from '@google/adk';
import { z } from 'zod';

// The tools, with canned data.
const tools = [
  new FunctionTool({
    name: 'find_restaurants',
    description: 'Find restaurants by cuisine and area.',
    parameters: z.object({ cuisine: z.string(), area: z.string() }),
    execute: async ({ cuisine }) => ({ restaurants: [{ name: 'Trattoria Roma', cuisine, area: 'river', rating: 4.6 }] }),
  }),
  new FunctionTool({
    name: 'check_availability',
    description: 'Check whether a restaurant has a free table.',
    parameters: z.object({ restaurant: z.string(), time: z.string(), party_size: z.number().int() }),
    execute: async () => ({ available: true }),
  }),
  new FunctionTool({
    name: 'book_table',
    description: 'Book a table and get a confirmation code.',
    parameters: z.object({ restaurant: z.string(), time: z.string(), party_size: z.number().int(), name: z.string() }),
    execute: async () => ({ confirmation: 'TR-1042' }),
  }),
];

// ---- glue: ADK JS has no OpenAI model, so this one speaks chat completions ----
import { BaseLlm } from '@google/adk';
import OpenAI from 'openai';
const client = new OpenAI(); // reads OPENAI_BASE_URL and OPENAI_API_KEY
const lower = (schema) => JSON.parse(JSON.stringify(schema ?? {}), (k, v) => (k === 'type' && typeof v === 'string' ? v.toLowerCase() : v));
class OpenAIChat extends BaseLlm {
  async *generateContentAsync(req) {
    const messages = [{ role: 'system', content: String(req.config?.systemInstruction ?? '') }];
    for (const { role, parts = [] } of req.contents) {
      const text = parts.filter((p) => p.text).map((p) => p.text).join('');
      const calls = parts.filter((p) => p.functionCall).map(({ functionCall: f }) =>
        ({ id: f.id, type: 'function', function: { name: f.name, arguments: JSON.stringify(f.args ?? {}) } }));
      if (text || calls.length) messages.push({ role: role === 'model' ? 'assistant' : 'user', content: text || null, ...(calls.length && { tool_calls: calls }) });
      for (const { functionResponse: f } of parts.filter((p) => p.functionResponse)) messages.push({ role: 'tool', tool_call_id: f.id, content: JSON.stringify(f.response) });
    }
    const fns = (req.config?.tools ?? []).flatMap((t) => t.functionDeclarations ?? []);
    const { choices: [{ message: m }] } = await client.chat.completions.create({ model: this.model, messages,
      tools: fns.map((f) => ({ type: 'function', function: { name: f.name, description: f.description, parameters: lower(f.parameters) } })) });
    const parts = (m.tool_calls ?? []).map((c) => ({ functionCall: { id: c.id, name: c.function.name, args: JSON.parse(c.function.arguments) } }));
    yield { content: { role: 'model', parts: m.content ? [{ text: m.content }, ...parts] : parts } };
  }
  async connect() { throw new Error('live connections are not supported'); }
}
// ---- end glue ----

const agent = new LlmAgent({
  name: 'restaurant',
  description: 'Finds restaurants and books tables.',
  model: new OpenAIChat({ model: process.env.MODEL ?? 'gpt-4.1-mini' }),
  instruction: 'You help people find a restaurant and book a table. Check availability before booking.',
  tools,
});

// ---- glue: serve it over A2A, on loopback, without authentication ----
import { toA2a } from '@google/adk/a2a';
const port = Number(process.env.AGENT_PORT ?? 3104);
const app = await toA2a(agent, { host: '127.0.0.1', port, allowUnauthenticated: true });
app.listen(port, '127.0.0.1');
