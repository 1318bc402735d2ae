// Package suite loads eval files into tests: YAML suites in AgentV's
// format (every key AgentV's conversation mode uses, so an AgentV suite runs
// unchanged) plus our additions (targets, judge, simulated user, subgoals,
// expected tool calls, mock tools), agent_inspect's own files (its
// dataset schema and EvaluationSample JSON, told apart by content, with its
// 0-based turns), and the project file's keys (ParseProject).
//
// Loading reports every problem at once, each as path:line:col with what is
// wrong and what to write instead; unknown keys get a "did you mean".
// ${VAR} and ${{ VAR }} are replaced from the environment. A large file's
// tests may stay in the file once checked (Options.Stream), to be read
// again a chunk at a time as a run starts them.
//
// It imports the root package, grade (to check assertion settings early),
// internal helpers, the standard library and the YAML library.
package suite
