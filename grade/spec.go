package grade

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/internal/suggest"
	"github.com/agenteval/agenteval/judge"
)

// Spec configures one grader. It is what an eval file's assertion or a
// --metric flag decodes into, and what Go code fills in by hand.
type Spec struct {
	// Type names the grader: "contains", "tool_calls", "not-regex", ...
	// Type names accept snake_case and kebab-case, and a not_/not- prefix
	// negates.
	Type string
	// Name is the score's name in results; it defaults to Type.
	Name string
	// Weight counts this grader in a weighted mean; nil means 1.
	Weight *float64
	// Required makes a failure of this grader fail the whole unit.
	Required bool
	// Negate inverts the grader: score becomes 1 - score.
	Negate bool
	// Threshold is the score needed to pass; nil means the default, 0.8.
	Threshold *float64
	// Options are the grader's own settings: its options struct (Text,
	// ToolCallsOptions, Rubrics, ...) from Go, or a map of settings as an
	// eval file or a --metric flag gives them.
	Options any
	// Judge is the LLM judge for graders that need one; the others ignore
	// it.
	Judge *judge.Judge
	// Dir is where relative paths in the options (prompt files, scripts,
	// schemas) start: the eval file's directory.
	Dir string
	// Graders are the definitions Type is looked up in, and a composite's
	// members: the caller's choice, such as All with graders of its own
	// appended. Nil means All.
	Graders []*Definition
}

// NoJudgeError is returned by New for a grader that needs the judge when
// there is none.
type NoJudgeError struct {
	Type string
}

func (e *NoJudgeError) Error() string {
	return fmt.Sprintf("%s is judged by an LLM and needs a judge model: pass --judge provider:model (for example --judge openai:gpt-4o-mini) or set AGENTEVAL_JUDGE", e.Type)
}

// UnknownGraderError is returned by New for a type that does not exist.
type UnknownGraderError struct {
	Type    string
	Suggest string
	// Known are the names of the graders the type was looked up in; nil
	// means All's.
	Known []string
}

func (e *UnknownGraderError) Error() string {
	msg := fmt.Sprintf("unknown metric %q", e.Type)
	if e.Suggest != "" {
		msg += fmt.Sprintf("; did you mean %q?", e.Suggest)
	}
	names := slices.Clone(e.Known)
	if names == nil {
		names = Names(All())
	}
	slices.Sort(names)
	return msg + "; known metrics: " + strings.Join(names, ", ")
}

// lookup finds a type's definition in defs, the caller's graders; nil
// means All.
func lookup(defs []*Definition, typ string) (*Definition, bool, error) {
	if defs == nil {
		defs = All()
	}
	d, negate, ok := Find(defs, typ)
	if !ok {
		name, _ := normalize(typ)
		var known []string
		for _, d := range defs {
			if d == nil {
				continue
			}
			known = append(known, d.Name)
			known = append(known, d.Aliases...)
		}
		return nil, false, &UnknownGraderError{Type: typ, Suggest: suggest.Closest(name, known), Known: Names(defs)}
	}
	return d, negate, nil
}

// NeedsJudge reports whether the grader spec describes calls the LLM
// judge. It is false for an unknown type or options that do not decode,
// which New reports.
func (s Spec) NeedsJudge() bool {
	d, _, err := lookup(s.Graders, s.Type)
	if err != nil {
		return false
	}
	b, err := d.options(s.Options, s.Graders)
	return err == nil && b.needsJudge
}

// New builds a grader from a spec, looking its type up in spec.Graders
// (All when nil), which must pass Validate. Errors name the grader and
// say what to change.
func New(spec Spec) (agenteval.Grader, error) {
	if spec.Graders != nil {
		if err := Validate(spec.Graders); err != nil {
			return nil, err
		}
	}
	g, err := build(spec)
	if err != nil {
		return nil, err
	}
	if spec.Judge == nil && g.needsJudge {
		typ := spec.Type
		if g.def.NeedsJudge != nil && !g.def.NeedsJudge(nil) {
			typ += " with a $check" // judged only for what these options ask
		}
		return nil, &NoJudgeError{Type: typ}
	}
	return g, nil
}

// build is New without the judge check: a plan checks options before any
// judge is known, and says where one is needed.
func build(spec Spec) (*grader, error) {
	d, negated, err := lookup(spec.Graders, spec.Type)
	if err != nil {
		return nil, err
	}
	return buildFrom(d, negated, spec)
}

// buildFrom is build with the definition found: spec.Type names d, and
// negated says it was written with a not_ prefix.
func buildFrom(d *Definition, negated bool, spec Spec) (*grader, error) {
	// The options are decoded once, for the grader and the judge test.
	b, err := d.options(spec.Options, spec.Graders)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", spec.Type, err)
	}
	// The score's type is the name as written (an alias stays an alias),
	// normalised and without its not_.
	name, _ := normalize(spec.Type)
	g := &grader{def: d, needsJudge: b.needsJudge, typ: name, name: spec.Name, weight: 1, required: spec.Required,
		negate: spec.Negate != negated, threshold: agenteval.DefaultThreshold}
	if g.fn, g.track, err = b.make(Env{Judge: spec.Judge, Dir: spec.Dir, Graders: spec.Graders}); err != nil {
		return nil, fmt.Errorf("%s: %w", spec.Type, err)
	}
	if g.name == "" {
		g.name = spec.Type
		if spec.Negate {
			g.name = defaultName(spec)
		}
	}
	if spec.Weight != nil {
		if !(*spec.Weight >= 0) || math.IsInf(*spec.Weight, 0) {
			return nil, fmt.Errorf("%s: weight %v is negative; use 0 to record a score without counting it", spec.Type, *spec.Weight)
		}
		g.weight = *spec.Weight
	}
	if spec.Threshold != nil {
		if !(*spec.Threshold >= 0 && *spec.Threshold <= 1) {
			return nil, fmt.Errorf("%s: threshold %v is outside [0, 1]", spec.Type, *spec.Threshold)
		}
		g.threshold = *spec.Threshold
	}
	return g, nil
}

type grader struct {
	def *Definition
	// needsJudge: these options call the judge.
	needsJudge bool
	fn         Func
	track      func() Tracking
	typ, name  string
	weight     float64
	required   bool
	negate     bool
	threshold  float64
}

// Grade runs the grader and fills in the fields every score shares.
func (g *grader) Grade(ctx context.Context, in *agenteval.GradeInput) (agenteval.Score, error) {
	return g.run(ctx, in, g.fn)
}

// run runs fn and fills in the fields every score shares.
func (g *grader) run(ctx context.Context, in *agenteval.GradeInput, fn Func) (agenteval.Score, error) {
	start := time.Now()
	s := agenteval.Score{Name: g.name, Type: g.typ, Weight: g.weight, Required: g.required}
	o, err := fn(ctx, in)
	s.DurationMS = float64(time.Since(start).Microseconds()) / 1000
	if !o.Usage.IsZero() {
		s.Usage = o.Usage
	}
	if err != nil {
		s.Verdict, s.Reason = agenteval.VerdictError, err.Error()
		return s, err
	}
	if o.Skip {
		// Neither negated nor held to the threshold: nothing was graded.
		s.Verdict, s.Reason, s.Assertions = agenteval.VerdictSkip, o.Reason, o.Assertions
		return s, nil
	}
	s.Score, s.Reason, s.Assertions, s.Details, s.Scores = o.Score, o.Reason, o.Assertions, o.Details, o.Scores
	flagInjection(&s, in, o.Usage)
	if g.negate {
		s.Score = 1 - s.Score
		s.Reason = "negated: " + s.Reason
		for i := range s.Assertions {
			s.Assertions[i].Passed = !s.Assertions[i].Passed
			s.Assertions[i].Text = "not: " + s.Assertions[i].Text
		}
	}
	s.Verdict = agenteval.VerdictFor(s.Score, g.threshold)
	if o.Fail && !g.negate {
		s.Verdict = agenteval.VerdictFail
	}
	return s, nil
}

// Track starts following a conversation, for a grader that can (subgoals);
// nil for the others.
func (g *grader) Track() Tracker {
	if g.track == nil {
		return nil
	}
	return tracker{g.track(), g}
}

// Tracker follows one conversation turn by turn for a grader whose score
// depends on when things happened; the runner calls Observe after each
// turn, in order, and Grade at the end.
type Tracker interface {
	Observe(ctx context.Context, in *agenteval.GradeInput)
	Settled(k int) bool
	Err() error
	Wait() agenteval.Usage
	Grade(ctx context.Context, in *agenteval.GradeInput) (agenteval.Score, error)
}

// Trackable is a grader that can follow a conversation as it happens.
type Trackable interface {
	Track() Tracker
}

// tracker scores a Tracking through its grader's wrapper.
type tracker struct {
	Tracking
	g *grader
}

func (t tracker) Grade(ctx context.Context, in *agenteval.GradeInput) (agenteval.Score, error) {
	return t.g.run(ctx, in, t.Finish)
}

// Run grades in with g and always returns a score: a grader's error
// becomes a score with verdict error and the error as its reason, and a
// panic becomes such an error, so one broken grader never costs a result.
// name and typ fill in a score that has none. The error is returned too,
// so that fatal ones (rejected credentials) can stop a run.
func Run(ctx context.Context, g agenteval.Grader, name, typ string, in *agenteval.GradeInput) (s agenteval.Score, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("%s: internal error: grader panicked: %v", name, v)
			s = agenteval.Score{Verdict: agenteval.VerdictError}
		}
		if err != nil && s.Verdict != agenteval.VerdictError {
			s = agenteval.Score{Verdict: agenteval.VerdictError}
		}
		if s.Verdict == agenteval.VerdictError && s.Reason == "" && err != nil {
			s.Reason = err.Error()
		}
		if s.Name != "" {
			return // the grader filled the score in, weight included
		}
		if gg, ok := g.(*grader); ok {
			s.Name, s.Type, s.Weight, s.Required = gg.name, gg.typ, gg.weight, gg.required
			return
		}
		s.Name, s.Type = name, typ
		if s.Verdict == agenteval.VerdictError {
			s.Weight = 1 // a grader of the caller's that could not say
		}
	}()
	return g.Grade(ctx, in)
}

// defaultName is the name of a grader given none: its type in snake_case,
// with not_ when the grader is negated (by a not_ prefix or by Negate), so
// that a negated check is never shown or summarised under the name of the
// check it inverts.
func defaultName(spec Spec) string {
	name, negated := normalize(spec.Type)
	if negated != spec.Negate {
		return "not_" + name
	}
	return name
}

// fromAssertion turns an eval file's assertion into a grader spec. A plain
// string assertion (Criterion set) is a one-criterion rubrics grader; a
// plan usually groups a unit's strings into one rubrics call instead.
func fromAssertion(a agenteval.AssertionSpec) Spec {
	if a.Type == "" && a.Criterion != "" {
		return Spec{Type: Rubrics.Name, Name: a.Name, Weight: a.Weight, Required: a.Required,
			Options: RubricsOptions{Criteria: Criteria{{Outcome: a.Criterion}}}}
	}
	var opts any
	if a.Params != nil {
		opts = a.Params
	}
	return Spec{Type: a.Type, Name: a.Name, Weight: a.Weight, Required: a.Required, Negate: a.Negate, Threshold: a.Threshold, Options: opts}
}
