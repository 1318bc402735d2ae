package results

import (
	"math"

	"github.com/agenteval/agenteval"
)

// PassAtKSummary is pass@k and pass^k over many tests: for one k, the mean
// of the per-test values over the tests that ran at least k trials (the
// τ²-bench definition of pass^k). Tests that ran fewer trials cannot say
// anything about k of them, so they are left out rather than counted as 0.
type PassAtKSummary struct {
	K        int     `json:"k"`
	PassAtK  float64 `json:"pass_at_k"`
	PassHatK float64 `json:"pass_hat_k"`
	// Tests is how many tests ran at least K trials: the means' divisor.
	Tests int `json:"tests"`
}

// passAtKMeans accumulates per-test pass@k and pass^k as results stream
// past, keeping sums per k rather than the results.
type passAtKMeans struct {
	at, hat []float64 // sums, index k-1
	tests   []int
	// multi is set once some test ran more than one trial; until then
	// there is nothing worth reporting beyond the pass rate.
	multi bool
}

func (m *passAtKMeans) add(r *agenteval.Result) {
	vals, ok := PassAtK(r)
	if !ok {
		return
	}
	if len(vals) > 1 {
		m.multi = true
	}
	for i, v := range vals {
		if i == len(m.tests) {
			m.at, m.hat, m.tests = append(m.at, 0), append(m.hat, 0), append(m.tests, 0)
		}
		m.at[i] += v.PassAtK
		m.hat[i] += v.PassHatK
		m.tests[i]++
	}
}

// summary returns the means for k = 1..the most trials any test ran, reusing
// dst's storage, or nil when no test ran more than one trial.
func (m *passAtKMeans) summary(dst []PassAtKSummary) []PassAtKSummary {
	if !m.multi {
		return nil
	}
	dst = dst[:0]
	for i, n := range m.tests {
		dst = append(dst, PassAtKSummary{K: i + 1, PassAtK: m.at[i] / float64(n), PassHatK: m.hat[i] / float64(n), Tests: n})
	}
	return dst
}

// PassAtK is a test's pass@k and pass^k for k = 1..its trials, and
// whether it counts at all. A test that never ran (skipped, say, because a
// dependency failed) does not count; one that ran once counts as one trial,
// passed or not. Trials that failed to run count as not passing, as they do
// in the per-test values the runner computes.
func PassAtK(r *agenteval.Result) ([]agenteval.PassAtK, bool) {
	if len(r.PassAtK) > 0 {
		return r.PassAtK, true
	}
	n, c, _ := TrialCounts(r)
	if n == 0 {
		return nil, false
	}
	return agenteval.PassAtKFor(n, c), true
}

// TrialCounts is how many trials a test ran, how many passed and how many
// failed to run. A single run is one trial; a skipped test with no trials
// ran none.
func TrialCounts(r *agenteval.Result) (n, passed, errored int) {
	switch {
	case len(r.Trials) > 0:
		for _, t := range r.Trials {
			switch {
			case t.Verdict == agenteval.VerdictPass:
				passed++
			case t.ExecutionStatus == agenteval.StatusExecutionError:
				errored++
			}
		}
		return len(r.Trials), passed, errored
	case len(r.PassAtK) > 0:
		// Results written without their trials still say c/n as pass@1.
		n = len(r.PassAtK)
		return n, int(math.Round(r.PassAtK[0].PassAtK * float64(n))), 0
	case r.Verdict == agenteval.VerdictSkip || r.Verdict == "":
		return 0, 0, 0
	case r.Verdict == agenteval.VerdictPass:
		return 1, 1, 0
	case r.ExecutionStatus == agenteval.StatusExecutionError:
		return 1, 0, 1
	}
	return 1, 0, 0
}
