package agenteval

import (
	"context"
	"errors"
	"strconv"
)

// GradeInput is everything a grader may look at.
//
// For a recorded sample, Transcript and Output are both the whole
// conversation. For one turn of a live conversation, Transcript is the
// (possibly windowed) history up to and including the turn's reply, and
// Output is only the messages the agent produced in that turn.
type GradeInput struct {
	Transcript Conversation
	Output     Conversation
	// Turn is the 1-based turn whose reply Output holds; Transcript then
	// ends with that reply. 0 grades the whole Transcript: a recorded
	// sample, or a live conversation once it is over. (A grade.Tracker
	// observing turn k gets Turn k with Output holding the conversation
	// from its first turn through turn k.)
	Turn int

	Reference          string
	ReferenceToolCalls []ToolCall
	ReferenceTopics    []string
	Rubrics            map[string]string
	// Criteria is the test-level description of what a good answer does.
	Criteria string
	Metadata map[string]any
	// Vars are the test's template variables.
	Vars map[string]any
	// Stats describe the run being graded; nil for recorded samples.
	Stats *Stats
	// TestID and Target name the test and the target that ran it, for
	// graders that pass them on (a code grader's trace); empty when
	// unknown.
	TestID string
	Target string
	// User and Simulation describe the simulated user of a simulated
	// conversation: what it was told, and what it wrote (including a
	// closing message the agent never saw).
	User       *SimulatedUser
	Simulation *Simulation
}

// Stats is what budget graders check: how long the agent took, what it
// used, and how far the conversation went.
type Stats struct {
	// LatencyMS is the agent's time for the graded unit (a turn, or the
	// whole conversation).
	LatencyMS float64
	Usage     Usage
	Turns     int
}

// InputFromSample grades a recorded sample as a whole.
func InputFromSample(s *Sample) *GradeInput {
	return &GradeInput{
		Transcript:         s.UserInput,
		Output:             s.UserInput,
		Reference:          s.Reference,
		ReferenceToolCalls: s.ReferenceToolCalls,
		ReferenceTopics:    s.ReferenceTopics,
		Rubrics:            s.Rubrics,
		Metadata:           s.Metadata,
	}
}

// Grader scores one graded unit.
//
// A grader that cannot run (a field it needs is missing, the judge is down)
// returns an error; the caller records it as a score with verdict error and
// the error as its reason, so a result is never lost. Graders must be safe for
// concurrent use.
type Grader interface {
	Grade(ctx context.Context, in *GradeInput) (Score, error)
}

// GraderFunc adapts a function to the Grader interface.
type GraderFunc func(ctx context.Context, in *GradeInput) (Score, error)

// Grade calls f.
func (f GraderFunc) Grade(ctx context.Context, in *GradeInput) (Score, error) { return f(ctx, in) }

// MissingFieldError says a grader needs a field the graded unit lacks. Its
// message leaves out the grader's name, which the score already carries.
type MissingFieldError struct {
	Grader string
	Field  string
}

func (e *MissingFieldError) Error() string {
	return "needs " + e.Field + ", which this sample does not have; add it to the row (or join it by id with --reference FILE) or drop the metric"
}

// PosError is a problem at a place in an input file. Line and Col are
// 1-based; Col counts characters, not bytes. A zero Col means the whole line.
type PosError struct {
	File string
	Line int
	Col  int
	Msg  string
}

func (e *PosError) Error() string {
	switch {
	case e.Line == 0:
		return e.File + ": " + e.Msg
	case e.Col == 0:
		return e.File + ":" + strconv.Itoa(e.Line) + ": " + e.Msg
	}
	return e.File + ":" + strconv.Itoa(e.Line) + ":" + strconv.Itoa(e.Col) + ": " + e.Msg
}

// FatalError marks an error that will repeat on every later call, such as
// rejected credentials or an unknown model. Runners stop at the first one
// and report it once, instead of recording the same error for every test.
type FatalError struct {
	Err error
}

func (e *FatalError) Error() string { return e.Err.Error() }

func (e *FatalError) Unwrap() error { return e.Err }

// UsageOf returns what the failed operation that err reports spent before
// it failed (a model call's attempts, retries and waits, and their cost),
// or nil when err says nothing of it. An error carries it by having,
// anywhere in its chain, a method SpentUsage() *Usage, as provider.Error
// does. The code that records the failure adds it to its usage once: the
// judge, the simulated user and agent.ToolLoop do.
func UsageOf(err error) *Usage {
	var s interface{ SpentUsage() *Usage }
	if errors.As(err, &s) {
		return s.SpentUsage()
	}
	return nil
}
