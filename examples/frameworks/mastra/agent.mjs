// A restaurant agent built with Mastra, served over A2A by Mastra's own
// server (@mastra/express). Mastra keeps each conversation in a memory
// thread named by the A2A contextId, and puts the turn's tool calls in the
// task's metadata (execution.toolCalls, execution.toolResults).
import { Mastra } from '@mastra/core';
import { Agent } from '@mastra/core/agent';
import { InMemoryStore } from '@mastra/core/storage';
import { createTool } from '@mastra/core/tools';
import { Memory } from '@mastra/memory';
import { z } from 'zod';

// The tools, with canned data.
const tools = {
  find_restaurants: createTool({
    id: 'find_restaurants',
    description: 'Find restaurants by cuisine and area.',
    inputSchema: z.object({ cuisine: z.string(), area: z.string() }),
    execute: async ({ cuisine }) => [{ name: 'Trattoria Roma', cuisine, area: 'river', rating: 4.6 }],
  }),
  check_availability: createTool({
    id: 'check_availability',
    description: 'Check whether a restaurant has a free table.',
    inputSchema: z.object({ restaurant: z.string(), time: z.string(), party_size: z.number().int() }),
    execute: async () => ({ available: true }),
  }),
  book_table: createTool({
    id: 'book_table',
    description: 'Book a table and get a confirmation code.',
    inputSchema: z.object({ restaurant: z.string(), time: z.string(), party_size: z.number().int(), name: z.string() }),
    execute: async () => ({ confirmation: 'TR-1042' }),
  }),
};

const restaurant = new Agent({
  id: 'restaurant',
  name: 'restaurant',
  description: 'Finds restaurants and books tables.',
  instructions: 'You help people find a restaurant and book a table. Check availability before booking.',
  // Mastra's model router; its OpenAI provider reads OPENAI_BASE_URL and OPENAI_API_KEY.
  model: `openai/${process.env.MODEL ?? 'gpt-4.1-mini'}`,
  tools,
  memory: new Memory(),
});
const mastra = new Mastra({ agents: { restaurant }, storage: new InMemoryStore() });

// ---- glue: Mastra's server, which serves A2A at /api/a2a/restaurant ----
import { MastraServer } from '@mastra/express';
import { InMemoryTaskStore } from '@mastra/server/a2a/store';
import express from 'express';
const app = express();
app.use(express.json());
await new MastraServer({ app, mastra, taskStore: new InMemoryTaskStore() }).init();
app.listen(Number(process.env.AGENT_PORT ?? 3105), '127.0.0.1');
