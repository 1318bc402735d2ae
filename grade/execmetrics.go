package grade

import (
	"context"
	"fmt"

	"github.com/agenteval/agenteval"
)

// ExecutionMetrics checks several budgets at once (AgentV's
// execution-metrics): each limit given is one check, and the score is the
// share met. A limit whose measure the run did not record fails.
var ExecutionMetrics = deterministic(Definition{Name: "execution_metrics",
	Doc: "several budgets at once: max_tool_calls, max_llm_calls, max_tokens, max_cost_usd, max_duration_ms, target_exploration_ratio (± exploration_tolerance); score = share met"}, newExecutionMetrics)

// ExecutionMetricsOptions is the options of execution_metrics.
type ExecutionMetricsOptions struct {
	MaxToolCalls           *float64 `json:"max_tool_calls" doc:"the most tool calls"`
	MaxLLMCalls            *float64 `json:"max_llm_calls" doc:"the most assistant messages (model calls)"`
	MaxTokens              *float64 `json:"max_tokens" doc:"the most tokens, input and output"`
	MaxCostUSD             *float64 `json:"max_cost_usd" doc:"the most US dollars"`
	MaxDurationMS          *float64 `json:"max_duration_ms" doc:"the most milliseconds the agent took"`
	TargetExplorationRatio *float64 `json:"target_exploration_ratio" doc:"the share of calls to exploring tools aimed at: read, grep, glob, search, list, Read, Grep, Glob, WebSearch, WebFetch (AgentV's names, exactly)"`
	ExplorationTolerance   *float64 `json:"exploration_tolerance" doc:"how far from target_exploration_ratio is allowed (default 0.2)"`
}

// exploring names the tools whose calls count as exploration: AgentV's
// list, matched exactly, so that a ratio means the same in both.
var exploring = map[string]bool{"read": true, "grep": true, "glob": true, "search": true, "list": true,
	"Read": true, "Grep": true, "Glob": true, "WebSearch": true, "WebFetch": true}

func newExecutionMetrics(o ExecutionMetricsOptions, _ Env) (Func, error) {
	if o.MaxToolCalls == nil && o.MaxLLMCalls == nil && o.MaxTokens == nil && o.MaxCostUSD == nil && o.MaxDurationMS == nil && o.TargetExplorationRatio == nil {
		return nil, fmt.Errorf("needs at least one limit: max_tool_calls, max_llm_calls, max_tokens, max_cost_usd, max_duration_ms or target_exploration_ratio")
	}
	for _, v := range []*float64{o.MaxToolCalls, o.MaxLLMCalls, o.MaxTokens, o.MaxCostUSD, o.MaxDurationMS, o.TargetExplorationRatio, o.ExplorationTolerance} {
		if v != nil && *v < 0 {
			return nil, fmt.Errorf("limits must not be negative")
		}
	}
	return func(_ context.Context, in *agenteval.GradeInput) (Outcome, error) {
		var out Outcome
		check := func(text string, limit *float64, got float64, known bool, unit string) {
			if limit == nil {
				return
			}
			a := agenteval.Assertion{Text: fmt.Sprintf("%s at most %s%s", text, fmtNum(*limit), unit)}
			if !known {
				a.Evidence = "not recorded for this run"
			} else {
				a.Passed, a.Evidence = got <= *limit, fmt.Sprintf("%s%s", fmtNum(got), unit)
			}
			out.Assertions = append(out.Assertions, a)
		}
		calls := in.Output.ToolCalls()
		llm := 0
		for _, m := range in.Output {
			if m.Role == agenteval.RoleAssistant {
				llm++
			}
		}
		check("tool calls", o.MaxToolCalls, float64(len(calls)), true, "")
		check("model calls", o.MaxLLMCalls, float64(llm), true, "")
		st := in.Stats
		// Input and output only, as AgentV counts them here (token_usage
		// adds the cached ones).
		check("tokens", o.MaxTokens, tokensOf(st), st != nil && st.Usage.TokensKnown(), "")
		cost, costKnown := 0.0, st != nil && st.Usage.CostUSD != nil
		if costKnown {
			cost = *st.Usage.CostUSD
		}
		check("cost", o.MaxCostUSD, cost, costKnown, " USD")
		dur := 0.0
		if st != nil {
			dur = st.LatencyMS
		}
		check("duration", o.MaxDurationMS, dur, st != nil, " ms")
		if o.TargetExplorationRatio != nil {
			tol := 0.2
			if o.ExplorationTolerance != nil {
				tol = *o.ExplorationTolerance
			}
			reads := 0
			for _, c := range calls {
				if exploring[c.Name] {
					reads++
				}
			}
			a := agenteval.Assertion{Text: fmt.Sprintf("exploration ratio within %s of %s", fmtNum(tol), fmtNum(*o.TargetExplorationRatio))}
			if len(calls) == 0 {
				a.Evidence = "no tool calls"
			} else {
				r := float64(reads) / float64(len(calls))
				a.Passed = r >= *o.TargetExplorationRatio-tol-1e-12 && r <= *o.TargetExplorationRatio+tol+1e-12
				a.Evidence = fmt.Sprintf("%d of %d calls explore (%s)", reads, len(calls), fmtNum(r))
			}
			out.Assertions = append(out.Assertions, a)
		}
		met := 0
		for _, a := range out.Assertions {
			if a.Passed {
				met++
			}
		}
		out.Score = fraction(met, len(out.Assertions))
		out.Reason = fmt.Sprintf("%d of %d limits met", met, len(out.Assertions))
		return out, nil
	}, nil
}

func tokensOf(st *agenteval.Stats) float64 {
	if st == nil {
		return 0
	}
	return float64(st.Usage.InputTokens + st.Usage.OutputTokens)
}
