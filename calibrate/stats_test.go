package calibrate

import (
	"math"
	"testing"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

// κ against published examples: the 50-proposal table of the κ article
// on Wikipedia (p_o 0.70, p_e 0.50, κ 0.40), and its pair of tables with
// the same 60% agreement but different marginals (κ 0.1304 and 0.2593).
func TestKappa(t *testing.T) {
	for _, tc := range []struct {
		name      string
		c         Counts
		agreement float64
		kappa     float64
		defined   bool
	}{
		{"wikipedia 50 proposals", Counts{PassPass: 20, PassFail: 5, FailPass: 10, FailFail: 15}, 0.70, 0.40, true},
		{"same agreement, balanced", Counts{PassPass: 45, PassFail: 15, FailPass: 25, FailFail: 15}, 0.60, 0.1304, true},
		{"same agreement, skewed", Counts{PassPass: 25, PassFail: 35, FailPass: 5, FailFail: 35}, 0.60, 0.2593, true},
		{"perfect, both classes", Counts{PassPass: 3, FailFail: 2}, 1, 1, true},
		// Always the opposite of the human: κ = −1.
		{"perfect disagreement", Counts{PassFail: 2, FailPass: 2}, 0, -1, true},
		// The judge passes everything, the human fails some: no better
		// than chance, κ = 0, however high the raw agreement.
		{"judge passes all", Counts{PassPass: 9, PassFail: 1}, 0.9, 0, true},
		// Both pass everything: p_e = 1, κ undefined.
		{"one class only", Counts{PassPass: 4}, 1, 0, false},
		{"no labels", Counts{}, 0, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k, ok := tc.c.Kappa()
			if ok != tc.defined || (ok && !near(k, tc.kappa, 5e-5)) {
				t.Errorf("κ = %v (defined %v), want %v (defined %v)", k, ok, tc.kappa, tc.defined)
			}
			a, ok := tc.c.Agreement()
			if ok != (tc.c.N() > 0) || !near(a, tc.agreement, 1e-12) {
				t.Errorf("agreement %v (%v), want %v", a, ok, tc.agreement)
			}
		})
	}
}

func TestFalsePassRate(t *testing.T) {
	c := Counts{PassPass: 6, PassFail: 2, FailPass: 1, FailFail: 6}
	if r, ok := c.FalsePassRate(); !ok || r != 0.25 || c.HumanFail() != 8 {
		t.Errorf("false-pass rate %v (%v) of %d human fails, want 0.25 of 8", r, ok, c.HumanFail())
	}
	if _, ok := (Counts{PassPass: 3, FailPass: 1}).FalsePassRate(); ok {
		t.Error("a rate with no human fails")
	}
	var sum Counts
	for _, v := range [][2]bool{{true, true}, {true, false}, {false, true}, {false, false}, {true, false}} {
		sum.Add(v[0], v[1])
	}
	if want := (Counts{1, 2, 1, 1}); sum != want || sum.Plus(sum) != (Counts{2, 4, 2, 2}) {
		t.Errorf("Add: %+v, want %+v", sum, want)
	}
}

// Wilson intervals against Newcombe (1998), "Two-sided confidence
// intervals for the single proportion", table I, method 3 (score method
// without continuity correction), and the textbook 0 of 10 and 5 of 10.
func TestWilson(t *testing.T) {
	for _, tc := range []struct {
		k, n   int
		lo, hi float64
	}{
		{81, 263, 0.2553, 0.3662},
		{15, 148, 0.0624, 0.1605},
		{0, 20, 0, 0.1611},
		{1, 29, 0.0061, 0.1718},
		{0, 10, 0, 0.2775},
		{5, 10, 0.2366, 0.7634},
		{10, 10, 0.7225, 1},
		{1, 1, 0.2065, 1},
	} {
		lo, hi := Wilson(tc.k, tc.n, Z95)
		if !near(lo, tc.lo, 5e-5) || !near(hi, tc.hi, 5e-5) {
			t.Errorf("Wilson(%d, %d) = [%.4f, %.4f], want [%.4f, %.4f]", tc.k, tc.n, lo, hi, tc.lo, tc.hi)
		}
	}
	if lo, hi := Wilson(0, 0, Z95); lo != 0 || hi != 1 {
		t.Errorf("Wilson of nothing: [%v, %v], want [0, 1]", lo, hi)
	}
}

func TestVoteAgreement(t *testing.T) {
	for _, tc := range []struct {
		v    Vote
		want float64
	}{
		{Vote{PassVotes: 3, Samples: 3}, 1},
		{Vote{PassVotes: 0, Samples: 5}, 1},
		{Vote{PassVotes: 2, Samples: 3}, 2.0 / 3},
		{Vote{PassVotes: 2, Samples: 5}, 0.6},
		{Vote{}, 0},
	} {
		if got := tc.v.Agreement(); !near(got, tc.want, 1e-12) {
			t.Errorf("%+v: %v, want %v", tc.v, got, tc.want)
		}
	}
}
