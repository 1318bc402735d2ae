package results

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/agenteval/agenteval"
)

// sample is four results: a pass, a failure, a row that did not decode,
// and a test whose metric could not run.
func sample() []*agenteval.Result {
	return []*agenteval.Result{
		{TestID: "ok", Score: 1, Verdict: agenteval.VerdictPass, ExecutionStatus: agenteval.StatusOK, Scores: []agenteval.Score{
			{Name: "acc", Score: 1, Verdict: agenteval.VerdictPass, Weight: 1},
			{Name: "f1", Score: 1, Verdict: agenteval.VerdictPass, Weight: 1},
		}},
		{TestID: "a-rather-long-test-identifier-that-is-clipped", Score: 0.25, Verdict: agenteval.VerdictFail, ExecutionStatus: agenteval.StatusQualityFailure, Scores: []agenteval.Score{
			{Name: "acc", Score: 0.5, Verdict: agenteval.VerdictFail, Weight: 1, Reason: "half the calls", Assertions: []agenteval.Assertion{
				{Text: "call 1", Passed: true}, {Text: "call 2 is book", Evidence: "called search instead"},
			}},
			{Name: "f1", Score: 0, Verdict: agenteval.VerdictFail, Weight: 1, Reason: "nothing matched"},
		}},
		{TestID: "broken", Verdict: agenteval.VerdictError, ExecutionStatus: agenteval.StatusExecutionError, Scores: []agenteval.Score{}, Error: "invalid row: d.jsonl:3:4: bad"},
		{TestID: "half", Score: 0.5, Verdict: agenteval.VerdictError, ExecutionStatus: agenteval.StatusExecutionError, Scores: []agenteval.Score{
			{Name: "acc", Score: 0.5, Verdict: agenteval.VerdictFail, Weight: 1, Reason: "meh"},
			{Name: "f1", Verdict: agenteval.VerdictError, Weight: 1, Reason: "needs reference_tool_calls"},
		}},
	}
}

func TestSummary(t *testing.T) {
	var sum Summary
	for _, r := range sample() {
		sum.Add(r)
	}
	want := Summary{Total: 4, Passed: 1, Failed: 1, Errored: 2}
	if sum.Total != want.Total || sum.Passed != want.Passed || sum.Failed != want.Failed || sum.Errored != want.Errored {
		t.Errorf("summary = %+v", sum)
	}
	acc := sum.Metrics["acc"]
	if acc.Count != 3 || acc.Passed != 1 || acc.Failed != 2 || acc.Mean != (1+0.5+0.5)/3 {
		t.Errorf("acc = %+v", acc)
	}
	if f1 := sum.Metrics["f1"]; f1.Count != 2 || f1.Errors != 1 || f1.Mean != 0.5 {
		t.Errorf("f1 = %+v", f1)
	}
	if names := sum.MetricNames(); len(names) != 2 || names[0] != "acc" || names[1] != "f1" {
		t.Errorf("metric names = %v, want [acc f1]", names)
	}
}

// TestMetricNamesLeaveOutTheUngraded: a score name that was only ever
// skipped (a turn with nothing to grade) has no mean, so the names a
// summary table lists leave it out, instead of a mean of 0 over no tests.
func TestMetricNamesLeaveOutTheUngraded(t *testing.T) {
	var sum Summary
	sum.Add(&agenteval.Result{TestID: "c", Verdict: agenteval.VerdictPass, Scores: []agenteval.Score{
		{Name: "turn-1", Type: "none", Verdict: agenteval.VerdictSkip, Reason: "nothing to grade"},
		{Name: "turn-2", Score: 1, Verdict: agenteval.VerdictPass, Weight: 1},
		{Name: "turn-3", Verdict: agenteval.VerdictError, Weight: 1},
	}})
	if names := strings.Join(sum.MetricNames(), ","); names != "turn-2,turn-3" {
		t.Errorf("metric names = %s, want turn-2,turn-3", names)
	}
	if m := sum.Metrics["turn-1"]; m == nil || m.Count != 0 {
		t.Errorf("turn-1 = %+v; the summary still records it", m)
	}
}

// trialsResult is a test that ran once per letter of verdicts: p passed, f
// failed, e failed to run. Like a result read from a file written without
// pass_at_k, it carries only its trials, so the summary computes the rest.
func trialsResult(id, verdicts string) *agenteval.Result {
	r := &agenteval.Result{TestID: id, Suite: "s", Verdict: agenteval.VerdictFail, ExecutionStatus: agenteval.StatusQualityFailure, Scores: []agenteval.Score{}}
	for i, v := range verdicts {
		tr := agenteval.Trial{Trial: i + 1, Verdict: agenteval.VerdictFail, ExecutionStatus: agenteval.StatusQualityFailure}
		switch v {
		case 'p':
			tr.Verdict, tr.ExecutionStatus, tr.Score = agenteval.VerdictPass, agenteval.StatusOK, 1
		case 'e':
			tr.Verdict, tr.ExecutionStatus = agenteval.VerdictError, agenteval.StatusExecutionError
		}
		r.Trials = append(r.Trials, tr)
	}
	if len(r.Trials) == 1 {
		// The runner folds a single trial into the result.
		r.Verdict, r.ExecutionStatus, r.Trials = r.Trials[0].Verdict, r.Trials[0].ExecutionStatus, nil
	}
	return r
}

func TestSummaryPassAtK(t *testing.T) {
	// As the runner writes it: n=3, c=2, with its per-test values, which
	// the summary takes as they are.
	runner := trialsResult("runner", "ppf")
	runner.PassAtK = []agenteval.PassAtK{{K: 1, PassAtK: 2.0 / 3, PassHatK: 2.0 / 3}, {K: 2, PassAtK: 1, PassHatK: 1.0 / 3}, {K: 3, PassAtK: 1, PassHatK: 0}}
	depSkipped := &agenteval.Result{TestID: "dep", Verdict: agenteval.VerdictSkip, ExecutionStatus: agenteval.StatusExecutionError, Scores: []agenteval.Score{}}
	onceBroken := &agenteval.Result{TestID: "broken", Verdict: agenteval.VerdictError, ExecutionStatus: agenteval.StatusExecutionError, Scores: []agenteval.Score{}, Error: "agent crashed"}
	for _, tc := range []struct {
		name    string
		results []*agenteval.Result
		want    []PassAtKSummary // nil: left out of the summary
	}{
		{
			// (n=3,c=2): pass@1 2/3, pass@2 1−C(1,2)/C(3,2) = 1, pass@3 1;
			//            pass^1 2/3, pass^2 C(2,2)/C(3,2) = 1/3, pass^3 0.
			// (n=3,c=0): all 0. (n=1,c=1): pass@1 = pass^1 = 1.
			// k=1 over 3 tests: (2/3+0+1)/3 = 5/9 for both.
			// k=2 over 2 tests: pass@2 (1+0)/2 = 1/2, pass^2 (1/3+0)/2 = 1/6.
			// k=3 over 2 tests: pass@3 (1+0)/2 = 1/2, pass^3 0.
			name:    "mixed trial counts",
			results: []*agenteval.Result{trialsResult("a", "ppf"), trialsResult("b", "fff"), trialsResult("c", "p")},
			want:    []PassAtKSummary{{1, 5.0 / 9, 5.0 / 9, 3}, {2, 0.5, 1.0 / 6, 2}, {3, 0.5, 0, 2}},
		},
		{
			name:    "per-test values from the runner are used",
			results: []*agenteval.Result{runner, trialsResult("b", "fff"), trialsResult("c", "p")},
			want:    []PassAtKSummary{{1, 5.0 / 9, 5.0 / 9, 3}, {2, 0.5, 1.0 / 6, 2}, {3, 0.5, 0, 2}},
		},
		{
			// (n=4,c=2): pass@2 1−C(2,2)/C(4,2) = 5/6, pass^2 C(2,2)/C(4,2)
			// = 1/6; pass@3 1−0 = 1, pass^3 0; pass@4 1, pass^4 0.
			// (n=2,c=2): 1 at every k. k=3 and k=4 have only the first.
			name:    "k beyond a test's trials",
			results: []*agenteval.Result{trialsResult("a", "pfpf"), trialsResult("b", "pp")},
			want:    []PassAtKSummary{{1, 0.75, 0.75, 2}, {2, (5.0/6 + 1) / 2, (1.0/6 + 1) / 2, 2}, {3, 1, 0, 1}, {4, 1, 0, 1}},
		},
		{
			// Trials that failed to run count as not passing: (n=3,c=1),
			// pass@2 1−C(2,2)/C(3,2) = 2/3, pass^2 0. A test skipped for
			// its dependency never ran and does not count; a test that ran
			// once and crashed counts as (n=1,c=0).
			// k=1: (1/3 + 0)/2 = 1/6.
			name:    "execution errors and skips",
			results: []*agenteval.Result{trialsResult("a", "epf"), depSkipped, onceBroken},
			want:    []PassAtKSummary{{1, 1.0 / 6, 1.0 / 6, 2}, {2, 2.0 / 3, 0, 1}, {3, 1, 0, 1}},
		},
		{
			name:    "all trials failed to run",
			results: []*agenteval.Result{trialsResult("a", "ee")},
			want:    []PassAtKSummary{{1, 0, 0, 1}, {2, 0, 0, 1}},
		},
		{
			name:    "single trials only",
			results: []*agenteval.Result{trialsResult("a", "p"), trialsResult("b", "f"), depSkipped},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var sum Summary
			for _, r := range tc.results {
				sum.Add(r)
			}
			got := sum.PassAtK
			if len(got) != len(tc.want) {
				t.Fatalf("pass@k = %+v, want %+v", got, tc.want)
			}
			for i, w := range tc.want {
				g := got[i]
				if g.K != w.K || g.Tests != w.Tests || math.Abs(g.PassAtK-w.PassAtK) > 1e-9 || math.Abs(g.PassHatK-w.PassHatK) > 1e-9 {
					t.Errorf("k=%d: got %+v, want %+v", w.K, g, w)
				}
			}
			b, err := json.Marshal(&sum)
			if err != nil {
				t.Fatal(err)
			}
			if has := strings.Contains(string(b), `"pass_at_k":`); has != (tc.want != nil) {
				t.Errorf("pass_at_k in the JSON summary is %v, want %v: %s", has, tc.want != nil, b)
			}
		})
	}
}

// TestSummaryUsageIsTheResults: the totals are the sum of the results'
// usage (agent, simulated user and judge), not of the judge's scores alone.
func TestSummaryUsageIsTheResults(t *testing.T) {
	cost := func(c float64) *float64 { return &c }
	results := []*agenteval.Result{
		{TestID: "a", Verdict: agenteval.VerdictPass, Usage: &agenteval.Usage{Calls: 4, InputTokens: 400, OutputTokens: 40, CostUSD: cost(0.004)},
			Scores: []agenteval.Score{{Name: "turn-1", Verdict: agenteval.VerdictPass, Usage: &agenteval.Usage{Calls: 1, InputTokens: 100, OutputTokens: 10, CostUSD: cost(0.001)}}}},
		{TestID: "b", Verdict: agenteval.VerdictPass, Usage: &agenteval.Usage{Calls: 2, CachedCalls: 1, InputTokens: 50, OutputTokens: 5, CostUSD: cost(0.0005)},
			Scores: []agenteval.Score{{Name: "turn-1", Verdict: agenteval.VerdictPass, Usage: &agenteval.Usage{CachedCalls: 1}}}},
	}
	var sum Summary
	var want agenteval.Usage
	for _, r := range results {
		sum.Add(r)
		want.Add(r.Usage)
	}
	if sum.Usage.Calls != 6 || sum.Usage.CachedCalls != 1 || sum.Usage.InputTokens != want.InputTokens || *sum.Usage.CostUSD != *want.CostUSD {
		t.Errorf("summary usage = %+v, want %+v", sum.Usage, want)
	}
	if m := sum.Metrics["turn-1"]; m.Usage.Calls != 1 || m.Usage.CachedCalls != 1 {
		t.Errorf("turn-1's own usage = %+v", m.Usage)
	}
}

// TrialCounts counts what a result says of its trials, however it says it.
func TestTrialCounts(t *testing.T) {
	withPassAtK := &agenteval.Result{TestID: "p", Verdict: agenteval.VerdictFail, PassAtK: agenteval.PassAtKFor(4, 3)}
	for _, tc := range []struct {
		r                  *agenteval.Result
		n, passed, errored int
	}{
		{trialsResult("a", "pfe"), 3, 1, 1},
		{withPassAtK, 4, 3, 0},
		{trialsResult("b", "p"), 1, 1, 0},
		{&agenteval.Result{TestID: "c", Verdict: agenteval.VerdictError, ExecutionStatus: agenteval.StatusExecutionError}, 1, 0, 1},
		{&agenteval.Result{TestID: "d", Verdict: agenteval.VerdictSkip}, 0, 0, 0},
	} {
		n, passed, errored := TrialCounts(tc.r)
		if n != tc.n || passed != tc.passed || errored != tc.errored {
			t.Errorf("%s: TrialCounts = %d, %d, %d; want %d, %d, %d", tc.r.TestID, n, passed, errored, tc.n, tc.passed, tc.errored)
		}
	}
}
