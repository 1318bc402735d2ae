package grade

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/judge"
)

// Criterion is one rubric criterion. Eval files write it as a string, or
// as {id, outcome (or text, criteria), weight, required, operator,
// min_score, score_ranges}, as AgentV does.
type Criterion struct {
	ID      string   `json:"id,omitempty"`
	Outcome string   `json:"outcome"`
	Weight  *float64 `json:"weight,omitempty"`
	// Required makes the rubric's verdict fail when this criterion fails;
	// its score stays the weighted share, as in AgentV. To make a rubric
	// gate its test, mark the assertion itself required.
	Required bool `json:"required,omitempty"`
	// Operator is how the outcome is read: correctness (the reply must
	// positively state or do it) or contradiction (a guard: the reply
	// passes unless it says something incompatible with it, even when it
	// does not mention it at all).
	Operator string `json:"operator,omitempty"`
	// MinScore, with ScoreRanges, is the least normalised score (0..1)
	// this criterion must reach, or the rubric's verdict fails.
	MinScore *float64 `json:"min_score,omitempty"`
	// ScoreRanges make the criterion scored from 0 to 10 instead of passed
	// or failed: bands of scores, each with what it means.
	ScoreRanges []ScoreRange `json:"score_ranges,omitempty"`
}

// ScoreRange is a band of scores 0..10 and what work in it looks like.
type ScoreRange struct {
	Min, Max int
	Outcome  string
}

// The rubric operators.
const (
	OperatorCorrectness   = "correctness"
	OperatorContradiction = "contradiction"
)

// Criteria is a list of criteria, as eval files and --metric flags write
// them.
type Criteria []Criterion

// ParamTypes says a list.
func (Criteria) ParamTypes() []string { return []string{"array"} }

// UnmarshalJSON reads criteria given as strings or as objects.
func (c *Criteria) UnmarshalJSON(b []byte) error {
	var raw []any
	if err := decodeValue(json.RawMessage(b), &raw); err != nil {
		return notA(b, c)
	}
	out := make(Criteria, 0, len(raw))
	for i, r := range raw {
		switch v := r.(type) {
		case string:
			out = append(out, Criterion{Outcome: v})
		case map[string]any:
			cr, err := parseCriterion(v)
			if err != nil {
				return fmt.Errorf("[%d]%s", i, err)
			}
			out = append(out, cr)
		default:
			return fmt.Errorf("[%d] must be a string or an object with outcome", i)
		}
	}
	*c = out
	return nil
}

func parseCriterion(v map[string]any) (Criterion, error) {
	var cr Criterion
	cr.ID, _ = v["id"].(string)
	for _, k := range []string{"outcome", "text", "criterion", "criteria"} {
		if s, ok := v[k].(string); ok && cr.Outcome == "" {
			cr.Outcome = s
		}
	}
	if w, ok := v["weight"]; ok {
		f, ok := number(w)
		if !ok {
			return cr, fmt.Errorf(".weight must be a number ≥ 0")
		}
		cr.Weight = &f
	}
	cr.Required, _ = v["required"].(bool)
	if op, ok := v["operator"]; ok {
		s, _ := op.(string)
		if s != OperatorCorrectness && s != OperatorContradiction {
			return cr, fmt.Errorf(".operator %s is not correctness or contradiction", show(op))
		}
		cr.Operator = s
	}
	if ms, ok := v["min_score"]; ok {
		f, ok := number(ms)
		if !ok || f <= 0 || f > 1 {
			return cr, fmt.Errorf(".min_score must be in (0, 1], not %s", show(ms))
		}
		cr.MinScore = &f
	} else if rms, ok := v["required_min_score"]; ok {
		f, ok := number(rms)
		if !ok || f < 0 || f > 10 || f != math.Trunc(f) {
			return cr, fmt.Errorf(".required_min_score must be a whole number from 0 to 10, not %s", show(rms))
		}
		f /= 10
		cr.MinScore = &f
	}
	if sr, ok := v["score_ranges"]; ok {
		ranges, err := parseScoreRanges(sr)
		if err != nil {
			return cr, fmt.Errorf(".score_ranges: %w", err)
		}
		cr.ScoreRanges = ranges
	}
	return cr, nil
}

// parseScoreRanges reads score bands: a list of {score_range: [min, max],
// outcome}, or the shorthand map {0: ..., 3: ..., 7: ...} of lower bounds.
// The bands must not overlap and must cover 0 to 10.
func parseScoreRanges(v any) ([]ScoreRange, error) {
	var out []ScoreRange
	switch x := v.(type) {
	case map[string]any:
		var lows []int
		for k := range x {
			n, err := strconv.Atoi(k)
			if err != nil || n < 0 || n > 10 {
				return nil, fmt.Errorf("a shorthand map's keys are the bands' lowest scores, 0 to 10; %q is not one", k)
			}
			lows = append(lows, n)
		}
		sort.Ints(lows)
		for i, lo := range lows {
			hi := 10
			if i+1 < len(lows) {
				hi = lows[i+1] - 1
			}
			text, _ := x[strconv.Itoa(lo)].(string)
			out = append(out, ScoreRange{Min: lo, Max: hi, Outcome: text})
		}
	case []any:
		for i, item := range x {
			m, ok := item.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("[%d] must be {score_range: [min, max], outcome}", i)
			}
			rng, _ := m["score_range"].([]any)
			if len(rng) != 2 {
				return nil, fmt.Errorf("[%d].score_range must be [min, max]", i)
			}
			lo, ok1 := number(rng[0])
			hi, ok2 := number(rng[1])
			if !ok1 || !ok2 || lo != math.Trunc(lo) || hi != math.Trunc(hi) || lo < 0 || hi > 10 || lo > hi {
				return nil, fmt.Errorf("[%d].score_range must be two whole numbers 0..10, the first not above the second", i)
			}
			text, _ := m["outcome"].(string)
			out = append(out, ScoreRange{Min: int(lo), Max: int(hi), Outcome: text})
		}
	default:
		return nil, fmt.Errorf("must be a list of {score_range, outcome} or a map of lowest scores to outcomes")
	}
	covered := make([]int, 11)
	for _, r := range out {
		if strings.TrimSpace(r.Outcome) == "" {
			return nil, fmt.Errorf("the band %d..%d has no outcome", r.Min, r.Max)
		}
		for s := r.Min; s <= r.Max; s++ {
			covered[s]++
		}
	}
	for s, n := range covered {
		switch {
		case n > 1:
			return nil, fmt.Errorf("bands overlap at score %d", s)
		case n == 0:
			return nil, fmt.Errorf("no band covers score %d; the bands must cover 0 to 10", s)
		}
	}
	return out, nil
}

// weightedCriterion is a criterion ready to judge.
type weightedCriterion struct {
	judge.Criterion
	weight   float64
	required bool
	minScore *float64
	ranges   []ScoreRange
	outcome  string
}

// checkCriteria gives each criterion an id and a weight, and rejects empty
// ones.
func checkCriteria(list Criteria) ([]weightedCriterion, error) {
	out := make([]weightedCriterion, 0, len(list))
	for i, c := range list {
		if strings.TrimSpace(c.Outcome) == "" && len(c.ScoreRanges) == 0 {
			return nil, fmt.Errorf("criteria[%d] needs outcome: the statement to check", i)
		}
		w := weightedCriterion{Criterion: judge.Criterion{ID: c.ID, Text: criterionText(c)}, weight: 1, required: c.Required,
			minScore: c.MinScore, ranges: c.ScoreRanges, outcome: c.Outcome}
		if w.ID == "" {
			w.ID = fmt.Sprintf("criterion-%d", i+1)
		}
		if c.Weight != nil {
			if !(*c.Weight >= 0) || math.IsInf(*c.Weight, 0) {
				return nil, fmt.Errorf("criteria[%d].weight must be a number ≥ 0", i)
			}
			w.weight = *c.Weight
		}
		out = append(out, w)
	}
	return out, nil
}

// criterionText is a criterion as the judge reads it: its operator spelled
// out, and its score bands.
func criterionText(c Criterion) string {
	text := c.Outcome
	switch c.Operator {
	case OperatorContradiction:
		text = "Contradiction guard: this passes unless the assistant states or does something incompatible with the following; not mentioning it at all passes. " + c.Outcome
	case OperatorCorrectness:
		text = c.Outcome + " (This must be positively stated or done: leaving it out, or contradicting it, does not pass.)"
	}
	if len(c.ScoreRanges) > 0 {
		var b strings.Builder
		b.WriteString(strings.TrimSpace(text))
		if text != "" {
			b.WriteString("\n")
		}
		b.WriteString("Score bands:")
		for _, r := range c.ScoreRanges {
			fmt.Fprintf(&b, "\n%d to %d: %s", r.Min, r.Max, r.Outcome)
		}
		return b.String()
	}
	return text
}

// RubricsOptions is the options of rubrics.
type RubricsOptions struct {
	Criteria Criteria `json:"criteria" doc:"the criteria to judge, beside the sample's rubrics: strings, or {id, outcome, weight, required, operator, min_score, score_ranges}"`
	Samples  int      `json:"samples" doc:"judge votes per decision, an odd number (default 1)"`
}

func newRubrics(o RubricsOptions, env Env) (Func, error) {
	fixed, err := checkCriteria(o.Criteria)
	if err != nil {
		return nil, err
	}
	j, err := judgeFor(env.Judge, o.Samples)
	if err != nil {
		return nil, err
	}
	scored := false
	for _, c := range fixed {
		scored = scored || len(c.ranges) > 0
	}
	return func(ctx context.Context, in *agenteval.GradeInput) (Outcome, error) {
		if levels, nums, ok := scaleLevels(in.Rubrics); ok && len(fixed) == 0 {
			return gradeScale(ctx, j, in, levels, nums)
		}
		crits := append([]weightedCriterion(nil), fixed...)
		for _, k := range sortedKeys(in.Rubrics) {
			crits = append(crits, weightedCriterion{Criterion: judge.Criterion{ID: k, Text: in.Rubrics[k]}, weight: 1, outcome: in.Rubrics[k]})
		}
		if len(crits) == 0 {
			return Outcome{}, &agenteval.MissingFieldError{Grader: "rubrics", Field: "rubrics (or criteria in the metric's settings, or --criterion)"}
		}
		if scored {
			return gradeRanges(ctx, j, in, crits)
		}
		return gradeChecklist(ctx, j, in, crits)
	}, nil
}

// gradeChecklist decides every criterion pass or fail in one judge call.
// The score is the weighted share passed; a failed required criterion
// fails the rubric's verdict (AgentV's rule) without changing its score.
func gradeChecklist(ctx context.Context, j *judge.Judge, in *agenteval.GradeInput, crits []weightedCriterion) (Outcome, error) {
	transcript, output := judgedText(in)
	plain := make([]judge.Criterion, len(crits))
	for i, c := range crits {
		plain[i] = c.Criterion
	}
	// The test's criteria are context, as AgentV gives its rubric judge
	// them: the checks decided are the listed criteria alone.
	ds, usage, err := j.Decide(ctx, "rubric", map[string]any{"Transcript": transcript, "Output": output, "Reference": in.Reference, "TestCriteria": testCriteria(in, crits)}, plain)
	o := Outcome{Usage: &usage}
	if err != nil {
		return o, err
	}
	var sum, total float64
	var failedRequired []string
	passed := 0
	for i, d := range ds {
		c := crits[i]
		o.Assertions = append(o.Assertions, agenteval.Assertion{Text: c.ID + ": " + c.outcome, Passed: d.Passed, Evidence: d.Evidence()})
		total += c.weight
		if d.Passed {
			sum += c.weight
			passed++
		} else if c.required {
			failedRequired = append(failedRequired, c.ID)
		}
	}
	o.Score = 1
	if total > 0 {
		o.Score = sum / total
	}
	recordVotes(&o, ds)
	o.Reason = fmt.Sprintf("%d of %d criteria met", passed, len(ds))
	if len(failedRequired) > 0 {
		o.Fail = true
		o.Reason += "; required criteria failed: " + strings.Join(failedRequired, ", ")
	}
	return o, nil
}

// gradeRanges scores every criterion from 0 to 10 in one judge call, as
// AgentV's score-range rubrics do: the score is the weighted mean of the
// scores over 10; a criterion below its min_score (or below 10 when
// required without one) fails the rubric's verdict.
func gradeRanges(ctx context.Context, j *judge.Judge, in *agenteval.GradeInput, crits []weightedCriterion) (Outcome, error) {
	transcript, output := judgedText(in)
	keyed := make([]judge.KeyedCriterion, len(crits))
	var fields []judge.Field
	for i, c := range crits {
		key := fmt.Sprintf("c%d", i+1)
		keyed[i] = judge.KeyedCriterion{Key: key, Text: c.Text}
		fields = append(fields, judge.Field{Key: key, Value: judge.ObjectSchema(
			judge.Field{Key: "reason", Value: judge.String("why this score, pointing to the evidence")},
			judge.Field{Key: "score", Value: map[string]any{"type": "integer", "minimum": 0, "maximum": 10, "description": "the score from 0 to 10"}},
		)})
	}
	p, err := judge.Render("rubric_ranges", map[string]any{"Transcript": transcript, "Output": output, "Reference": in.Reference, "Criteria": keyed, "TestCriteria": testCriteria(in, crits)})
	if err != nil {
		return Outcome{}, err
	}
	v, usage, err := j.Ask(ctx, p, "rubric_scores", judge.ObjectSchema(fields...))
	o := Outcome{Usage: &usage}
	if err != nil {
		return o, err
	}
	var sum, total float64
	raw := map[string]any{}
	var gated []string
	for i, c := range crits {
		entry, _ := v[keyed[i].Key].(map[string]any)
		f, _ := number(entry["score"])
		score := min(10, max(0, math.Round(f)))
		reason, _ := entry["reason"].(string)
		raw[c.ID] = score
		total += c.weight
		sum += c.weight * score / 10
		band := ""
		for _, r := range c.ranges {
			if int(score) >= r.Min && int(score) <= r.Max {
				band = r.Outcome
			}
		}
		floor := c.minScore
		if floor == nil && c.required {
			one := 1.0
			floor = &one
		}
		below := floor != nil && score/10 < *floor-1e-9
		if below {
			gated = append(gated, c.ID)
		}
		label := c.outcome
		if label == "" {
			label = c.ID
		}
		o.Assertions = append(o.Assertions, agenteval.Assertion{
			Text:   fmt.Sprintf("%s: %s: %s/10 (%s)", c.ID, label, fmtNum(score), band),
			Passed: score >= 7 && !below, Evidence: reason,
		})
	}
	if total > 0 {
		o.Score = sum / total
	}
	o.Details = map[string]any{"raw_scores": raw, "normalization": "score / 10"}
	o.Reason = fmt.Sprintf("weighted mean of %d criterion scores out of 10", len(crits))
	if len(gated) > 0 {
		o.Fail = true
		o.Reason += "; below their min_score: " + strings.Join(gated, ", ")
	}
	return o, nil
}

// testCriteria is the test's criteria to show a rubric judge as context,
// or "" when one of the criteria it decides already is that text.
func testCriteria(in *agenteval.GradeInput, crits []weightedCriterion) string {
	for _, c := range crits {
		if c.Text == in.Criteria {
			return ""
		}
	}
	return in.Criteria
}
