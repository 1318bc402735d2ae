// Package judge makes structured LLM-judge calls: one call per graded unit,
// a JSON schema with one required property per criterion, temperature 0,
// validation of the reply with up to two repair requests, majority voting
// over several samples, and calls marked so that a caching model
// (cache.Wrap) keys them by their content. Its prompts are our own text,
// kept as embedded files, and rendered by a small template engine of its
// own (tmpl.go): text/template's reflection would keep every exported
// method of the program linked.
//
// It also owns how untrusted text reaches a model (quote.go): every piece
// of material under review is quoted in a block whose tags carry a per-call
// nonce, imitations of our tags inside it are neutralised, and the prompts
// tell the model that the blocks are evidence, never instructions. Suspect
// (suspect.go) finds text that addresses a grader, for the flag graders
// put in their results. The simulated user's prompt uses the same quoting.
//
// It imports the root package, cache (to tell a caching model which part of
// a prompt is the nonce, which sample of a vote a call is, and which replies
// are worth keeping), internal/schemacheck (the JSON Schema validator),
// internal/strictjson and the standard library. Providers come in as an
// agenteval.Model.
package judge
