package calibrate

import "math"

// Counts is the confusion matrix of a judge against human labels, with
// the human's verdict taken as the truth and pass as the positive class.
type Counts struct {
	// PassPass: both passed. PassFail: the judge passed what the human
	// failed (a false pass). FailPass: the judge failed what the human
	// passed (a false fail). FailFail: both failed.
	PassPass int `json:"judge_pass_human_pass"`
	PassFail int `json:"judge_pass_human_fail"`
	FailPass int `json:"judge_fail_human_pass"`
	FailFail int `json:"judge_fail_human_fail"`
}

// Add counts one judged criterion.
func (c *Counts) Add(judgePass, humanPass bool) {
	switch {
	case judgePass && humanPass:
		c.PassPass++
	case judgePass:
		c.PassFail++
	case humanPass:
		c.FailPass++
	default:
		c.FailFail++
	}
}

// Plus is the sum of two matrices.
func (c Counts) Plus(o Counts) Counts {
	return Counts{c.PassPass + o.PassPass, c.PassFail + o.PassFail, c.FailPass + o.FailPass, c.FailFail + o.FailFail}
}

// N is the number of labelled criteria.
func (c Counts) N() int { return c.PassPass + c.PassFail + c.FailPass + c.FailFail }

// Agreed is how many the judge and the human decided alike.
func (c Counts) Agreed() int { return c.PassPass + c.FailFail }

// HumanFail is how many the human failed.
func (c Counts) HumanFail() int { return c.PassFail + c.FailFail }

// Agreement is the share of criteria decided alike, p_o; ok is false
// when there are none.
func (c Counts) Agreement() (p float64, ok bool) {
	n := c.N()
	if n == 0 {
		return 0, false
	}
	return float64(c.Agreed()) / float64(n), true
}

// Kappa is Cohen's κ = (p_o − p_e) / (1 − p_e), where p_e is the
// agreement expected by chance from each side's share of passes:
// p_e = (judge passes × human passes + judge fails × human fails) / n².
// ok is false when κ is undefined: no labels, or p_e = 1, which happens
// only when judge and human gave the same single verdict to everything.
func (c Counts) Kappa() (k float64, ok bool) {
	n := float64(c.N())
	if n == 0 {
		return 0, false
	}
	po := float64(c.Agreed()) / n
	judgePass, humanPass := float64(c.PassPass+c.PassFail), float64(c.PassPass+c.FailPass)
	pe := (judgePass*humanPass + (n-judgePass)*(n-humanPass)) / (n * n)
	if pe >= 1 {
		return 0, false
	}
	return (po - pe) / (1 - pe), true
}

// FalsePassRate is the share of the criteria the human failed that the
// judge passed: PassFail / (PassFail + FailFail), the chance that the
// judge lets through what a person would stop. ok is false when the
// human failed none.
func (c Counts) FalsePassRate() (r float64, ok bool) {
	n := c.HumanFail()
	if n == 0 {
		return 0, false
	}
	return float64(c.PassFail) / float64(n), true
}

// Z95 is the standard normal quantile of a two-sided 95% interval.
const Z95 = 1.959963984540054

// Wilson is the Wilson score interval of a proportion of k successes in n
// trials, at the confidence that z stands for (Z95 for 95%). Unlike the
// normal approximation it stays within [0, 1] and is not empty at k = 0
// or k = n, which is where judges' false-pass counts usually are. n must
// be positive.
func Wilson(k, n int, z float64) (lo, hi float64) {
	if n <= 0 {
		return 0, 1
	}
	nf, p := float64(n), float64(k)/float64(n)
	z2 := z * z
	center := (p + z2/(2*nf)) / (1 + z2/nf)
	half := z / (1 + z2/nf) * math.Sqrt(p*(1-p)/nf+z2/(4*nf*nf))
	lo, hi = max(0, center-half), min(1, center+half)
	// At k = 0 and k = n the bound is exactly 0 or 1; rounding may
	// leave it a hair away.
	if k == 0 {
		lo = 0
	}
	if k == n {
		hi = 1
	}
	return lo, hi
}
