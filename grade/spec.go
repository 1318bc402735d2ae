package grade

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/internal/suggest"
	"github.com/agenteval/agenteval/judge"
)

// Spec configures one grader. It is what an eval file's assertion or a
// --metric flag decodes into.
type Spec struct {
	// Type names the grader: "contains", "tool_calls", "not-regex", ... Type
	// names accept snake_case and kebab-case, and a not_/not- prefix negates.
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
	// Params are the grader's own settings, as decoded JSON or YAML.
	Params map[string]any
	// Judge is the LLM judge for judge-based graders; deterministic graders
	// ignore it.
	Judge *judge.Judge
	// Dir is where relative paths in the settings (prompt files, scripts)
	// start: the eval file's directory.
	Dir string
}

// env is what a factory gets besides its params.
type env struct {
	judge *judge.Judge
	dir   string
}

// NoJudgeError is returned by New for a judge-based grader without a judge.
type NoJudgeError struct {
	Type string
}

func (e *NoJudgeError) Error() string {
	return fmt.Sprintf("%s is judged by an LLM and needs a judge model: pass --judge provider:model (for example --judge openai:gpt-4o-mini) or set AGENTEVAL_JUDGE", e.Type)
}

// outcome is what a grader implementation computes; the wrapper turns it into
// an agenteval.Score.
type outcome struct {
	score      float64
	reason     string
	assertions []agenteval.Assertion
	details    map[string]any
	usage      *agenteval.Usage
}

type gradeFunc func(ctx context.Context, in *agenteval.GradeInput) (outcome, error)

// factory builds a grader from its params. It must reject bad params with an
// error that says what to write instead.
type factory func(params map[string]any, env env) (gradeFunc, error)

type entry struct {
	build  factory
	help   string
	judged bool
	// tracker, when set, builds the grader's per-conversation tracker.
	tracker func(params map[string]any, env env) (func() trackerCore, error)
}

var registry = map[string]entry{}

func register(name, help string, f func(map[string]any) (gradeFunc, error)) {
	registry[name] = entry{build: func(p map[string]any, _ env) (gradeFunc, error) { return f(p) }, help: help}
}

// registerJudged adds a grader that needs the LLM judge.
func registerJudged(name, help string, f factory) {
	registry[name] = entry{build: f, help: help, judged: true}
}

// Judged reports whether a grader type needs an LLM judge.
func Judged(typ string) bool {
	name, _ := Normalize(typ)
	return registry[name].judged
}

// Names lists the known grader types, sorted.
func Names() []string {
	out := make([]string, 0, len(registry))
	for n := range registry {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Help returns a one-line description of a grader type.
func Help(name string) string { return registry[name].help }

// Normalize maps a type name onto its registry form: kebab-case becomes
// snake_case, and a not_ prefix is split off.
func Normalize(typ string) (name string, negate bool) {
	n := strings.ReplaceAll(strings.ToLower(strings.TrimSpace(typ)), "-", "_")
	if rest, ok := strings.CutPrefix(n, "not_"); ok {
		return rest, true
	}
	return n, false
}

// UnknownGraderError is returned by New for a type that does not exist.
type UnknownGraderError struct {
	Type    string
	Suggest string
}

func (e *UnknownGraderError) Error() string {
	msg := fmt.Sprintf("unknown metric %q", e.Type)
	if e.Suggest != "" {
		msg += fmt.Sprintf("; did you mean %q?", e.Suggest)
	}
	return msg + "; known metrics: " + strings.Join(Names(), ", ")
}

// New builds a grader from a spec. Errors name the grader and say what to
// change.
func New(spec Spec) (agenteval.Grader, error) {
	name, negated := Normalize(spec.Type)
	e, ok := registry[name]
	if !ok {
		return nil, &UnknownGraderError{Type: spec.Type, Suggest: suggest.Closest(name, Names())}
	}
	if e.judged && spec.Judge == nil {
		return nil, &NoJudgeError{Type: spec.Type}
	}
	fn, err := e.build(spec.Params, env{judge: spec.Judge, dir: spec.Dir})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", spec.Type, err)
	}
	g := &grader{fn: fn, typ: name, name: spec.Name, weight: 1, required: spec.Required,
		negate: spec.Negate != negated, threshold: agenteval.DefaultThreshold}
	if e.tracker != nil {
		if g.tracker, err = e.tracker(spec.Params, env{judge: spec.Judge, dir: spec.Dir}); err != nil {
			return nil, fmt.Errorf("%s: %w", spec.Type, err)
		}
	}
	if g.name == "" {
		g.name = spec.Type
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
	fn        gradeFunc
	tracker   func() trackerCore
	typ, name string
	weight    float64
	required  bool
	negate    bool
	threshold float64
}

// Grade runs the grader and fills in the fields every score shares. A panic
// in a grader is turned into an error score rather than taking the run down.
func (g *grader) Grade(ctx context.Context, in *agenteval.GradeInput) (agenteval.Score, error) {
	return g.run(ctx, in, g.fn)
}

// run runs fn and fills in the fields every score shares. A panic in a
// grader is turned into an error score rather than taking the run down.
func (g *grader) run(ctx context.Context, in *agenteval.GradeInput, fn gradeFunc) (s agenteval.Score, err error) {
	start := time.Now()
	s = agenteval.Score{Name: g.name, Type: g.typ, Weight: g.weight, Required: g.required}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%s: internal error: %v", g.name, r)
			s.Verdict, s.Reason = agenteval.Error, err.Error()
		}
	}()
	o, err := fn(ctx, in)
	s.DurationMS = float64(time.Since(start).Microseconds()) / 1000
	if !o.usage.IsZero() {
		s.Usage = o.usage
	}
	if err != nil {
		s.Verdict = agenteval.Error
		s.Reason = err.Error()
		return s, err
	}
	s.Score, s.Reason, s.Assertions, s.Details = o.score, o.reason, o.assertions, o.details
	flagInjection(&s, in, o.usage)
	if g.negate {
		s.Score = 1 - s.Score
		s.Reason = "negated: " + s.Reason
		for i := range s.Assertions {
			s.Assertions[i].Passed = !s.Assertions[i].Passed
			s.Assertions[i].Text = "not: " + s.Assertions[i].Text
		}
	}
	s.Verdict = agenteval.VerdictFor(s.Score, g.threshold)
	return s, nil
}

// ErrorScore is the score recorded for a grader that could not run.
func ErrorScore(g agenteval.Grader, err error) agenteval.Score {
	s := agenteval.Score{Verdict: agenteval.Error, Reason: err.Error(), Weight: 1}
	if gg, ok := g.(*grader); ok {
		s.Name, s.Type, s.Weight, s.Required = gg.name, gg.typ, gg.weight, gg.required
	}
	return s
}

// decodeParams decodes a grader's params into a typed config, rejecting
// unknown keys with a did-you-mean hint.
func decodeParams(params map[string]any, into any, known ...string) error {
	for k := range params {
		found := false
		for _, kk := range known {
			if k == kk {
				found = true
				break
			}
		}
		if !found {
			if near := suggest.Closest(k, known); near != "" {
				return fmt.Errorf("unknown setting %q; did you mean %q?", k, near)
			}
			if len(known) == 0 {
				return fmt.Errorf("unknown setting %q; this metric takes no settings", k)
			}
			return fmt.Errorf("unknown setting %q; known settings: %s", k, strings.Join(known, ", "))
		}
	}
	if len(params) == 0 {
		return nil
	}
	b, err := json.Marshal(params)
	if err != nil {
		return fmt.Errorf("settings: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(into); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return fmt.Errorf("setting %q must be %s, not %s", te.Field, goTypeWord(te.Type.Kind().String()), te.Value)
		}
		return fmt.Errorf("settings: %w", err)
	}
	return nil
}

func goTypeWord(kind string) string {
	switch kind {
	case "bool":
		return "true or false"
	case "string":
		return "a string"
	case "slice":
		return "a list"
	case "map", "struct":
		return "an object"
	case "float64", "int":
		return "a number"
	}
	return kind
}

// FromAssertion turns an eval file's assertion into a grader spec. A plain
// string assertion (Criterion set) is a one-criterion rubrics grader; the
// runner usually groups a turn's strings into one rubrics call instead.
func FromAssertion(a agenteval.AssertionSpec) Spec {
	if a.Type == "" && a.Criterion != "" {
		return Spec{Type: "rubrics", Name: a.Name, Weight: a.Weight, Required: a.Required, Params: map[string]any{"criteria": []any{a.Criterion}}}
	}
	return Spec{Type: a.Type, Name: a.Name, Weight: a.Weight, Required: a.Required, Negate: a.Negate, Threshold: a.Threshold, Params: a.Params}
}
