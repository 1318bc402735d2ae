// A restaurant agent built with LangGraph, served to agenteval as an http
// target. The graph keeps each conversation's history in its checkpointer,
// keyed by thread_id = conversation_id, and the reply carries the new
// messages (LangChain's {type, content, tool_calls, tool_call_id} is one of
// the message forms agenteval reads), so the tool calls are graded as made.
import { tool } from '@langchain/core/tools';
import { MemorySaver, MessagesAnnotation, StateGraph } from '@langchain/langgraph';
import { ToolNode, toolsCondition } from '@langchain/langgraph/prebuilt';
import { ChatOpenAI } from '@langchain/openai';
import { z } from 'zod';

// The tools, with canned data.
const tools = [
  tool(async ({ cuisine }) => JSON.stringify([{ name: 'Trattoria Roma', cuisine, area: 'river', rating: 4.6 }]), {
    name: 'find_restaurants',
    description: 'Find restaurants by cuisine and area.',
    schema: z.object({ cuisine: z.string(), area: z.string() }),
  }),
  tool(async () => JSON.stringify({ available: true }), {
    name: 'check_availability',
    description: 'Check whether a restaurant has a free table.',
    schema: z.object({ restaurant: z.string(), time: z.string(), party_size: z.number().int() }),
  }),
  tool(async () => JSON.stringify({ confirmation: 'TR-1042' }), {
    name: 'book_table',
    description: 'Book a table and get a confirmation code.',
    schema: z.object({ restaurant: z.string(), time: z.string(), party_size: z.number().int(), name: z.string() }),
  }),
];

// ChatOpenAI's client reads OPENAI_BASE_URL and OPENAI_API_KEY.
const model = new ChatOpenAI({ model: process.env.MODEL ?? 'gpt-4.1-mini', temperature: 0 }).bindTools(tools);
const instructions = { role: 'system', content: 'You help people find a restaurant and book a table. Check availability before booking.' };
const graph = new StateGraph(MessagesAnnotation)
  .addNode('agent', async ({ messages }) => ({ messages: [await model.invoke([instructions, ...messages])] }))
  .addNode('tools', new ToolNode(tools))
  .addEdge('__start__', 'agent')
  .addConditionalEdges('agent', toolsCondition)
  .addEdge('tools', 'agent')
  .compile({ checkpointer: new MemorySaver() });

// ---- glue: agenteval's http target ----
import http from 'node:http';
http.createServer(async (req, res) => {
  let body = '';
  for await (const chunk of req) body += chunk;
  const { conversation_id: id, messages } = JSON.parse(body);
  const config = { configurable: { thread_id: id } };
  const before = (await graph.getState(config)).values.messages?.length ?? 0;
  const state = await graph.invoke({ messages: [messages.at(-1)] }, config);
  const out = state.messages.slice(before + 1).map((m) =>
    ({ type: m.getType(), content: m.content, tool_calls: m.tool_calls, tool_call_id: m.tool_call_id }));
  res.setHeader('Content-Type', 'application/json');
  res.end(JSON.stringify({ messages: out }));
}).listen(Number(process.env.AGENT_PORT ?? 3102), '127.0.0.1');
