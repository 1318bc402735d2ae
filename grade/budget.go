package grade

import (
	"context"
	"fmt"

	"github.com/agenteval/agenteval"
)

// Budget graders check what a run cost: time, tokens, money, turns and tool
// calls.

// Budget is the options of latency, token_usage, cost and max_turns.
type Budget struct {
	Max *float64 `json:"max" doc:"the most allowed"`
}

// budget defines a grader that passes when measure(in) <= max. alias is
// AgentV's name for max.
func budget(name, doc, unit string, aliases []string, measure func(*agenteval.GradeInput) (float64, bool)) *Definition {
	d := Definition{Name: name, Doc: doc, Params: []Param{{Name: "max", Aliases: aliases, Doc: "the most " + unit + " allowed"}}}
	return deterministic(d, func(o Budget, _ Env) (Func, error) {
		if o.Max == nil || *o.Max < 0 {
			return nil, fmt.Errorf("needs max: the most %s allowed", unit)
		}
		limit := *o.Max
		return func(_ context.Context, in *agenteval.GradeInput) (Outcome, error) {
			got, ok := measure(in)
			switch {
			case !ok && in.Stats == nil:
				return Outcome{}, fmt.Errorf("%s cannot be measured on a recorded sample: it needs a live run", name)
			case !ok:
				// A live run that cannot show it stays within budget fails
				// the check, saying why; it is not an execution error.
				why := fmt.Sprintf("no %s was recorded", unit)
				if name == "cost" {
					why = "the cost is unknown: the model has no price (see --prices)"
					if !in.Stats.Usage.TokensKnown() {
						why = "the cost is unknown: the agent reported neither cost nor token usage (a cli target writes cost_usd in its output file; a command or http agent returns usage: {input_tokens, output_tokens}, priced with --prices)"
					}
				}
				return binary(fmt.Sprintf("%s at most %s %s", name, fmtNum(limit), unit), false, why), nil
			}
			text := fmt.Sprintf("%s at most %s %s", name, fmtNum(limit), unit)
			return binary(text, got <= limit, fmt.Sprintf("%s %s", fmtNum(got), unit)), nil
		}, nil
	})
}

// The budget graders.
var (
	Latency = budget("latency", "the agent answered within max milliseconds (per turn, or for the whole conversation)", "ms", []string{"threshold_ms", "max_ms"},
		func(in *agenteval.GradeInput) (float64, bool) {
			if in.Stats == nil {
				return 0, false
			}
			return in.Stats.LatencyMS, true
		})
	TokenUsage = deterministic(Definition{Name: "token_usage", Doc: "the agent used at most max tokens (input + output + cached), max_input input tokens, max_output output tokens"}, newTokenUsage)
	Cost       = budget("cost", "the agent's calls cost at most max US dollars", "USD", []string{"max_cost", "budget", "max_usd"},
		func(in *agenteval.GradeInput) (float64, bool) {
			if in.Stats == nil || in.Stats.Usage.CostUSD == nil {
				return 0, false
			}
			return *in.Stats.Usage.CostUSD, true
		})
	MaxTurns = budget("max_turns", "the conversation took at most max turns", "turns", []string{"turns"},
		func(in *agenteval.GradeInput) (float64, bool) {
			if in.Stats == nil {
				return float64(len(in.Transcript.Turns())), true
			}
			return float64(in.Stats.Turns), true
		})
	ToolCallCount = deterministic(Definition{Name: "tool_call_count", Doc: "the agent made at most max tool calls (and at least min)"}, newToolCallCount)
)

// TokenUsageOptions is the options of token_usage.
type TokenUsageOptions struct {
	Max       *float64 `json:"max" alias:"max_tokens,max_total" doc:"the most tokens: input, output and cached together"`
	MaxInput  *float64 `json:"max_input" doc:"the most input tokens"`
	MaxOutput *float64 `json:"max_output" doc:"the most output tokens"`
}

func newTokenUsage(o TokenUsageOptions, _ Env) (Func, error) {
	if o.Max == nil && o.MaxInput == nil && o.MaxOutput == nil {
		return nil, fmt.Errorf("needs max (or max_input, max_output): the most tokens allowed")
	}
	return func(_ context.Context, in *agenteval.GradeInput) (Outcome, error) {
		if in.Stats == nil {
			return Outcome{}, fmt.Errorf("token_usage cannot be measured here: the run recorded no tokens (a recorded sample)")
		}
		u := in.Stats.Usage
		if !u.TokensKnown() {
			// As in AgentV: an agent that reports no usage fails the
			// check, rather than passing it with 0 tokens.
			return binary("token usage recorded", false, "the agent reported no token usage (a cli target writes token_usage {input, output} in its output file; a command or http agent returns usage: {input_tokens, output_tokens})"), nil
		}
		var out Outcome
		// The total counts cached tokens, as AgentV's does: an agent that
		// reports them apart from its input tokens spent them too.
		for _, c := range []struct {
			what  string
			limit *float64
			got   int64
		}{{"tokens", o.Max, u.InputTokens + u.OutputTokens + u.CachedTokens}, {"input tokens", o.MaxInput, u.InputTokens}, {"output tokens", o.MaxOutput, u.OutputTokens}} {
			if c.limit == nil {
				continue
			}
			out.Assertions = append(out.Assertions, agenteval.Assertion{Text: fmt.Sprintf("at most %s %s", fmtNum(*c.limit), c.what),
				Passed: float64(c.got) <= *c.limit, Evidence: fmt.Sprintf("%d %s", c.got, c.what)})
		}
		met := 0
		for _, a := range out.Assertions {
			if a.Passed {
				met++
			}
		}
		out.Score = map[bool]float64{true: 1, false: 0}[met == len(out.Assertions)]
		out.Reason = fmt.Sprintf("%d of %d token limits met", met, len(out.Assertions))
		return out, nil
	}, nil
}

// ToolCallCountOptions is the options of tool_call_count.
type ToolCallCountOptions struct {
	Max  *int   `json:"max" doc:"the most calls allowed"`
	Min  *int   `json:"min" doc:"the fewest calls allowed"`
	Tool string `json:"tool" doc:"count only the calls of this tool"`
}

func newToolCallCount(o ToolCallCountOptions, _ Env) (Func, error) {
	switch {
	case o.Max == nil && o.Min == nil:
		return nil, fmt.Errorf("needs max, min or both")
	case (o.Max != nil && *o.Max < 0) || (o.Min != nil && *o.Min < 0):
		return nil, fmt.Errorf("min and max must not be negative")
	case o.Max != nil && o.Min != nil && *o.Min > *o.Max:
		return nil, fmt.Errorf("min %d is more than max %d", *o.Min, *o.Max)
	}
	return func(_ context.Context, in *agenteval.GradeInput) (Outcome, error) {
		n := 0
		for _, c := range in.Output.ToolCalls() {
			if o.Tool == "" || c.Name == o.Tool {
				n++
			}
		}
		what := "tool calls"
		if o.Tool != "" {
			what = o.Tool + " calls"
		}
		ok := (o.Max == nil || n <= *o.Max) && (o.Min == nil || n >= *o.Min)
		text := what
		if o.Min != nil {
			text += fmt.Sprintf(" at least %d", *o.Min)
		}
		if o.Max != nil {
			text += fmt.Sprintf(" at most %d", *o.Max)
		}
		return binary(text, ok, fmt.Sprintf("%d %s", n, what)), nil
	}, nil
}
