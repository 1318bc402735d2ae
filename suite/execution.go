package suite

import (
	"github.com/agenteval/agenteval"
	"go.yaml.in/yaml/v4"
)

// AgentV's execution block: which targets run, how many tests at once,
// trials and the pass mark. Keys that tune AgentV's own machinery
// (workspaces, caching, tracing) are warned about and ignored.

var suiteExecutionKeys = []string{
	"threshold", "target", "targets", "workers", "trials",
	"fail_on_error", "cache", "cache_path", "budget_usd", "verbose", "keep_workspaces",
	"otel_file", "export_otel", "skip_defaults",
	// AgentV's camelCase spellings: known, so that they are not taken
	// for misspellings of the snake_case ones.
	"failOnError", "budgetUsd",
}

func (d *decoder) suiteExecution(n *yaml.Node, s *Suite, sc *suiteCtx) {
	for _, e := range d.fields(n, "execution", suiteExecutionKeys) {
		switch e.key {
		case "threshold":
			s.Threshold = d.threshold(e.value)
		case "target":
			s.DefaultTarget = d.str(e.value, "execution.target")
		case "targets":
			s.Matrix = append(s.Matrix, d.targetRefs(e.value, s)...)
		case "workers":
			if v, ok := d.integer(e.value, "execution.workers"); ok {
				if v < 1 {
					d.fail(e.value, "execution.workers must be at least 1")
				}
				s.Workers = v
			}
		case "trials":
			var t agenteval.Test
			d.trials(e.value, &t)
			sc.trials = t.Trials
			sc.trialsRunAll, sc.trialCost = t.TrialsRunAll, t.TrialCostLimit
			// AgentV's execution.trials keeps the best trial unless it
			// says otherwise.
			sc.strategy = t.TrialStrategy
			if sc.strategy == "" {
				sc.strategy = agenteval.ReducePassAtK
			}
		case "fail_on_error", "failOnError":
			if v, ok := d.boolean(e.value, "execution."+e.key); ok && v {
				d.warn(e.keyN, "execution.%s is not supported: agenteval runs every test, and exits 3 when any ended in execution_error", e.key)
			}
		case "budget_usd", "budgetUsd":
			d.warn(e.keyN, "execution.%s is not enforced by agenteval: every test runs; the summary shows what the run cost", e.key)
		case "cache", "cache_path":
			d.warn(e.keyN, "execution.%s is not used: agenteval caches judge calls (never the agent's) under .agenteval/cache; --no-cache turns that off", e.key)
		case "skip_defaults":
			d.warn(e.keyN, "skip_defaults belongs on a test's execution, not the suite's; it is ignored here")
		default:
			d.warn(e.keyN, "execution.%s configures AgentV's own runner and is ignored", e.key)
		}
	}
}

// targetRefs reads execution.targets: names, or {name, use_target, hooks}.
// A use_target makes name an alias of another target.
func (d *decoder) targetRefs(n *yaml.Node, s *Suite) []string {
	rn := resolve(n)
	if rn == nil || isNull(rn) {
		return nil
	}
	if rn.Kind != yaml.SequenceNode {
		return []string{d.str(rn, "execution.targets")}
	}
	var out []string
	for _, item := range rn.Content {
		if it := resolve(item); it != nil && it.Kind == yaml.ScalarNode {
			out = append(out, d.str(it, "execution.targets"))
			continue
		}
		var name, use string
		for _, f := range d.fields(item, "an execution target", []string{"name", "use_target", "hooks"}) {
			switch f.key {
			case "name":
				name = d.str(f.value, "name")
			case "use_target":
				use = d.str(f.value, "use_target")
			case "hooks":
				d.warn(f.keyN, "target hooks set up a coding agent's workspace; agenteval does not run them")
			}
		}
		if name == "" {
			d.fail(item, "an execution target needs a name")
			continue
		}
		if use != "" {
			s.Targets = append(s.Targets, TargetSpec{Name: name, alias: use, Pos: d.pos(item)})
		}
		out = append(out, name)
	}
	return out
}

// executionOpts are a test's execution overrides.
type executionOpts struct {
	targets      []string
	skipDefaults bool
	threshold    *float64
}

func (d *decoder) testExecution(n *yaml.Node) *executionOpts {
	o := &executionOpts{}
	for _, e := range d.fields(n, "a test's execution", []string{"target", "targets", "skip_defaults", "threshold", "evaluators", "assertions"}) {
		switch e.key {
		case "target":
			if t := d.str(e.value, "execution.target"); t != "" {
				o.targets = append(o.targets, t)
			}
		case "targets":
			o.targets = append(o.targets, d.strList(e.value, "execution.targets")...)
		case "skip_defaults":
			o.skipDefaults, _ = d.boolean(e.value, "execution.skip_defaults")
		case "threshold":
			o.threshold = d.threshold(e.value)
		default:
			d.warn(e.keyN, "execution.%s on a test is AgentV's old place for assertions; put them in the test's assertions", e.key)
		}
	}
	return o
}

func (d *decoder) threshold(n *yaml.Node) *float64 {
	v, ok := d.number(n, "threshold")
	if !ok {
		return nil
	}
	if !(v >= 0 && v <= 1) {
		d.fail(n, "threshold %v is outside [0, 1]", v)
		return nil
	}
	return &v
}
