package session

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/provider"
	"github.com/agenteval/agenteval/suite"
	"github.com/agenteval/agenteval/target"
)

// targetRun is one run of a suite: against one target, over the tests
// that run against it.
type targetRun struct {
	// target is the choice given to target.Select; "" is the suite's
	// default.
	target string
	// only, when set, are the tests of this run, by id.
	only map[string]bool
	// keep, when set, keeps the tests of this shard (--shard), by id.
	keep func(id string) bool
	// pick is the caller's own choice of tests (Options.Select).
	pick func(*agenteval.Test) bool
	// spec is the target chosen, once; err says why it cannot be.
	spec suite.TargetSpec
	err  error
}

func (tr targetRun) selects(t *agenteval.Test) bool {
	return tr.selectsID(t.ID) && (tr.pick == nil || tr.pick(t))
}

// selectsID is selects without the caller's pick, which needs the test
// itself: all there is for a streamed suite, which has no pick.
func (tr targetRun) selectsID(id string) bool {
	return (tr.only == nil || tr.only[id]) && (tr.keep == nil || tr.keep(id))
}

// selectsAt says whether the run selects test i of the suite sp plans.
func (tr targetRun) selectsAt(sp *SuitePlan, i int, ti suite.TestInfo) bool {
	if !tr.selectsID(ti.ID) {
		return false
	}
	return tr.pick == nil || sp.Suite.Streamed() || tr.pick(&sp.Suite.Tests[i])
}

// targetRuns says which targets a suite runs against. --target, given
// once or more, runs every test against each. Otherwise a test runs
// against its own targets (execution.target on the test, its providers),
// else the suite's matrix (execution.targets, providers), else the suite's
// default target: one run per target named, in the order first named.
//
// all are the run's suites: a target that s does not define, but exactly
// one other eval file of the run does, is that one (see sharedTarget).
func targetRuns(targets []string, s *suite.Suite, all []*suite.Suite, logf func(string, ...any)) []targetRun {
	out := choices(targets, s)
	for i := range out {
		out[i].spec, out[i].err = selectTarget(s, out[i].target, all, logf)
	}
	return out
}

// selectTarget is target.Select, the one place a choice becomes a target,
// with the run's other eval files as a last place to look.
func selectTarget(s *suite.Suite, choice string, all []*suite.Suite, logf func(string, ...any)) (suite.TargetSpec, error) {
	spec, err := target.Select(s, choice)
	if choice == "" {
		choice = s.DefaultTarget
	}
	if err == nil || choice == "" || strings.Contains(choice, ":") {
		return spec, err
	}
	return sharedTarget(s, choice, all, err, logf)
}

// sharedTarget finds a target named in s but defined only in other eval
// files of the run. One definition (or several that are the same) is
// used, and the run says where it came from; definitions that differ are
// an error, as is none: targets shared by several files belong in
// agenteval.yaml, where every file of the project finds them.
func sharedTarget(s *suite.Suite, choice string, all []*suite.Suite, notFound error, logf func(string, ...any)) (suite.TargetSpec, error) {
	var found []suite.TargetSpec
	var files []string
	for _, o := range all {
		if o == s {
			continue
		}
		for _, t := range o.Targets {
			if t.Name == choice {
				found = append(found, t)
				files = append(files, o.File)
			}
		}
	}
	if len(found) == 0 {
		return suite.TargetSpec{}, fmt.Errorf("%w; to share a target between eval files, define it under targets: in agenteval.yaml", notFound)
	}
	for _, t := range found[1:] {
		if !sameTarget(t, found[0]) {
			return suite.TargetSpec{}, fmt.Errorf("target %q is not defined in %s, and %s define it differently; define it once under targets: in agenteval.yaml", choice, s.File, strings.Join(files, " and "))
		}
	}
	if logf != nil {
		logf("%s: target %q is not defined here; using its definition in %s (shared targets belong under targets: in agenteval.yaml)\n", s.File, choice, files[0])
	}
	return found[0], nil
}

// sameTarget says whether two definitions run the same target; their
// positions do not matter.
func sameTarget(a, b suite.TargetSpec) bool {
	a.Pos, b.Pos = agenteval.Pos{}, agenteval.Pos{}
	return reflect.DeepEqual(a, b)
}

func choices(targets []string, s *suite.Suite) []targetRun {
	if len(targets) > 0 {
		out := make([]targetRun, len(targets))
		for i, t := range targets {
			out[i] = targetRun{target: t}
		}
		return out
	}
	var order []string
	tests := map[string]map[string]bool{}
	for i := range s.NumTests() {
		t := s.Info(i)
		names := t.Targets
		if len(names) == 0 {
			names = s.Matrix
		}
		if len(names) == 0 {
			names = []string{""}
		}
		for _, n := range names {
			if tests[n] == nil {
				tests[n] = map[string]bool{}
				order = append(order, n)
			}
			tests[n][t.ID] = true
		}
	}
	if len(order) == 0 {
		return []targetRun{{}}
	}
	if len(order) == 1 {
		return []targetRun{{target: order[0]}}
	}
	out := make([]targetRun, len(order))
	for i, n := range order {
		out[i] = targetRun{target: n, only: tests[n]}
	}
	return out
}

// targetErrorResult is the result of a test whose target could not be
// opened.
func targetErrorResult(t *agenteval.Test, target string, err error) *agenteval.Result {
	if t.Skip != "" {
		// It would not have run on any target.
		return &agenteval.Result{TestID: t.ID, Suite: t.Suite, Target: target, ConversationID: t.ConversationID, Scores: []agenteval.Score{},
			Verdict: agenteval.VerdictSkip, ExecutionStatus: agenteval.StatusOK, Error: "skipped: " + t.Skip}
	}
	return &agenteval.Result{TestID: t.ID, Suite: t.Suite, Target: target, ConversationID: t.ConversationID, Scores: []agenteval.Score{},
		Verdict: agenteval.VerdictError, ExecutionStatus: agenteval.StatusExecutionError, Error: provider.Redact(err.Error())}
}

// HasTag says whether a suite has one of the tags (any, when none is
// asked for).
func HasTag(s *suite.Suite, tags []string) bool {
	if len(tags) == 0 {
		return true
	}
	for _, t := range tags {
		if slices.ContainsFunc(s.Tags, func(x string) bool { return strings.EqualFold(x, t) }) {
			return true
		}
	}
	return false
}
