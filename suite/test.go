package suite

import (
	"fmt"
	"slices"
	"strings"

	"github.com/agenteval/agenteval"
	"go.yaml.in/yaml/v4"
)

// reduction reads one of the reductions: mean, min, max, pass_at_k.
func (d *decoder) reduction(n *yaml.Node, what string) (agenteval.Reduction, bool) {
	v := agenteval.Reduction(d.str(n, what))
	if slices.Contains([]agenteval.Reduction{agenteval.ReduceMean, agenteval.ReduceMin, agenteval.ReduceMax, agenteval.ReducePassAtK}, v) {
		return v, true
	}
	if v == agenteval.ReduceConfidenceInterval && strings.HasPrefix(what, "trials") {
		return v, true
	}
	d.fail(n, "%s %q is not one of mean, min, max, pass_at_k", what, v)
	return "", false
}

func (d *decoder) trials(n *yaml.Node, t *agenteval.Test) {
	rn := resolve(n)
	if rn != nil && rn.Kind == yaml.ScalarNode {
		if v, ok := d.integer(rn, "trials"); ok {
			checkTrials(d, rn, "trials", v)
			t.Trials = v
		}
		return
	}
	for _, f := range d.fields(n, "trials", []string{"count", "strategy", "cost_limit_usd", "run_all"}) {
		switch f.key {
		case "count":
			if v, ok := d.integer(f.value, "trials.count"); ok {
				checkTrials(d, f.value, "trials.count", v)
				t.Trials = v
			}
		case "strategy":
			if r, ok := d.reduction(f.value, "trials.strategy"); ok {
				t.TrialStrategy = r
			}
		case "cost_limit_usd":
			if v, ok := d.number(f.value, "trials.cost_limit_usd"); ok {
				if v <= 0 {
					d.fail(f.value, "trials.cost_limit_usd must be more than 0")
				}
				t.TrialCostLimit = v
			}
		case "run_all":
			// Ours: pass_at_k stops at the first passing trial, as in
			// AgentV, unless every trial must run for pass@k and pass^k.
			if v, ok := d.boolean(f.value, "trials.run_all"); ok {
				t.TrialsRunAll = v
			}
		}
	}
	if t.Trials == 0 {
		d.fail(n, "trials needs count")
	}
}

// MaxTrials bounds trials: more is almost always a typo, and each trial
// is a full run of the conversation.
const MaxTrials = 1000

func checkTrials(d *decoder, n *yaml.Node, what string, v int) {
	if v < 1 || v > MaxTrials {
		d.fail(n, "%s must be between 1 and %d, not %d", what, MaxTrials, v)
	}
}

func (d *decoder) turns(n *yaml.Node, c *testCtx) []agenteval.Turn {
	rn := resolve(n)
	if rn == nil || isNull(rn) {
		return nil
	}
	if rn.Kind != yaml.SequenceNode {
		d.fail(n, "turns must be a list of {input: ...}, not %s", kindName(n))
		return nil
	}
	var out []agenteval.Turn
	for i, item := range rn.Content {
		tr := agenteval.Turn{Pos: d.pos(item)}
		if it := resolve(item); it != nil && it.Kind == yaml.ScalarNode {
			// A bare string is the turn's user message.
			tr.Input = agenteval.Conversation{{Role: agenteval.RoleUser, Content: d.str(it, "turn")}}
		} else {
			for _, f := range d.fields(item, fmt.Sprintf("turn %d", i+1), []string{"input", "expected_output", "assertions", "assert"}) {
				switch f.key {
				case "input":
					tr.Input = d.messages(c.vars.apply(f.value), "turn input")
				case "expected_output":
					tr.ExpectedOutput = d.text(c.vars.apply(f.value), "expected_output")
				case "assertions", "assert":
					tr.Assertions = append(tr.Assertions, d.assertions(c.asserts(f.value), c)...)
				}
			}
		}
		if strings.TrimSpace(tr.Input.Pretty()) == "" || !hasContent(tr.Input) {
			d.fail(item, "turn %d has no input; every turn needs the user's message as input", i+1)
		}
		out = append(out, tr)
	}
	return out
}

func hasContent(c agenteval.Conversation) bool {
	for _, m := range c {
		if strings.TrimSpace(m.Content) != "" {
			return true
		}
	}
	return false
}
