package agenteval

import (
	"math"
	"strings"
)

// Pos is a place in an eval file, for error messages.
type Pos struct {
	File string `json:"file,omitempty"`
	Line int    `json:"line,omitempty"`
	Col  int    `json:"col,omitempty"`
}

// Errorf builds a *PosError at p.
func (p Pos) Errorf(msg string) *PosError {
	return &PosError{File: p.File, Line: p.Line, Col: p.Col, Msg: msg}
}

// AssertionSpec configures one grader as an eval file writes it. A plain
// string in an eval file is a rubric criterion: Criterion is set and Type is
// empty.
type AssertionSpec struct {
	Type      string         `json:"type,omitempty"`
	Criterion string         `json:"criterion,omitempty"`
	Name      string         `json:"name,omitempty"`
	Weight    *float64       `json:"weight,omitempty"`
	Required  bool           `json:"required,omitempty"`
	Negate    bool           `json:"negate,omitempty"`
	Threshold *float64       `json:"threshold,omitempty"`
	Params    map[string]any `json:"params,omitempty"`
	Pos       Pos            `json:"-"`
}

// Turn is one user turn of a conversation test.
type Turn struct {
	// Input is the user's message(s) for this turn.
	Input Conversation `json:"input"`
	// ExpectedOutput is a reference for grading only; the agent's actual
	// reply is what carries forward.
	ExpectedOutput string          `json:"expected_output,omitempty"`
	Assertions     []AssertionSpec `json:"assertions,omitempty"`
	Pos            Pos             `json:"-"`
}

// Mode says how a test talks to the agent.
type Mode string

// The modes. A single exchange is the zero value.
const (
	ModeSingle       Mode = ""
	ModeConversation Mode = "conversation"
)

// Reduction combines several scores into one: the turn scores and the
// conversation score of a test (its aggregation), or the scores of a
// test's trials (its strategy). The zero value is ReduceMean.
type Reduction string

// The reductions, for aggregation and trials alike.
const (
	ReduceMean Reduction = "mean"
	ReduceMin  Reduction = "min"
	ReduceMax  Reduction = "max"
	// ReducePassAtK takes the best score: a test passes when any of its
	// trials (or turns) does, as AgentV's pass_at_k strategy has it.
	ReducePassAtK Reduction = "pass_at_k"
	// ReduceConfidenceInterval takes the lower bound of the 95%
	// confidence interval of the mean (Student's t), a conservative score
	// for trials (AgentV's confidence_interval strategy).
	ReduceConfidenceInterval Reduction = "confidence_interval"
)

// Reduce combines vals. Nothing to combine reduces to 1: a unit with
// nothing to grade passes.
func (r Reduction) Reduce(vals []float64) float64 {
	if len(vals) == 0 {
		return 1
	}
	out := vals[0]
	switch r {
	case ReduceMin:
		for _, v := range vals[1:] {
			out = min(out, v)
		}
	case ReduceMax, ReducePassAtK:
		for _, v := range vals[1:] {
			out = max(out, v)
		}
	case ReduceConfidenceInterval:
		lo, _ := ConfidenceInterval(vals)
		out = lo
	default:
		sum := 0.0
		for _, v := range vals {
			sum += v
		}
		out = sum / float64(len(vals))
	}
	return out
}

// SimulatedUser drives a conversation from an instruction instead of
// scripted turns: an LLM plays the user.
type SimulatedUser struct {
	// Instruction is what the user wants and knows.
	Instruction string `json:"instruction,omitempty"`
	// Persona is expert, novice, or a free-text description.
	Persona string `json:"persona,omitempty"`
	// InitialMessage, when set, is the user's first message, sent as is.
	InitialMessage string `json:"initial_message,omitempty"`
	// MaxTurns bounds the conversation; 0 means DefaultMaxTurns.
	MaxTurns int `json:"max_turns,omitempty"`
	// Stop is the marker with which the simulated user ends the
	// conversation; "" means DefaultStopMarker.
	Stop string `json:"stop,omitempty"`
	// Model plays the user, as provider:model; "" means the run's
	// simulator, else its judge.
	Model string `json:"model,omitempty"`
	// Temperature of the simulated user's model; nil means 0.
	Temperature *float64 `json:"temperature,omitempty"`
	// StopOnSuccess ends the conversation once every subgoal is achieved.
	StopOnSuccess bool `json:"stop_on_success,omitempty"`
	// TerminatingCondition, when set, says in words when the simulated
	// user should end the conversation (agent_inspect's
	// terminating_condition); the user is told it, and writes the stop
	// marker once it holds.
	TerminatingCondition string `json:"terminating_condition,omitempty"`
}

// PersonaText is the persona as the simulated user, and the judge of its
// fidelity, are told it: the keywords expert and novice (non-expert)
// expanded, any other text as written.
func (u *SimulatedUser) PersonaText() string {
	switch strings.ToLower(strings.ReplaceAll(strings.TrimSpace(u.Persona), "_", "-")) {
	case "expert":
		return "An expert in this domain: uses the right terms, gives precise details when asked, expects the assistant to keep up, and has little patience for needless questions or explanations."
	case "novice", "non-expert", "nonexpert", "beginner":
		return "A newcomer to this domain: describes things in everyday words, sometimes vaguely, may not know the right terms or which details matter, and needs things explained."
	}
	return strings.TrimSpace(u.Persona)
}

// Simulated-user defaults.
const (
	DefaultMaxTurns   = 10
	DefaultStopMarker = "###STOP###"
)

// Why a simulated conversation ended.
const (
	EndStopMarker     = "stop_marker"       // the simulated user said it was done
	EndMaxTurns       = "max_turns"         // the turn limit was reached
	EndSubgoals       = "subgoals_achieved" // stop_on_success, and every subgoal was reached
	EndAgentError     = "agent_error"       // the agent failed
	EndSimulatorError = "simulator_error"   // the simulated user's model failed
	EndJudgeError     = "judge_error"       // stop_on_success, and the subgoal judge failed
	EndInterrupted    = "interrupted"       // the run was stopped
)

// Simulation records how a simulated user drove one conversation.
type Simulation struct {
	// Model is the model that played the user.
	Model string `json:"model"`
	// Messages is every message the simulated user wrote, in order. The
	// last one is not sent to the agent when it carried the stop marker.
	Messages []SimulatedMessage `json:"messages"`
	// Turns is how many turns the agent completed (a turn whose agent
	// call failed is not counted, though its message was sent).
	Turns int `json:"turns"`
	// EndReason is one of the End constants.
	EndReason string `json:"end_reason"`
	// Detail says more about the end: the error, or the marker's message.
	Detail string `json:"detail,omitempty"`
	// TerminatingCondition is the stop rule the simulated user was given,
	// if any (SimulatedUser.TerminatingCondition).
	TerminatingCondition string `json:"terminating_condition,omitempty"`
	Usage                *Usage `json:"usage,omitempty"`
}

// SimulatedMessage is one message the simulated user wrote.
type SimulatedMessage struct {
	Turn    int    `json:"turn"`
	Content string `json:"content"`
	// Sent is false for a closing message that carried the stop marker.
	Sent bool `json:"sent"`
	// Initial marks the test's initial_message, sent without asking the
	// model.
	Initial bool `json:"initial,omitempty"`
}

// Subgoal is a milestone the agent should reach (agent_inspect).
type Subgoal struct {
	Details string `json:"details"`
	Type    string `json:"type,omitempty"`
	// Turn, when set, is the turn (1-based) by which the subgoal must be
	// reached; 0 means any turn.
	Turn int `json:"turn,omitempty"`
}

// ExpectedCall is a tool call the agent should make.
//
// Args maps each argument the call must have to a value, compared as
// decoded JSON (2 equals 2.0), or to a matcher: an object with a single
// $-key. {"$any": true} accepts any value, {"$text": v} compares as text
// (as agent_inspect does), {"$regex": "^8"} matches the value's text, and
// {"$check": "..."} is decided by the LLM judge. AnyArgs accepts any
// arguments at all.
type ExpectedCall struct {
	Tool    string         `json:"tool"`
	Args    map[string]any `json:"args,omitempty"`
	AnyArgs bool           `json:"any_args,omitempty"`
	// Output, when set, must match the tool's result: a value (equal as
	// text, or as JSON when both sides parse), or a {"$check": ...}.
	Output *any `json:"output,omitempty"`
	// Turn, when set, is the turn (1-based) in which the call must be
	// made; 0 means any turn.
	Turn int `json:"turn,omitempty"`
	// ArgsMatch, when set, is how this call's arguments must match
	// (exact, superset, subset, ignore), instead of the grader's; ArgsFields
	// compares only these argument paths (dotted) instead.
	ArgsMatch  string   `json:"args_match,omitempty"`
	ArgsFields []string `json:"args_fields,omitempty"`
	// MaxDurationMS, when set, is the longest the matched call may take
	// (AgentV's per-call latency check): an extra check, counted when the
	// agent reported the call's duration.
	MaxDurationMS float64 `json:"max_duration_ms,omitempty"`
	// Literal compares Args as plain values, never as matchers. Calls taken
	// from a dataset's reference_tool_calls are literal: a recorded argument
	// such as {"$gt": 5} is data, not an instruction.
	Literal bool `json:"-"`
	Pos     Pos  `json:"-"`
}

// Test is one evaluation: a single exchange, or a conversation of turns.
type Test struct {
	ID          string `json:"id"`
	Suite       string `json:"suite,omitempty"`
	Description string `json:"description,omitempty"`
	// Criteria describes a good answer; it is graded by the judge only when
	// the test has no assertions of its own.
	Criteria string `json:"criteria,omitempty"`
	// Input is the opening context: a system prompt, earlier messages, or
	// (in single-turn tests) the user's message.
	Input          Conversation    `json:"input,omitempty"`
	ExpectedOutput string          `json:"expected_output,omitempty"`
	Assertions     []AssertionSpec `json:"assertions,omitempty"`

	// Mode is ModeConversation for a conversation of turns; the zero
	// value is a single exchange.
	Mode          Mode      `json:"mode,omitempty"`
	Turns         []Turn    `json:"turns,omitempty"`
	Aggregation   Reduction `json:"aggregation,omitempty"`
	StopOnFailure bool      `json:"stop_on_failure,omitempty"`
	// WindowSize is AgentV's window_size: the agent and each turn's
	// graders get the system messages and the last 2×N other messages
	// (N exchanges; a reply's tool calls and results count with it).
	WindowSize int `json:"window_size,omitempty"`
	// GraderWindow limits only the turn graders' view, to the system
	// messages and the last N whole turns; the agent keeps the full
	// history.
	GraderWindow int `json:"grader_window_size,omitempty"`

	Trials        int       `json:"trials,omitempty"`
	TrialStrategy Reduction `json:"trial_strategy,omitempty"`
	// TrialsRunAll runs every trial even with strategy pass_at_k, which
	// otherwise stops at the first passing trial, as AgentV does; pass@k
	// and pass^k are then estimated over all of them.
	TrialsRunAll bool `json:"trials_run_all,omitempty"`
	// TrialCostLimit stops starting trials once the ones run have cost
	// this much (USD), as AgentV's cost_limit_usd does; 0 means no limit.
	TrialCostLimit float64 `json:"trial_cost_limit_usd,omitempty"`

	DependsOn           []string `json:"depends_on,omitempty"`
	OnDependencyFailure string   `json:"on_dependency_failure,omitempty"`

	// Threshold is the pass mark; nil means the suite's, then 0.8.
	Threshold *float64       `json:"threshold,omitempty"`
	Metadata  map[string]any `json:"metadata,omitempty"`
	Vars      map[string]any `json:"vars,omitempty"`

	// User, Subgoals and ExpectedToolCalls come from agent_inspect data and
	// our simulated-user additions.
	User              *SimulatedUser `json:"user,omitempty"`
	Subgoals          []Subgoal      `json:"subgoals,omitempty"`
	ExpectedToolCalls []ExpectedCall `json:"expected_tool_calls,omitempty"`
	// Semantics names the rules the test's subgoals and expected tool
	// calls follow: ours (the zero value), or agent_inspect's for tests
	// read from its files. Turns are 1-based either way once loaded; the
	// rules differ in how expected calls pair with the calls made.
	Semantics Semantics `json:"semantics,omitempty"`

	// ConversationID is the eval file's conversation_id: it groups tests
	// of one thread in results. It is not sent to the agent, whose
	// conversations stay one per test and trial.
	ConversationID string `json:"conversation_id,omitempty"`
	// Targets names the targets this test runs against (AgentV's
	// execution.target or execution.targets on a test, a v5 test's
	// providers); empty means the suite's.
	Targets []string `json:"targets,omitempty"`
	// Skip, when set, says why this test cannot run here (a feature of
	// another tool that agenteval does not run, such as a coding-agent
	// workspace); it ends with verdict skip and that reason.
	Skip string `json:"skip,omitempty"`

	Pos Pos `json:"-"`
}

// Semantics names a set of scoring rules for expected tool calls.
type Semantics string

// The semantics.
const (
	// SemanticsAgentEval is ours: each call made meets at most one
	// expected call, and an expected call without a turn may be met in
	// any turn.
	SemanticsAgentEval Semantics = ""
	// SemanticsAgentInspect is agent_inspect's ToolCorrectnessMetric: each
	// expected call is checked on its own against the calls of its turn,
	// so one call may meet several identical expectations; an expected
	// call without a turn is not evaluated, and the score is rounded to 4
	// decimals.
	SemanticsAgentInspect Semantics = "agent_inspect"
	// SemanticsAgentInspectDataset is agent_inspect's rules for its
	// dataset schema (input/metadata), whose expected tools carry no turn:
	// there, an expected call without a turn may be met in any turn; the
	// rest is as SemanticsAgentInspect.
	SemanticsAgentInspectDataset Semantics = "agent_inspect_dataset"
)

// Trial is one of several independent runs of a test.
type Trial struct {
	Trial           int             `json:"trial"`
	Score           float64         `json:"score"`
	Verdict         Verdict         `json:"verdict"`
	ExecutionStatus ExecutionStatus `json:"execution_status"`
	Scores          []Score         `json:"scores"`
	Output          Conversation    `json:"output,omitempty"`
	Usage           *Usage          `json:"usage,omitempty"`
	DurationMS      float64         `json:"duration_ms"`
	Error           string          `json:"error,omitempty"`
	Simulation      *Simulation     `json:"simulation,omitempty"`
}

// PassAtK is, for k = 1..n trials of which c passed, the chance that at
// least one of k trials drawn without replacement passes (pass@k) and that
// all k pass (pass^k).
type PassAtK struct {
	K        int     `json:"k"`
	PassAtK  float64 `json:"pass_at_k"`
	PassHatK float64 `json:"pass_hat_k"`
}

// PassAtKFor computes pass@k = 1 − C(n−c,k)/C(n,k) and pass^k =
// C(c,k)/C(n,k) for k = 1..n, for n trials of which c passed. The ratios
// are built as running products, which stay exact where the binomials
// themselves would overflow.
func PassAtKFor(n, c int) []PassAtK {
	out := make([]PassAtK, 0, n)
	fail, pass := 1.0, 1.0
	for k := 1; k <= n; k++ {
		fail *= float64(max(0, n-c-k+1)) / float64(n-k+1)
		pass *= float64(max(0, c-k+1)) / float64(n-k+1)
		out = append(out, PassAtK{K: k, PassAtK: 1 - fail, PassHatK: pass})
	}
	return out
}

// tCritical95 holds the two-tailed Student's t values for 95% confidence,
// for 1..29 degrees of freedom; from 30 on, the normal 1.96 is used.
var tCritical95 = [...]float64{12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
	2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
	2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045}

// ConfidenceInterval is the 95% confidence interval of the mean of vals
// (Student's t with n−1 degrees of freedom), held to [0, 1]. With fewer
// than two values it is the mean itself.
func ConfidenceInterval(vals []float64) (lo, hi float64) {
	n := len(vals)
	if n == 0 {
		return 1, 1
	}
	mean := 0.0
	for _, v := range vals {
		mean += v
	}
	mean /= float64(n)
	if n < 2 {
		return min(1, max(0, mean)), min(1, max(0, mean))
	}
	ss := 0.0
	for _, v := range vals {
		ss += (v - mean) * (v - mean)
	}
	se := math.Sqrt(ss/float64(n-1)) / math.Sqrt(float64(n))
	t := 1.96
	if df := n - 1; df < 30 {
		t = tCritical95[df-1]
	}
	return min(1, max(0, mean-t*se)), min(1, max(0, mean+t*se))
}
