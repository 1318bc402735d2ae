// A deterministic restaurant agent served over AG-UI, for agenteval's
// agui target tests. No model: it reads the conversation it is sent (the
// protocol's client sends the whole history on every run) and decides from
// it. It runs one tool itself (search_restaurants, a backend tool: it emits
// the call and its TOOL_CALL_RESULT) and calls one tool the client offers
// (book_table, a frontend tool: it emits the call and finishes the run; the
// next run carries the result and it confirms the booking).
//
// The wire comes from the official packages: RunAgentInputSchema checks
// each request, EventSchemas checks each event, and EventEncoder writes them.
//
//   node server.mjs [--port N] [--token T] [--log FILE] [--forgetful]
//   node server.mjs --check RUN_AGENT_INPUT.json
//
// It listens on 127.0.0.1 and prints its URL when ready. --token requires
// "Authorization: Bearer T"; --log appends one JSON line per run (see
// logLine); --forgetful reads
// only the last message, as an agent that lost its history would.
import http from "node:http";
import fs from "node:fs";
import { randomUUID } from "node:crypto";
import { EventType } from "@ag-ui/core";
import { RunAgentInputSchema, EventSchemas } from "@ag-ui/core/schemas";
import { EventEncoder } from "@ag-ui/encoder";

const opts = { port: 0, token: "", log: "", forgetful: false, check: "" };
for (let i = 2; i < process.argv.length; i++) {
  const a = process.argv[i];
  if (a === "--port") opts.port = Number(process.argv[++i]);
  else if (a === "--token") opts.token = process.argv[++i];
  else if (a === "--log") opts.log = process.argv[++i];
  else if (a === "--forgetful") opts.forgetful = true;
  else if (a === "--check") opts.check = process.argv[++i];
  else {
    console.error(`unknown flag ${a}`);
    process.exit(2);
  }
}

// --check FILE validates a RunAgentInput written to a file (agenteval's
// golden request) against the official schema, and exits.
if (opts.check) {
  const r = RunAgentInputSchema.safeParse(JSON.parse(fs.readFileSync(opts.check, "utf8")));
  console.log(r.success ? `${opts.check}: a valid RunAgentInput` : `${opts.check}: ${r.error.message}`);
  process.exit(r.success ? 0 : 1);
}

// The restaurants search_restaurants knows, by city and cuisine.
const RESTAURANTS = {
  "paris/italian": [
    { name: "Trattoria Roma", rating: 4.6 },
    { name: "Luigi's", rating: 4.2 },
  ],
  "paris/japanese": [{ name: "Sakura", rating: 4.4 }],
  "lyon/italian": [{ name: "Da Marco", rating: 4.5 }],
};
const CITIES = ["paris", "lyon", "rome"];
const CUISINES = ["italian", "japanese", "french"];
const NUMBERS = { one: 1, two: 2, three: 3, four: 4, five: 5, six: 6 };

const title = (s) => s.charAt(0).toUpperCase() + s.slice(1);
const textOf = (m) =>
  typeof m.content === "string"
    ? m.content
    : (m.content ?? []).filter((p) => p.type === "text").map((p) => p.text).join("");

// What the conversation so far says: the search results and the booking,
// read from the tool calls and results in the history.
function recall(messages) {
  const calls = new Map();
  const memory = { results: [], search: null, booking: null };
  for (const m of messages) {
    for (const c of m.toolCalls ?? []) calls.set(c.id, c);
    if (m.role !== "tool") continue;
    const call = calls.get(m.toolCallId);
    if (!call) continue;
    const args = JSON.parse(call.function.arguments || "{}");
    let result;
    try {
      result = JSON.parse(m.content);
    } catch {
      result = { text: m.content };
    }
    if (call.function.name === "search_restaurants") {
      memory.search = args;
      memory.results = result.restaurants ?? [];
    } else if (call.function.name === "book_table") {
      memory.booking = { ...args, ...result };
    }
  }
  return memory;
}

// decide returns what the agent does in this run: the steps it takes, in
// order ({say}, {backend: name, args, result}, {frontend: name, args}).
function decide(input) {
  const messages = opts.forgetful ? input.messages.slice(-1) : input.messages;
  const last = messages[messages.length - 1];
  const memory = recall(messages);
  if (last?.role === "tool" && memory.booking) {
    const b = memory.booking;
    return [{ say: `Done: your table at ${b.restaurant} is booked for ${b.people} at ${b.time}. Confirmation code: ${b.confirmation}.` }];
  }
  const text = last?.role === "user" ? textOf(last).toLowerCase() : "";
  // A question about the booking comes first: it may name the
  // restaurant, or say "book".
  if (/\b(which|again|remind|confirmation)\b/.test(text)) {
    const b = memory.booking;
    if (!b) return [{ say: "You have no booking with me yet." }];
    const city = memory.search?.city ? ` in ${memory.search.city}` : "";
    return [{ say: `You are booked at ${b.restaurant}${city}, ${b.people} people at ${b.time}; your confirmation code is ${b.confirmation}.` }];
  }
  if (/\b(find|search|restaurant|looking)\b/.test(text)) {
    const city = CITIES.find((c) => text.includes(c)) ?? "paris";
    const cuisine = CUISINES.find((c) => text.includes(c)) ?? "italian";
    const found = RESTAURANTS[`${city}/${cuisine}`] ?? [];
    const list = found.map((r) => `${r.name} (${r.rating})`).join(" and ");
    return [
      { say: `Let me look for ${cuisine} places in ${title(city)}.` },
      { backend: "search_restaurants", args: { city: title(city), cuisine }, result: { restaurants: found } },
      {
        say: found.length
          ? `I found ${list} in ${title(city)}. Shall I book one?`
          : `I found no ${cuisine} restaurant in ${title(city)}.`,
      },
    ];
  }
  if (/\bbook\b/.test(text)) {
    const ranked = [...memory.results].sort((a, b) => b.rating - a.rating);
    const named = memory.results.find((r) => text.includes(r.name.toLowerCase()));
    const pick = named ?? (/\b(best|better|top|highest)\b/.test(text) ? ranked[0] : undefined);
    if (!pick) {
      return [{ say: "Which restaurant would you like me to book?" }];
    }
    const n = text.match(/\bfor (\d+|one|two|three|four|five|six)\b/);
    const people = n ? (NUMBERS[n[1]] ?? Number(n[1])) : 2;
    const t = text.match(/\bat (\d{1,2})(?::(\d{2}))?\s*(am|pm)?/);
    let hour = t ? Number(t[1]) : 20;
    if (t?.[3] === "pm" && hour < 12) hour += 12;
    const time = `${String(hour).padStart(2, "0")}:${t?.[2] ?? "00"}`;
    if (!input.tools.some((tool) => tool.name === "book_table")) {
      return [{ say: `I would book ${pick.name}, but this app offers me no book_table tool.` }];
    }
    return [
      { say: `Booking ${pick.name} for ${people} at ${time}.` },
      { frontend: "book_table", args: { restaurant: pick.name, people, time } },
    ];
  }
  return [{ say: "I find and book restaurants. Where would you like to eat?" }];
}

// run streams one run's events.
function run(input, send) {
  const { threadId, runId } = input;
  send({ type: EventType.RUN_STARTED, threadId, runId });
  send({ type: EventType.STEP_STARTED, stepName: "respond" });
  const added = [];
  let current = null; // the assistant message the next tool call belongs to
  for (const step of decide(input)) {
    if (step.say) {
      const messageId = randomUUID();
      send({ type: EventType.TEXT_MESSAGE_START, messageId, role: "assistant" });
      // In a few deltas, as a model streams.
      for (const piece of step.say.match(/.{1,24}(\s|$)|.{1,24}/g)) {
        send({ type: EventType.TEXT_MESSAGE_CONTENT, messageId, delta: piece });
      }
      send({ type: EventType.TEXT_MESSAGE_END, messageId });
      current = { id: messageId, role: "assistant", content: step.say };
      added.push(current);
      continue;
    }
    const name = step.backend ?? step.frontend;
    const toolCallId = `call_${randomUUID().slice(0, 8)}`;
    const args = JSON.stringify(step.args);
    if (!current) {
      current = { id: randomUUID(), role: "assistant" };
      added.push(current);
    }
    send({ type: EventType.TOOL_CALL_START, toolCallId, toolCallName: name, parentMessageId: current.id });
    send({ type: EventType.TOOL_CALL_ARGS, toolCallId, delta: args.slice(0, 10) });
    send({ type: EventType.TOOL_CALL_ARGS, toolCallId, delta: args.slice(10) });
    send({ type: EventType.TOOL_CALL_END, toolCallId });
    current.toolCalls = [...(current.toolCalls ?? []), { id: toolCallId, type: "function", function: { name, arguments: args } }];
    if (step.backend) {
      const content = JSON.stringify(step.result);
      const messageId = randomUUID();
      send({ type: EventType.TOOL_CALL_RESULT, messageId, toolCallId, role: "tool", content });
      added.push({ id: messageId, role: "tool", toolCallId, content });
      current = null;
    }
  }
  const memory = recall([...input.messages, ...added]);
  send({ type: EventType.STATE_SNAPSHOT, snapshot: { city: memory.search?.city ?? null, booked: memory.booking?.restaurant ?? null } });
  send({ type: EventType.STEP_FINISHED, stepName: "respond" });
  // The whole conversation, as LangGraph's adapter sends it at the end of
  // a run: the client reconciles what it streamed with it.
  send({ type: EventType.MESSAGES_SNAPSHOT, messages: [...input.messages, ...added] });
  remember(threadId, added);
  send({ type: EventType.RUN_FINISHED, threadId, runId });
}

// What --log writes of a run, with nothing that changes from one test run
// to the next: the thread and run by their order of arrival, the roles of
// the messages sent, how many of their ids the thread had not seen (the
// agent's own messages come back under the ids it gave them, so one new
// id per run: the user's message, or a tool's result), and the tools.
const threads = new Map();
const runIds = new Set();
function logLine(input) {
  if (!threads.has(input.threadId)) threads.set(input.threadId, { n: threads.size + 1, runs: 0, ids: new Set() });
  const t = threads.get(input.threadId);
  t.runs++;
  const newIds = input.messages.filter((m) => !t.ids.has(m.id)).length;
  const line = {
    thread: t.n,
    run: t.runs,
    freshRunId: !runIds.has(input.runId),
    messages: input.messages.map((m) => m.role),
    newIds,
    tools: input.tools.map((tool) => tool.name),
  };
  runIds.add(input.runId);
  for (const m of input.messages) t.ids.add(m.id);
  return line;
}

// remember notes the ids of the messages a run added, for logLine.
function remember(threadId, messages) {
  const t = threads.get(threadId);
  if (t) for (const m of messages) t.ids.add(m.id);
}

function answer(res, status, body) {
  res.writeHead(status, { "Content-Type": "application/json" });
  res.end(JSON.stringify(body));
}

const server = http.createServer((req, res) => {
  if (req.method !== "POST" || new URL(req.url, "http://x").pathname !== "/agent") {
    return answer(res, 404, { error: `no AG-UI agent at ${req.method} ${req.url}; POST /agent` });
  }
  if (opts.token && req.headers.authorization !== `Bearer ${opts.token}`) {
    return answer(res, 401, { error: "missing or wrong bearer token" });
  }
  let body = "";
  req.setEncoding("utf8");
  req.on("data", (d) => (body += d));
  req.on("end", () => {
    let input;
    try {
      input = RunAgentInputSchema.parse(JSON.parse(body));
    } catch (err) {
      return answer(res, 400, { error: `not a RunAgentInput: ${err.message}` });
    }
    if (opts.log) {
      fs.appendFileSync(opts.log, JSON.stringify(logLine(input)) + "\n");
    }
    const encoder = new EventEncoder({ accept: req.headers.accept });
    res.writeHead(200, { "Content-Type": encoder.getContentType(), "Cache-Control": "no-cache" });
    const send = (event) => res.write(encoder.encode(EventSchemas.parse(event)));
    try {
      run(input, send);
    } catch (err) {
      res.write(encoder.encode({ type: EventType.RUN_ERROR, message: String(err?.message ?? err) }));
    }
    res.end();
  });
});

server.listen(opts.port, "127.0.0.1", () => {
  console.log(`http://127.0.0.1:${server.address().port}/agent`);
});
for (const sig of ["SIGINT", "SIGTERM"]) process.on(sig, () => server.close(() => process.exit(0)));
