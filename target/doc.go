// Package target turns a target configuration into an agenteval.Agent: a
// model driving a tool loop over mock tools and MCP servers' tools (Chat
// Completions or the Responses API), an HTTP endpoint, an A2A agent (agent
// card, JSON-RPC SendMessage or message/send, one contextId per
// conversation), an AG-UI agent (RunAgentInput in, SSE events out, the
// suite's tools offered as frontend tools), a command speaking JSON lines,
// or a replay of recorded conversations. Go code can pass any
// agenteval.Agent directly instead.
//
// The wire protocol of the http and command targets is the same: a request
// {"conversation_id", "turn", "messages"} with the full history, and a reply
// {"messages": [...]} (new assistant and tool messages) or {"content": "..."},
// optionally with "usage": {"input_tokens", "output_tokens"}, or "error".
//
// It imports the root package, agent (the tool loop of a model target),
// mcptools (the tools of a model target's MCP servers),
// suite (target and tool configuration), dataset (message decoding),
// provider, results (the recorded runs a replay reads), internal helpers and
// the standard library.
package target
