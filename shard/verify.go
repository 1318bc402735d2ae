package shard

import (
	"fmt"
	"math"
	"path"
	"slices"
	"strings"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/results"
)

// Suite is one of a run's suite files as merge found it: at the path the
// headers name, with the hash they recorded, so its tests are the ones the
// shards ran.
type Suite struct {
	// Path is the file as the headers name it.
	Path string
	// Tests are its tests, as the runner loads them (with the project
	// file applied).
	Tests []agenteval.Test
	// Threshold is the suite's pass mark (its own, else the project
	// file's); nil means agenteval.DefaultThreshold.
	Threshold *float64
}

// Options say what Check knows besides the shards' files.
type Options struct {
	// Suite gives one of the run's suite files, as a header lists it,
	// when it is here as the shards ran it (the same content hash), and
	// nil otherwise. With it Check knows each test's pass mark and how
	// its score is made, and which tests the run was to hold.
	Suite func(results.SuiteFile) *Suite
	// Filter is the --filter the shards ran with: tests whose id it does
	// not match were not to run.
	Filter string
}

// verifier holds a merge's results against what decides them: each
// verdict against the one its scores give, and the run against the tests
// of its suites. A shard file is only a file: edited, or cut and
// relabelled, it would otherwise pass as the run.
type verifier struct {
	header *results.Header
	tests  map[string]*planned // suite name + "\x00" + test id
	// suites are the files found, with their tests in file order.
	suites []*Suite
	filter string
	// unchecked are the suites' paths that were not found as the shards
	// ran them.
	unchecked []string
	seen      map[string]bool // suite name + "\x00" + test id, of every result
}

// planned is a test of a suite that is here.
type planned struct {
	test      *agenteval.Test
	threshold float64
	path      string
}

func newVerifier(h *results.Header, opt Options) (*verifier, error) {
	v := &verifier{header: h, tests: map[string]*planned{}, filter: opt.Filter, seen: map[string]bool{}}
	if opt.Filter != "" {
		if _, err := path.Match(opt.Filter, ""); err != nil {
			return nil, fmt.Errorf("--filter %q: %v", opt.Filter, err)
		}
	}
	names := map[string]int{}
	for _, sf := range h.Suites {
		var s *Suite
		if opt.Suite != nil && sf.SHA256 != "" {
			s = opt.Suite(sf)
		}
		if s == nil {
			v.unchecked = append(v.unchecked, sf.Path)
			continue
		}
		v.suites = append(v.suites, s)
		for i := range s.Tests {
			t := &s.Tests[i]
			th := agenteval.DefaultThreshold
			switch {
			case h.Threshold != nil:
				th = *h.Threshold
			case t.Threshold != nil:
				th = *t.Threshold
			case s.Threshold != nil:
				th = *s.Threshold
			}
			k := t.Suite + "\x00" + t.ID
			names[k]++
			v.tests[k] = &planned{test: t, threshold: th, path: s.Path}
		}
	}
	// Two suite files of one name hold tests that results cannot tell
	// apart: neither is taken for the other's.
	for k, n := range names {
		if n > 1 {
			delete(v.tests, k)
		}
	}
	return v, nil
}

// check checks one result of file; it returns a problem, or "".
func (v *verifier) check(file string, r *row) string {
	k := r.Suite + "\x00" + r.TestID
	v.seen[k] = true
	m := mark{}
	if p := v.tests[k]; p != nil {
		m = mark{threshold: p.threshold, known: true, test: p.test}
	} else if v.header.Threshold != nil {
		m = mark{threshold: *v.header.Threshold, known: true}
	}
	for _, tr := range r.Trials {
		if msg := judge(tr.Verdict, tr.ExecutionStatus, unitVerdict(tr.Score, tr.Scores, tr.Error, m).verdict); msg != "" {
			return fmt.Sprintf("%s: %s, trial %d, %s", file, r.key, tr.Trial, msg)
		}
	}
	if msg := judge(r.Verdict, r.ExecutionStatus, resultVerdict(r, m)); msg != "" {
		return fmt.Sprintf("%s: %s %s", file, r.key, msg)
	}
	return ""
}

// missing lists the tests of the suites here that no shard holds a
// result of, in file order.
func (v *verifier) missing() []string {
	var out []string
	for _, s := range v.suites {
		for i := range s.Tests {
			t := &s.Tests[i]
			k := t.Suite + "\x00" + t.ID
			if v.tests[k] == nil || v.seen[k] {
				continue
			}
			if v.filter != "" {
				if ok, _ := path.Match(v.filter, t.ID); !ok {
					continue
				}
			}
			out = append(out, fmt.Sprintf("%s/%s (%s)", t.Suite, t.ID, s.Path))
		}
	}
	return out
}

// mark is what decides a result's verdict besides its scores.
type mark struct {
	threshold float64
	// known says the pass mark is known: the suite is here, or the run
	// set --threshold.
	known bool
	// test is the test as its suite file has it, when the file is here.
	test *agenteval.Test
}

// verdict is what a result's scores give: the verdicts it may have, and
// why, for messages.
type verdict struct {
	allowed []agenteval.Verdict
	why     string
}

func one(v agenteval.Verdict, why string) verdict {
	return verdict{allowed: []agenteval.Verdict{v}, why: why}
}

// passOrFail is the verdict of a score against the pass mark, as the
// runner decides it (agenteval.VerdictFor).
func passOrFail(score float64, m mark) verdict {
	if !m.known {
		return verdict{allowed: []agenteval.Verdict{agenteval.VerdictPass, agenteval.VerdictFail}}
	}
	return one(agenteval.VerdictFor(score, m.threshold), fmt.Sprintf("score %s against the pass mark %s", num(score), num(m.threshold)))
}

// resultVerdict is the verdict of a test's result, as run's
// combineTrials, finishTrial and the results of tests that did not run
// decide it.
func resultVerdict(r *row, m mark) verdict {
	if len(r.Trials) > 0 {
		var scores []float64
		for _, tr := range r.Trials {
			if tr.ExecutionStatus != agenteval.StatusExecutionError {
				scores = append(scores, unitVerdict(tr.Score, tr.Scores, tr.Error, m).score(tr.Score))
			}
		}
		if len(scores) == 0 {
			return one(agenteval.VerdictError, "every trial ended in execution_error")
		}
		score := r.Score
		if m.test != nil {
			score = m.test.TrialStrategy.Reduce(scores)
		}
		return passOrFail(score, m)
	}
	if len(r.Scores) == 0 && r.Error != "" {
		// Tests that did not run: skipped (Test.Skip, a dependency
		// that failed, a target that skips), or failed for a
		// dependency with on_dependency_failure: fail.
		switch {
		case strings.HasPrefix(r.Error, "skipped"):
			return one(agenteval.VerdictSkip, "it did not run")
		case strings.HasPrefix(r.Error, "failed because its dependency"):
			return one(agenteval.VerdictFail, "a dependency failed")
		}
	}
	return unitVerdict(r.Score, r.Scores, r.Error, m).verdict
}

// unitResult is a trial's verdict, and its score when it could be made
// again from the scores.
type unitResult struct {
	verdict
	made   float64
	remade bool
}

func (u unitResult) score(recorded float64) float64 {
	if u.remade {
		return u.made
	}
	return recorded
}

// unitVerdict is the verdict of one trial (a test's only one, or one of
// several), as run's finishTrial decides it: an error when the agent or
// a counted grader failed to run; else, for a single exchange, the graders
// combined (agenteval.Combine: the weighted mean, 0 when a required grader
// failed, against the pass mark), and for a conversation, its turns'
// scores reduced by the test's aggregation against the pass mark.
func unitVerdict(score float64, scores []agenteval.Score, errText string, m mark) unitResult {
	if errText != "" {
		return unitResult{verdict: one(agenteval.VerdictError, "it records an error")}
	}
	for _, s := range scores {
		// A score of weight 0 that failed to run is shown, never
		// counted, unless it is the agent's.
		if s.Verdict == agenteval.VerdictError && (s.Weight != 0 || s.Type == "agent") {
			return unitResult{verdict: one(agenteval.VerdictError, fmt.Sprintf("its score %s is an error", s.Name))}
		}
	}
	switch {
	case m.test != nil && m.test.Mode == agenteval.ModeConversation:
		var vals []float64
		for _, s := range scores {
			switch {
			case s.Verdict == agenteval.VerdictError:
			case s.Verdict == agenteval.VerdictSkip:
				if s.Weight != 0 { // a turn skipped counts as 0; an ungraded one not at all
					vals = append(vals, 0)
				}
			case s.Weight != 0:
				vals = append(vals, s.Score)
			}
		}
		made := m.test.Aggregation.Reduce(vals)
		return unitResult{verdict: passOrFail(made, m), made: made, remade: true}
	case m.test != nil:
		if len(scores) == 0 {
			return unitResult{verdict: one(agenteval.VerdictPass, "it has nothing to grade"), made: 1, remade: true}
		}
		made, v := agenteval.Combine(scores, m.threshold)
		why := fmt.Sprintf("score %s against the pass mark %s", num(made), num(m.threshold))
		if requiredFailed(scores) {
			why = "a required grader failed"
		}
		return unitResult{verdict: one(v, why), made: made, remade: true}
	}
	v := passOrFail(score, m)
	if requiredFailed(scores) && !slices.Contains(v.allowed, agenteval.VerdictFail) {
		// Without the suite, a single exchange cannot be told from a
		// conversation: a required grader that failed fails the one,
		// not the other.
		v.allowed = append(v.allowed, agenteval.VerdictFail)
	}
	return unitResult{verdict: v}
}

func requiredFailed(scores []agenteval.Score) bool {
	for _, s := range scores {
		if s.Required && s.Verdict == agenteval.VerdictFail {
			return true
		}
	}
	return false
}

// judge compares a recorded verdict and execution status with what the
// scores give; it returns the problem, or "".
func judge(v agenteval.Verdict, st agenteval.ExecutionStatus, want verdict) string {
	switch v {
	case agenteval.VerdictPass, agenteval.VerdictFail, agenteval.VerdictError, agenteval.VerdictSkip:
	default:
		return fmt.Sprintf("has the verdict %q, which agenteval does not write", v)
	}
	if !slices.Contains(want.allowed, v) {
		names := make([]string, len(want.allowed))
		for i, a := range want.allowed {
			names[i] = string(a)
		}
		msg := fmt.Sprintf("is recorded as %s, but its scores give %s", v, strings.Join(names, " or "))
		if want.why != "" {
			msg += " (" + want.why + ")"
		}
		return msg + ": the file was changed after the run"
	}
	okStatus := st == agenteval.StatusOf(v)
	if v == agenteval.VerdictSkip {
		okStatus = st == agenteval.StatusOK || st == agenteval.StatusExecutionError
	}
	if !okStatus {
		return fmt.Sprintf("is recorded as %s with execution_status %q, which that verdict never has: the file was changed after the run", v, st)
	}
	return ""
}

// num shows a score or pass mark briefly.
func num(f float64) string {
	if f == math.Trunc(f) {
		return fmt.Sprintf("%.0f", f)
	}
	return strings.TrimRight(fmt.Sprintf("%.4f", f), "0")
}
