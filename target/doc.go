// Package target turns a target configuration into an agenteval.Agent: a
// model driving a tool loop over mock tools, an HTTP endpoint, a command
// speaking JSON lines, or a replay of recorded conversations. Go code can
// pass any agenteval.Agent directly instead.
//
// The wire protocol of the http and command targets is the same: a request
// {"conversation_id", "turn", "messages"} with the full history, and a reply
// {"messages": [...]} (new assistant and tool messages) or {"content": "..."},
// optionally with "usage": {"input_tokens", "output_tokens"}, or "error".
//
// It imports the root package, agent (the tool loop of a model target),
// suite (target and tool configuration), dataset (message decoding),
// provider, results (the recorded runs a replay reads), internal helpers and
// the standard library.
package target
