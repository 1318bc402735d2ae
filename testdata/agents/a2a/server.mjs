// A deterministic restaurant agent served over A2A with the official
// @a2a-js/sdk (1.x): its DefaultRequestHandler, an AgentExecutor and the
// SDK's Express handlers. No model: plain rules pick the tools, so that
// agenteval's a2a target can be tested against a real A2A server.
//
// Tools: find_restaurants, check_availability and book_table. The agent
// remembers each conversation (per contextId), so a later turn can rely on
// an earlier one ("the party size I said earlier"). It reports its tool
// calls as Google ADK's A2A converter does: data parts marked
// adk_type = function_call / function_response, in "working" status
// updates. A booking without a name leaves the task input-required; the
// next message on that task gives the name.
//
// Usage: node server.mjs [PORT] [--version 1.0|0.3] [--no-streaming]
// PORT (or the env PORT) defaults to 0, a free port. --version says which
// JSON-RPC interface the card lists first (the server speaks both).
// With A2A_AGENT_TOKEN set, the card asks for HTTP Bearer auth and every
// JSON-RPC call must carry it. Prints "listening on http://127.0.0.1:PORT"
// when ready.

import express from 'express';
import { AGENT_CARD_PATH, Role, TaskState } from '@a2a-js/sdk';
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore } from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler, UserBuilder } from '@a2a-js/sdk/server/express';

const args = process.argv.slice(2);
const flag = (name) => args.includes(name);
const option = (name, def) => {
  const i = args.indexOf(name);
  return i >= 0 && i + 1 < args.length ? args[i + 1] : def;
};
const port = Number(args.find((a) => /^\d+$/.test(a)) ?? process.env.PORT ?? 0);
const firstVersion = option('--version', '1.0');
const streaming = !flag('--no-streaming');
const token = process.env.A2A_AGENT_TOKEN ?? '';

// --- The restaurant world -------------------------------------------------

const RESTAURANTS = [
  { name: 'Trattoria Roma', cuisine: 'italian', city: 'Lisbon', free: ['19:00', '20:00'] },
  { name: 'Casa Lusa', cuisine: 'portuguese', city: 'Lisbon', free: ['20:00', '21:00'] },
  { name: 'Sakura', cuisine: 'japanese', city: 'Porto', free: ['19:30'] },
  { name: 'Osteria Nonna', cuisine: 'italian', city: 'Porto', free: ['21:00'] },
];

let bookings = 0;
let toolCalls = 0;

const TOOLS = {
  find_restaurants({ cuisine, city }) {
    const found = RESTAURANTS.filter(
      (r) => (!cuisine || r.cuisine === cuisine) && (!city || r.city === city)
    ).map((r) => ({ name: r.name, cuisine: r.cuisine, city: r.city }));
    return { restaurants: found };
  },
  check_availability({ restaurant, time, party_size }) {
    const r = RESTAURANTS.find((x) => x.name === restaurant);
    if (!r) return { error: `unknown restaurant ${restaurant}` };
    return { restaurant, time, party_size, available: party_size <= 8 && r.free.includes(time) };
  },
  book_table({ restaurant, time, party_size, name }) {
    bookings += 1;
    return { confirmation: `R-${1000 + bookings}`, restaurant, time, party_size, name };
  },
};

const NUMBERS = { one: 1, two: 2, three: 3, four: 4, five: 5, six: 6, seven: 7, eight: 8 };

// parse reads what a user message says about the booking.
function parse(text) {
  const t = text.toLowerCase();
  const out = {};
  const cuisine = t.match(/\b(italian|portuguese|japanese)\b/);
  if (cuisine) out.cuisine = cuisine[1];
  const city = text.match(/\b(Lisbon|Porto)\b/i);
  if (city) out.city = city[1][0].toUpperCase() + city[1].slice(1).toLowerCase();
  const party = t.match(/\b(?:for|party of)\s+(\d+|one|two|three|four|five|six|seven|eight)\b(?!\s*(?:am|pm|:))/);
  if (party) out.party_size = NUMBERS[party[1]] ?? Number(party[1]);
  const time = t.match(/\b(\d{1,2})(?::(\d{2}))?\s*(am|pm)\b/) ?? t.match(/\bat\s+(\d{1,2}):(\d{2})\b/);
  if (time) {
    let h = Number(time[1]);
    if (time[3] === 'pm' && h < 12) h += 12;
    out.time = `${String(h).padStart(2, '0')}:${time[2] ?? '00'}`;
  }
  const restaurant = RESTAURANTS.find((r) => t.includes(r.name.toLowerCase()));
  if (restaurant) out.restaurant = restaurant.name;
  const name = text.match(/\b(?:[Uu]nder(?: the name)?|[Nn]ame is)\s+([A-Z][a-z]+)/);
  if (name) out.name = name[1];
  if (/\bbook\b/.test(t)) out.book = true;
  return out;
}

// --- A2A plumbing ---------------------------------------------------------

const textPart = (text) => ({ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' });
const dataPart = (value, metadata) => ({ content: { $case: 'data', value }, metadata, filename: '', mediaType: 'application/json' });
const agentMessage = (parts, taskId, contextId) => ({
  messageId: crypto.randomUUID(),
  role: Role.ROLE_AGENT,
  parts,
  taskId,
  contextId,
  metadata: undefined,
  extensions: [],
  referenceTaskIds: [],
});
const now = () => new Date().toISOString();

// Conversations by contextId: what the user has said so far.
const memory = new Map();

class RestaurantExecutor {
  async execute(ctx, bus) {
    const { taskId, contextId } = ctx;
    const userText = ctx.userMessage.parts
      .filter((p) => p.content?.$case === 'text')
      .map((p) => p.content.value)
      .join('\n');
    const state = memory.get(contextId) ?? {};
    memory.set(contextId, state);
    Object.assign(state, parse(userText));

    // Every call starts with the task: the stored one when the message
    // continues it.
    bus.publish(
      AgentEvent.task(
        ctx.task ?? {
          id: taskId,
          contextId,
          status: { state: TaskState.TASK_STATE_SUBMITTED, timestamp: now(), message: undefined },
          artifacts: [],
          history: [ctx.userMessage],
          metadata: undefined,
        }
      )
    );
    const status = (state_, message) =>
      bus.publish(
        AgentEvent.statusUpdate({ taskId, contextId, status: { state: state_, message, timestamp: now() }, metadata: undefined })
      );
    const call = (name, args) => {
      toolCalls += 1;
      const id = `call_${toolCalls}`;
      status(
        TaskState.TASK_STATE_WORKING,
        agentMessage([dataPart({ id, name, args }, { adk_type: 'function_call' })], taskId, contextId)
      );
      const response = TOOLS[name](args);
      status(
        TaskState.TASK_STATE_WORKING,
        agentMessage([dataPart({ id, name, response }, { adk_type: 'function_response' })], taskId, contextId)
      );
      return response;
    };
    const answer = (text) => {
      bus.publish(
        AgentEvent.artifactUpdate({
          taskId,
          contextId,
          artifact: { artifactId: crypto.randomUUID(), name: 'answer', description: '', parts: [textPart(text)], metadata: undefined, extensions: [] },
          append: false,
          lastChunk: true,
          metadata: undefined,
        })
      );
      status(TaskState.TASK_STATE_COMPLETED, undefined);
    };
    const ask = (text) => status(TaskState.TASK_STATE_INPUT_REQUIRED, agentMessage([textPart(text)], taskId, contextId));

    if (!state.restaurant && (state.cuisine || state.city)) {
      const { restaurants } = call('find_restaurants', { cuisine: state.cuisine, city: state.city });
      if (restaurants.length === 0) {
        answer(`I found no ${state.cuisine ?? ''} restaurant in ${state.city ?? 'town'}.`);
        return;
      }
      state.restaurant = restaurants[0].name;
      const party = state.party_size ? ` for ${state.party_size} people` : '';
      answer(`I found ${restaurants.map((r) => r.name).join(', ')}. ${state.restaurant} looks good${party}: which time would you like?`);
      return;
    }
    if (!state.restaurant) {
      answer('Which cuisine and city are you looking for?');
      return;
    }
    if (!state.party_size || !state.time) {
      ask(!state.party_size ? 'For how many people?' : 'At what time?');
      return;
    }
    if (!state.checked) {
      const { available } = call('check_availability', { restaurant: state.restaurant, time: state.time, party_size: state.party_size });
      if (!available) {
        state.time = undefined;
        ask(`${state.restaurant} is full at that time. Which other time would suit you?`);
        return;
      }
      state.checked = true;
    }
    if (!state.book) {
      answer(`${state.restaurant} has a table for ${state.party_size} at ${state.time}. Shall I book it?`);
      return;
    }
    if (!state.name) {
      ask(`${state.restaurant} has a table for ${state.party_size} at ${state.time}. Under which name should I book it?`);
      return;
    }
    const { confirmation } = call('book_table', {
      restaurant: state.restaurant,
      time: state.time,
      party_size: state.party_size,
      name: state.name,
    });
    answer(
      `Booked ${state.restaurant} for ${state.party_size} people at ${state.time} under the name ${state.name}. Confirmation ${confirmation}.`
    );
    memory.set(contextId, { restaurant: state.restaurant });
  }

  async cancelTask(taskId, bus) {
    bus.publish(
      AgentEvent.statusUpdate({ taskId, contextId: '', status: { state: TaskState.TASK_STATE_CANCELED, message: undefined, timestamp: now() }, metadata: undefined })
    );
  }
}

// --- Server ---------------------------------------------------------------

function card(baseUrl) {
  const rpc = `${baseUrl}/a2a/jsonrpc`;
  const interfaces = [
    { url: rpc, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' },
    { url: rpc, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '0.3' },
  ];
  if (firstVersion === '0.3') interfaces.reverse();
  const secured = token !== '';
  return {
    name: 'Restaurant agent',
    description: 'Finds restaurants, checks tables and books them.',
    supportedInterfaces: interfaces,
    provider: undefined,
    version: '1.0.0',
    capabilities: { streaming, pushNotifications: false, extensions: [], extendedAgentCard: false },
    securitySchemes: secured ? { bearer: { scheme: { $case: 'httpAuthSecurityScheme', value: { description: '', scheme: 'Bearer', bearerFormat: '' } } } } : {},
    securityRequirements: secured ? [{ schemes: { bearer: { list: [] } } }] : [],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain', 'application/json'],
    skills: [
      {
        id: 'book_restaurant',
        name: 'Book a restaurant',
        description: 'Find a restaurant by cuisine and city, check a table and book it.',
        tags: ['restaurant', 'booking'],
        examples: ['Find an Italian restaurant in Lisbon for 4 people'],
        inputModes: [],
        outputModes: [],
        securityRequirements: [],
      },
    ],
    signatures: [],
  };
}

const app = express();
const server = app.listen(port, '127.0.0.1', () => {
  const base = `http://127.0.0.1:${server.address().port}`;
  const handler = new DefaultRequestHandler(card(base), new InMemoryTaskStore(), new RestaurantExecutor());
  app.use(`/${AGENT_CARD_PATH}`, agentCardHandler({ agentCardProvider: handler, legacyCompat: { enabled: true } }));
  if (token) {
    app.use('/a2a/jsonrpc', (req, res, next) => {
      if (req.header('authorization') === `Bearer ${token}`) return next();
      res.status(401).json({ error: 'missing or wrong bearer token' });
    });
  }
  app.use('/a2a/jsonrpc', jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication, legacyCompat: { enabled: true } }));
  console.log(`listening on ${base}`);
});
server.on('error', (err) => {
  console.error(`restaurant agent: ${err.message}`);
  process.exit(1);
});
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => process.exit(0));
