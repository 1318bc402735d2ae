// Package simulate plays the user of a conversation with an LLM: it is told
// an instruction (what the user wants and knows) and a persona, sees the
// conversation from the user's side with the roles flipped, and writes the
// user's next message, or ends the conversation with a stop marker. Its
// prompt is our own text, kept as an embedded file; the agent's messages
// reach it quoted under a per-call nonce, so that the agent cannot rewrite
// the simulated user's instructions.
//
// It imports the root package, cache (to keep trials apart and mask the
// nonce in cache keys), judge (for the quoting) and the standard library.
// The model comes in as an agenteval.Model; wrap it with cache.Wrap to
// replay replies.
package simulate
