package grade

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/judge"
)

// Composite runs several graders and combines their scores one way
// (AgentV's composite, promptfoo's assert-set): a weighted average, the
// share that passed, a program's verdict, or an LLM's.
// Its members are looked up in the caller's graders (Env.Graders), so a
// member may be a grader of the caller's own.
var Composite = withOptions(Definition{Name: "composite", Aliases: []string{"assert_set"},
	Doc: "several graders in one score: aggregator weighted_average (default), threshold (the share that passed), code_grader or llm_grader"},
	func(o CompositeOptions, defs []*Definition) bool { return nested.needsJudge(o, defs) }, false,
	func(o CompositeOptions, env Env) (Func, func() Tracking, error) {
		fn, err := nested.build(o, env)
		return fn, nil, err
	})

// nested holds the composite's functions, which build other graders and
// so may look graders up in All: set at init, they keep the list's
// initialisation from depending on itself.
var nested struct {
	build      func(CompositeOptions, Env) (Func, error)
	needsJudge func(CompositeOptions, []*Definition) bool
}

func init() {
	nested.build = newComposite
	nested.needsJudge = CompositeOptions.needsJudge
}

// CompositeOptions is the options of composite.
type CompositeOptions struct {
	// Assertions are the members, each a grader's settings with its type.
	Assertions []map[string]any `json:"assertions" alias:"graders,evaluators,assert" doc:"the member graders: each {type, name, ...settings}"`
	Aggregator Aggregator       `json:"aggregator" doc:"how the members' scores combine: {type: weighted_average, weights: {name: w}}, {type: threshold, threshold: 0.5}, {type: code_grader, path: cmd}, {type: llm_grader, prompt: ...}"`
}

// Aggregator says how a composite combines its members.
type Aggregator struct {
	Type      string             `json:"type"`
	Weights   map[string]float64 `json:"weights"`
	Threshold *float64           `json:"threshold"`
	Path      Strings            `json:"path"`
	Command   Strings            `json:"command"`
	Cwd       string             `json:"cwd"`
	Prompt    string             `json:"prompt"`
}

// member is a composite's member, built.
type member struct {
	name   string
	weight float64
	g      *grader
	spec   Spec
}

func (o CompositeOptions) specs() ([]Spec, error) {
	var out []Spec
	for i, m := range o.Assertions {
		s, err := specOf(m)
		if err != nil {
			return nil, fmt.Errorf("assertions[%d]: %w", i, err)
		}
		out = append(out, s)
	}
	return out, nil
}

// needsJudge says whether a member, looked up in defs, or the aggregator
// calls the judge.
func (o CompositeOptions) needsJudge(defs []*Definition) bool {
	specs, err := o.specs()
	if err != nil {
		return false
	}
	for _, s := range specs {
		s.Graders = defs
		if s.NeedsJudge() {
			return true
		}
	}
	return aggregatorKind(o.Aggregator.Type) == "llm_grader"
}

// specOf reads a member's settings: type, the settings every grader takes,
// and the rest, which are its own.
func specOf(m map[string]any) (Spec, error) {
	s := Spec{}
	opts := map[string]any{}
	for k, v := range m {
		switch k {
		case "type":
			s.Type, _ = v.(string)
		case "name":
			s.Name, _ = v.(string)
		case "weight":
			f, ok := number(v)
			if !ok {
				return s, fmt.Errorf("weight must be a number")
			}
			s.Weight = &f
		case "required":
			s.Required, _ = v.(bool)
		case "negate":
			s.Negate, _ = v.(bool)
		case "threshold":
			f, ok := number(v)
			if !ok {
				return s, fmt.Errorf("threshold must be a number")
			}
			s.Threshold = &f
		default:
			opts[k] = v
		}
	}
	if s.Type == "" {
		return s, fmt.Errorf("a member needs type")
	}
	if len(opts) > 0 {
		s.Options = opts
	}
	return s, nil
}

// AggregatorRunsProgram says whether a composite whose aggregator has this
// type runs a program to combine its members. Validation under --no-exec
// asks it rather than matching spellings of its own, so that every
// spelling the runner would start a program for is refused before the run.
func AggregatorRunsProgram(typ string) bool { return aggregatorKind(typ) == "code_grader" }

func aggregatorKind(t string) string {
	switch strings.ReplaceAll(strings.ToLower(t), "-", "_") {
	case "", "weighted_average", "weighted_mean", "mean":
		return "weighted_average"
	case "threshold":
		return "threshold"
	case "code_grader", "code_judge", "script":
		return "code_grader"
	case "llm_grader", "llm_judge":
		return "llm_grader"
	}
	return ""
}

func newComposite(o CompositeOptions, env Env) (Func, error) {
	specs, err := o.specs()
	if err != nil {
		return nil, err
	}
	if len(specs) == 0 {
		return nil, fmt.Errorf("needs assertions: the member graders")
	}
	var members []member
	for i, s := range specs {
		s.Judge, s.Dir, s.Graders = env.Judge, env.Dir, env.Graders
		g, err := build(s)
		if err != nil {
			return nil, fmt.Errorf("assertions[%d]: %w", i, err)
		}
		name := s.Name
		if name == "" {
			name = defaultName(s)
		}
		members = append(members, member{name: name, weight: g.weight, g: g, spec: s})
	}
	agg := o.Aggregator
	kind := aggregatorKind(agg.Type)
	switch kind {
	case "":
		return nil, fmt.Errorf("aggregator type %q is not weighted_average, threshold, code_grader or llm_grader", agg.Type)
	case "threshold":
		if agg.Threshold == nil || *agg.Threshold < 0 || *agg.Threshold > 1 {
			return nil, fmt.Errorf("a threshold aggregator needs threshold, from 0 to 1: the share of members that must pass")
		}
	case "code_grader":
		if len(agg.Path) == 0 && len(agg.Command) == 0 {
			return nil, fmt.Errorf("a code_grader aggregator needs path: the command that combines the results")
		}
	}
	var argv []string
	if kind == "code_grader" {
		cmd := agg.Command
		if len(cmd) == 0 {
			cmd = agg.Path
		}
		if argv, err = (ScriptOptions{Command: cmd}).Argv(); err != nil {
			return nil, err
		}
	}
	return func(ctx context.Context, in *agenteval.GradeInput) (Outcome, error) {
		scores := make([]agenteval.Score, len(members))
		var o Outcome
		var usage agenteval.Usage
		for i, m := range members {
			s, err := Run(ctx, m.g, m.name, m.g.typ, in)
			if err != nil && s.Verdict != agenteval.VerdictError {
				return o, err
			}
			scores[i] = s
			usage.Add(s.Usage)
			for _, a := range s.Assertions {
				a.Text = "[" + m.name + "] " + a.Text
				o.Assertions = append(o.Assertions, a)
			}
		}
		o.Scores, o.Usage = scores, &usage
		for i, s := range scores {
			if s.Verdict == agenteval.VerdictError {
				return o, fmt.Errorf("member %s could not grade: %s", members[i].name, s.Reason)
			}
		}
		switch kind {
		case "threshold":
			passed, counted := 0, 0
			for _, s := range scores {
				if s.Verdict == agenteval.VerdictSkip {
					continue
				}
				counted++
				if s.Verdict == agenteval.VerdictPass {
					passed++
				}
			}
			o.Score = fraction(passed, counted)
			o.Reason = fmt.Sprintf("%d of %d members passed (threshold %s)", passed, counted, fmtNum(*agg.Threshold))
			if o.Score < *agg.Threshold {
				o.Fail = true
			}
		case "code_grader":
			payload, _ := json.Marshal(map[string]any{"results": resultsMap(members, scores)})
			out, err := runScript(ctx, argv, dirOf(env.Dir, agg.Cwd), 60*time.Second, payload)
			if err != nil {
				return o, fmt.Errorf("aggregator: %w", err)
			}
			o.Score, o.Reason, o.Skip = out.Score, out.Reason, out.Skip
			o.Assertions = append(o.Assertions, out.Assertions...)
		case "llm_grader":
			out, err := aggregateByJudge(ctx, env.Judge, agg.Prompt, env.Dir, in, resultsMap(members, scores))
			usage.Add(out.Usage)
			if err != nil {
				return o, fmt.Errorf("aggregator: %w", err)
			}
			o.Score, o.Reason = out.Score, out.Reason
		default:
			var sum, total float64
			for i, s := range scores {
				if s.Verdict == agenteval.VerdictSkip {
					continue
				}
				w := members[i].weight
				if x, ok := agg.Weights[members[i].name]; ok {
					w = x
				}
				sum += w * s.Score
				total += w
			}
			o.Score = 1
			if total > 0 {
				o.Score = sum / total
			}
			o.Reason = fmt.Sprintf("weighted average of %d members", len(scores))
		}
		return o, nil
	}, nil
}

func dirOf(base, cwd string) string {
	if cwd == "" {
		return base
	}
	if strings.HasPrefix(cwd, "/") {
		return cwd
	}
	return base + "/" + cwd
}

// resultsMap is what an aggregator reads: each member's score and
// assertions, by name.
func resultsMap(members []member, scores []agenteval.Score) map[string]any {
	out := map[string]any{}
	for i, s := range scores {
		out[members[i].name] = map[string]any{"score": s.Score, "verdict": s.Verdict, "assertions": s.Assertions, "reason": s.Reason}
	}
	return out
}

// aggregateByJudge asks the judge for the composite's score: the author's
// prompt with {{ EVALUATOR_RESULTS_JSON }}, or ours.
func aggregateByJudge(ctx context.Context, j *judge.Judge, prompt, dir string, in *agenteval.GradeInput, results map[string]any) (Outcome, error) {
	b, _ := json.MarshalIndent(results, "", "  ")
	if prompt == "" {
		prompt = "Several graders checked the assistant's answer; their results follow. Combine them into one score for the answer, giving the most weight to the results that matter most for the task, and say why.\n\n{{ EVALUATOR_RESULTS_JSON }}"
	} else if p := dir + "/" + strings.TrimPrefix(prompt, "file://"); fileExists(p) {
		if text, err := readText(p); err == nil {
			prompt = text
		}
	}
	parts, err := fill(prompt, in, map[string]string{"EVALUATOR_RESULTS_JSON": string(b), "evaluator_results_json": string(b)})
	if err != nil {
		return Outcome{}, err
	}
	p, err := judge.Render("llm_grader_score", map[string]any{"Instructions": parts})
	if err != nil {
		return Outcome{}, err
	}
	v, usage, err := j.Ask(ctx, p, "llm_grader_score", judge.ObjectSchema(
		judge.Field{Key: "reason", Value: judge.String("why this score")},
		judge.Field{Key: "score", Value: map[string]any{"type": "number", "description": "from 0 to 1"}},
	))
	o := Outcome{Usage: &usage}
	if err != nil {
		return o, err
	}
	f, _ := number(v["score"])
	o.Score = min(1, max(0, f))
	o.Reason, _ = v["reason"].(string)
	return o, nil
}
