package grade

// All returns the built-in graders, in the order --help lists them. It is
// the one list: adding a grader means a file that defines it and a line
// here.
func All() []*Definition {
	return []*Definition{
		// Text and JSON checks of the reply.
		Contains, IContains, ContainsAny, IContainsAny, ContainsAll, IContainsAll,
		Equals, IEquals, StartsWith, EndsWith, Regex, IsJSON, JSONSchema, Levenshtein,
		Length,
		// Tool calls.
		ToolCalls, ToolCallAccuracy, ToolCallF1, ExpectedToolCalls,
		// Structured output.
		FieldAccuracy,
		// Budgets.
		Latency, TokenUsage, Cost, MaxTurns, ToolCallCount, ExecutionMetrics,
		// Judged by an LLM.
		Rubrics, LLMGrader, MatchesReference, AgentGoalAccuracy, AgentGoalAccuracyWithReference, AgentGoalAccuracyWithoutReference,
		TopicAdherence, InstructionRetention, InferenceMemory, SelfCoherence, VersionedEditing, ConversationRelevance,
		Subgoals, UserFidelity,
		// A program of the user's.
		Script,
		// Several graders in one score.
		Composite,
	}
}
