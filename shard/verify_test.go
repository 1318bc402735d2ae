package shard

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/results"
)

// writeShard writes a shard's file from whole results.
func writeShard(t *testing.T, dir, name string, h results.Header, rs ...agenteval.Result) string {
	t.Helper()
	h.Record = results.RecordRun
	lines := []any{h}
	for _, r := range rs {
		lines = append(lines, r)
	}
	var b strings.Builder
	for _, l := range lines {
		j, _ := json.Marshal(l)
		b.Write(j)
		b.WriteByte('\n')
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func res(id string, score float64, v agenteval.Verdict, scores ...agenteval.Score) agenteval.Result {
	if scores == nil {
		scores = []agenteval.Score{}
	}
	return agenteval.Result{TestID: id, Suite: "s", Target: "replay", Score: score, Verdict: v, ExecutionStatus: agenteval.StatusOf(v), Scores: scores}
}

func sc(name string, score float64, v agenteval.Verdict, weight float64) agenteval.Score {
	return agenteval.Score{Name: name, Type: "contains", Score: score, Verdict: v, Weight: weight}
}

func f(x float64) *float64 { return &x }

// Verdicts are made again as the runner makes them, for every shape of
// result it writes; one that disagrees is refused, naming its test.
func TestCheckVerdicts(t *testing.T) {
	pass, fail, errV, skip := agenteval.VerdictPass, agenteval.VerdictFail, agenteval.VerdictError, agenteval.VerdictSkip
	required := sc("must", 0, fail, 1)
	required.Required = true
	agentErr := agenteval.Score{Name: "agent", Type: "agent", Verdict: errV, Weight: 0}
	shownErr := agenteval.Score{Name: "fidelity", Type: "user_fidelity", Verdict: errV, Weight: 0}
	ungraded := agenteval.Score{Name: "turn-2", Type: "none", Verdict: skip, Weight: 0}
	turnSkipped := agenteval.Score{Name: "turn-3", Type: "skip", Verdict: skip, Weight: 1}
	trials := func(v agenteval.Verdict, score float64, ts ...agenteval.Trial) agenteval.Result {
		r := res("trials", score, v)
		r.Trials = ts
		return r
	}
	trial := func(n int, score float64, v agenteval.Verdict) agenteval.Trial {
		return agenteval.Trial{Trial: n, Score: score, Verdict: v, ExecutionStatus: agenteval.StatusOf(v), Scores: []agenteval.Score{sc("c", score, v, 1)}}
	}
	errTrial := agenteval.Trial{Trial: 2, Verdict: errV, ExecutionStatus: agenteval.StatusExecutionError, Scores: []agenteval.Score{}, Error: "agent: down"}
	skipped := res("skipped", 0, skip)
	skipped.ExecutionStatus, skipped.Error = agenteval.StatusOK, "skipped: needs a workspace"
	depSkipped := res("dep", 0, skip)
	depSkipped.Error = "skipped because its dependency [a] ended in execution_error (on_dependency_failure: skip)"
	depFailed := res("dep", 0, fail)
	depFailed.Error = "failed because its dependency [a] ended in execution_error (on_dependency_failure: fail)"
	withErr := res("e", 0, errV, sc("c", 0, errV, 1))
	withErr.Error = "c: judge down"

	single := agenteval.Test{ID: "x", Suite: "s"}
	talk := agenteval.Test{ID: "x", Suite: "s", Mode: agenteval.ModeConversation, Aggregation: agenteval.ReduceMin}
	minTrials := agenteval.Test{ID: "trials", Suite: "s", TrialStrategy: agenteval.ReduceMin}
	for _, tc := range []struct {
		name string
		test *agenteval.Test // the suite's test; nil: the suite is not here
		th   *float64        // the suite's pass mark
		r    agenteval.Result
		want string // "" when the result is what its scores give
	}{
		{"pass", &single, nil, res("x", 1, pass, sc("c", 1, pass, 1)), ""},
		{"fail", &single, nil, res("x", 0, fail, sc("c", 0, fail, 1)), ""},
		{"fail edited to pass", &single, nil, res("x", 0, pass, sc("c", 0, fail, 1)), "recorded as pass, but its scores give fail (score 0 against the pass mark 0.8)"},
		{"score edited too", &single, nil, res("x", 1, pass, sc("c", 0, fail, 1)), "recorded as pass, but its scores give fail (score 0 against"},
		{"weighted mean", &single, nil, res("x", 2.0/3, pass, sc("a", 1, pass, 2), sc("b", 0, fail, 1)), "recorded as pass, but its scores give fail (score 0.6667 against the pass mark 0.8)"},
		{"the suite's pass mark", &single, f(0.5), res("x", 2.0/3, pass, sc("a", 1, pass, 2), sc("b", 0, fail, 1)), ""},
		{"a required grader failed", &single, nil, res("x", 0, pass, sc("a", 1, pass, 9), required), "but its scores give fail (a required grader failed)"},
		{"nothing to grade", &single, nil, res("x", 1, pass), ""},
		{"an error edited to pass", &single, nil, res("x", 0, pass, sc("c", 0, errV, 1)), "its scores give error (its score c is an error)"},
		{"an agent error of weight 0", &single, nil, res("x", 0, pass, agentErr), "its scores give error"},
		{"an error shown, not counted", &single, nil, res("x", 1, pass, sc("c", 1, pass, 1), shownErr), ""},
		{"a recorded error", nil, nil, withErr, ""},
		{"conversation: min of turns, ungraded left out, skipped turn 0", &talk, nil, res("x", 0, fail, sc("turn-1", 1, pass, 1), ungraded, turnSkipped), ""},
		{"conversation edited", &talk, nil, res("x", 1, pass, sc("turn-1", 1, pass, 1), ungraded, turnSkipped), "its scores give fail (score 0 against"},
		{"conversation, ungraded only", &talk, nil, res("x", 1, pass, sc("turn-1", 1, pass, 1), ungraded), ""},
		{"trials, min", &minTrials, nil, trials(fail, 0, trial(1, 1, pass), trial(2, 0, fail), trial(3, 1, pass)), ""},
		{"trials edited", &minTrials, nil, trials(pass, 1, trial(1, 1, pass), trial(2, 0, fail), trial(3, 1, pass)), "recorded as pass, but its scores give fail"},
		{"a trial edited", &minTrials, nil, trials(fail, 0, trial(1, 1, pass), trial(2, 0, pass), trial(3, 1, pass)), "trial 2, is recorded as pass, but its scores give fail"},
		{"trials, one errored", &minTrials, nil, trials(pass, 1, trial(1, 1, pass), errTrial, trial(3, 1, pass)), ""},
		{"trials, all errored", &minTrials, nil, trials(errV, 0, errTrial), ""},
		{"trials, all errored, edited", &minTrials, nil, trials(pass, 0, errTrial), "its scores give error (every trial ended in execution_error)"},
		{"skipped", nil, nil, skipped, ""},
		{"skipped for a dependency", nil, nil, depSkipped, ""},
		{"failed for a dependency", &single, nil, depFailed, ""},
		{"a dependency's failure edited to pass", &single, nil, func() agenteval.Result {
			r := depFailed
			r.Verdict, r.ExecutionStatus = pass, agenteval.StatusOK
			return r
		}(), "its scores give fail (a dependency failed)"},
		{"a fail edited to skip", &single, nil, func() agenteval.Result {
			r := res("x", 0, skip, sc("c", 0, fail, 1))
			r.ExecutionStatus = agenteval.StatusOK
			return r
		}(), "recorded as skip, but its scores give fail"},
		{"status left behind", nil, nil, func() agenteval.Result {
			r := res("x", 0, pass)
			r.ExecutionStatus = agenteval.StatusQualityFailure
			return r
		}(), `recorded as pass with execution_status "quality_failure"`},
		{"an unknown verdict", nil, nil, res("x", 1, "passed"), `has the verdict "passed"`},
		// Without the suite nor --threshold the pass mark is unknown:
		// pass and fail both may be right.
		{"no pass mark", nil, nil, res("x", 0.5, pass, sc("c", 0.5, fail, 1)), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			h := hdr("r1", 1, 1, 1)
			opt := Options{}
			if tc.test != nil {
				tt := *tc.test
				tt.ID = tc.r.TestID
				opt.Suite = func(sf results.SuiteFile) *Suite {
					return &Suite{Path: sf.Path, Tests: []agenteval.Test{tt}, Threshold: tc.th}
				}
			}
			p := writeShard(t, dir, "1.jsonl", h, tc.r)
			_, err := CheckWith([]string{p}, opt)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.want != "" && err == nil:
				t.Errorf("accepted; want %q", tc.want)
			case tc.want != "" && !strings.Contains(err.Error(), tc.want):
				t.Errorf("error %q\nlacks %q", err, tc.want)
			case tc.want != "" && !strings.Contains(err.Error(), p+": s/"+tc.r.TestID+" (target replay)"):
				t.Errorf("error %q does not name the file and test", err)
			}
		})
	}
}

// A run's --threshold is every test's pass mark, with or without the
// suite.
func TestCheckVerdictsRunThreshold(t *testing.T) {
	dir := t.TempDir()
	h := hdr("r1", 1, 1, 1)
	h.Threshold = f(0.5)
	p := writeShard(t, dir, "1.jsonl", h, res("x", 0.25, agenteval.VerdictPass, sc("c", 0.25, agenteval.VerdictFail, 1)))
	if _, err := Check([]string{p}); err == nil || !strings.Contains(err.Error(), "recorded as pass, but its scores give fail (score 0.25 against the pass mark 0.5)") {
		t.Errorf("--threshold 0.5, a score of 0.25 recorded as pass: %v", err)
	}
}

// The tests of the suites here must all have a result: a shard that lost
// one and had its count lowered is refused, naming the test, unless the
// shards' --filter left it out.
func TestCheckPlan(t *testing.T) {
	dir := t.TempDir()
	tests := []agenteval.Test{{ID: "a", Suite: "s"}, {ID: "b", Suite: "s"}, {ID: "c", Suite: "s"}, {ID: "gone", Suite: "s"}}
	found := Options{Suite: func(sf results.SuiteFile) *Suite { return &Suite{Path: sf.Path, Tests: tests} }}
	ok := func(id string) agenteval.Result { return res(id, 1, agenteval.VerdictPass) }
	s1 := writeShard(t, dir, "1.jsonl", hdr("r1", 1, 2, 2), ok("a"), ok("gone"))
	s2 := writeShard(t, dir, "2.jsonl", hdr("r1", 2, 2, 2), ok("b"), ok("c"))
	m, err := CheckWith([]string{s1, s2}, found)
	if err != nil || m.Count != 4 || len(m.Unchecked) != 0 {
		t.Fatalf("the whole run: %+v, %v", m, err)
	}
	lost := writeShard(t, dir, "lost.jsonl", hdr("r1", 1, 2, 1), ok("a"))
	_, err = CheckWith([]string{lost, s2}, found)
	if err == nil || !strings.Contains(err.Error(), "no shard has a result of: s/gone (evals/s.yaml)") || !strings.Contains(err.Error(), "give merge the same --filter") {
		t.Errorf("a result dropped with its count: %v", err)
	}
	// The shards ran with --filter '[abc]': gone was not to run.
	filtered := found
	filtered.Filter = "[abc]"
	if _, err := CheckWith([]string{lost, s2}, filtered); err != nil {
		t.Errorf("with the shards' --filter: %v", err)
	}
	filtered.Filter = "["
	if _, err := CheckWith([]string{lost, s2}, filtered); err == nil || !strings.Contains(err.Error(), `--filter "["`) {
		t.Errorf("a bad --filter: %v", err)
	}
	// Without the suite, nothing names the lost test: merge says what it
	// did not check.
	m, err = Check([]string{lost, s2})
	if err != nil || len(m.Unchecked) != 1 || m.Unchecked[0] != "evals/s.yaml" {
		t.Errorf("without the suite: %+v, %v", m, err)
	}
}
