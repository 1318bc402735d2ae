package compare

import (
	"fmt"
	"math"
)

// noiseP is the p-value at or above which a pass-rate difference is called
// noise: the chance of a difference at least this large between two runs
// of an agent that did not change.
const noiseP = 0.05

// fisherP is the two-sided p-value of Fisher's exact test on passes and
// failures in two runs: c1 of n1 trials passed, then c2 of n2. It is exact
// for the small numbers of trials evals use, where a normal approximation
// is not.
func fisherP(c1, n1, c2, n2 int) float64 {
	if n1 <= 0 || n2 <= 0 {
		return 1
	}
	passes := c1 + c2
	n := n1 + n2
	lp := func(a int) float64 { // log P(first run has a passes | margins)
		return lchoose(n1, a) + lchoose(n2, passes-a) - lchoose(n, passes)
	}
	obs := lp(c1)
	p := 0.0
	for a := max(0, passes-n2); a <= min(passes, n1); a++ {
		if l := lp(a); l <= obs+1e-9 {
			p += math.Exp(l)
		}
	}
	return math.Min(1, p)
}

func lchoose(n, k int) float64 {
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(k + 1))
	c, _ := math.Lgamma(float64(n - k + 1))
	return a - b - c
}

func fmtNoise(what string, b, n *Outcome, p float64) string {
	s := fmt.Sprintf("%s: %d/%d → %d/%d trials passed (Fisher p=%.2f)", what, b.Passed, b.Trials, n.Passed, n.Trials, p)
	if what == "within noise" {
		s += "; more trials would tell"
	}
	return s
}

func fmtIgnored(what string, drop, min float64) string {
	return fmt.Sprintf("%s %.2f is below --min-delta %.2f", what, drop, min)
}
