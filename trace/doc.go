// Package trace reads the conversations that agents and their frameworks
// already record, so they can be scored without a converter:
//
//   - OpenTelemetry GenAI spans and events as OTLP JSON, in the current
//     form (gen_ai.input.messages, gen_ai.output.messages, execute_tool
//     spans) and the older ones (per-message events, OpenLLMetry's indexed
//     gen_ai.prompt.N attributes), and OpenInference (Arize Phoenix) spans;
//   - the spans of agent frameworks as they write them: the Vercel AI SDK
//     (GenAI and ai.*), Google ADK (gcp.vertex.agent.*), Mastra, LangGraph
//     and LangChain through OpenInference;
//   - span dumps with flat attributes (Phoenix's REST spans) and Langfuse
//     trace and observation exports;
//   - OpenAI Agents SDK trace exports (JS and Python);
//   - LangChain and LangGraph message dumps, and LangSmith run exports;
//   - Inspect eval logs (.eval or JSON);
//   - ATIF trajectories;
//   - Claude Code, Codex, Copilot CLI and Gemini CLI session logs.
//
// Open detects the format from a file's content (or takes a forced one)
// and yields one dataset row per conversation, so the rest of agenteval
// scores traces exactly as it scores Ragas JSONL. Ragas and OpenAI-messages
// files pass through to package dataset.
//
// Files are streamed. Span formats, whose conversations may be spread over
// the file, are read twice: once to learn where each conversation ends,
// then again to build each one and hand it over as soon as its last span
// has been read, so memory holds only the conversations still open.
//
// Whatever a reader cannot map (a part it does not know, a span with no
// GenAI data, an unknown event) is reported with its file position, as a
// warning on the conversation it belongs to, or through Source.Warnings
// when it belongs to none; nothing is dropped silently.
//
// It may import the root package, dataset, internal helpers, the OTLP
// protobuf types and the standard library.
package trace
