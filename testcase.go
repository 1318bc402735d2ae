package agenteval

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

// Aggregations of turn scores into a test score.
const (
	AggregateMean = "mean"
	AggregateMin  = "min"
	AggregateMax  = "max"
)

// Trial strategies: how several independent runs of a test make its score.
const (
	TrialsMean    = "mean"
	TrialsMin     = "min"
	TrialsMax     = "max"
	TrialsPassAtK = "pass_at_k"
)

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
	Usage  *Usage `json:"usage,omitempty"`
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
	Turn    string `json:"turn,omitempty"`
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
	Mode          Mode   `json:"mode,omitempty"`
	Turns         []Turn `json:"turns,omitempty"`
	Aggregation   string `json:"aggregation,omitempty"`
	StopOnFailure bool   `json:"stop_on_failure,omitempty"`
	WindowSize    int    `json:"window_size,omitempty"`

	Trials        int    `json:"trials,omitempty"`
	TrialStrategy string `json:"trial_strategy,omitempty"`

	DependsOn           []string `json:"depends_on,omitempty"`
	OnDependencyFailure string   `json:"on_dependency_failure,omitempty"`

	// Threshold is the pass mark; nil means the suite's, then 0.8.
	Threshold *float64       `json:"threshold,omitempty"`
	Metadata  map[string]any `json:"metadata,omitempty"`
	Vars      map[string]any `json:"vars,omitempty"`

	// User, Subgoals and ExpectedToolCalls come from agent_inspect data and
	// our simulated-user additions.
	User              *SimulatedUser   `json:"user,omitempty"`
	Subgoals          []Subgoal        `json:"subgoals,omitempty"`
	ExpectedToolCalls []map[string]any `json:"expected_tool_calls,omitempty"`

	Pos Pos `json:"-"`
}

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
