package suite

import "go.yaml.in/yaml/v4"

// What a code grader and a cli target get here that still differs from
// AgentV 4.42.4, said once per file where the file uses them. The rest of
// both is AgentV's: a code grader's stdin carries AgentV's fields
// (trace, trace_summary, token_usage, cost_usd, duration_ms, input_files,
// keys renamed to snake_case), and a cli target's output file is read as
// AgentV reads it, its token_usage, cost_usd and duration_ms included.

// codeGraderDifferences records, at a code grader (an assertion of type
// code-grader, code_grader, code-judge or script), what its stdin holds
// otherwise than AgentV's.
func (d *decoder) codeGraderDifferences(n *yaml.Node) {
	d.differ(n, "code-grader-payload", "a code grader's stdin is AgentV's but for what agenteval keeps in another form: input gives each message's text, where AgentV gives the content blocks as the eval file wrote them (input_files lists the attached files in both); expected_output holds the reference answer alone, not every expected message; trace.metadata does not name the provider; and for a model target, trace.start_time and end_time are empty, where AgentV gives the model call's times")
}
