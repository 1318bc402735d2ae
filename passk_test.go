package agenteval

import (
	"math"
	"testing"
)

func TestPassAtKFor(t *testing.T) {
	tests := []struct {
		n, c    int
		at, hat []float64
	}{
		// 3 trials, 2 passed: pass@1 = 2/3, pass@2 = 1 - C(1,2)/C(3,2) = 1,
		// pass^2 = C(2,2)/C(3,2) = 1/3, pass^3 = 0.
		{3, 2, []float64{2.0 / 3, 1, 1}, []float64{2.0 / 3, 1.0 / 3, 0}},
		{3, 0, []float64{0, 0, 0}, []float64{0, 0, 0}},
		{1, 1, []float64{1}, []float64{1}},
		// 5 trials, 1 passed: pass@2 = 1 - C(4,2)/C(5,2) = 1 - 6/10.
		{5, 1, []float64{0.2, 0.4, 0.6, 0.8, 1}, []float64{0.2, 0, 0, 0, 0}},
	}
	for _, tc := range tests {
		got := PassAtKFor(tc.n, tc.c)
		if len(got) != tc.n {
			t.Fatalf("n=%d c=%d: %d values", tc.n, tc.c, len(got))
		}
		for i, g := range got {
			if g.K != i+1 || math.Abs(g.PassAtK-tc.at[i]) > 1e-12 || math.Abs(g.PassHatK-tc.hat[i]) > 1e-12 {
				t.Errorf("n=%d c=%d k=%d: got %+v, want pass@k %v pass^k %v", tc.n, tc.c, i+1, g, tc.at[i], tc.hat[i])
			}
		}
	}
	// Binomials of 1000 trials overflow a float64; the ratios must not.
	big := PassAtKFor(1000, 500)
	if v := big[999]; v.PassAtK != 1 || v.PassHatK != 0 {
		t.Errorf("n=1000 c=500 k=1000: %+v", v)
	}
	if v := big[0]; math.Abs(v.PassAtK-0.5) > 1e-12 || math.Abs(v.PassHatK-0.5) > 1e-12 {
		t.Errorf("n=1000 c=500 k=1: %+v", v)
	}
}

func TestConfidenceInterval(t *testing.T) {
	// Three trials 0.6, 0.8, 1.0: mean 0.8, sd 0.2, se 0.2/√3, t(2)=4.303.
	lo, hi := ConfidenceInterval([]float64{0.6, 0.8, 1.0})
	margin := 4.303 * 0.2 / math.Sqrt(3)
	if math.Abs(lo-max(0, 0.8-margin)) > 1e-9 || math.Abs(hi-min(1, 0.8+margin)) > 1e-9 {
		t.Errorf("CI = [%v, %v], want [%v, %v]", lo, hi, max(0, 0.8-margin), min(1, 0.8+margin))
	}
	if got := ReduceConfidenceInterval.Reduce([]float64{0.9, 0.9, 0.9}); math.Abs(got-0.9) > 1e-12 {
		t.Errorf("equal scores: lower bound %v, want 0.9", got)
	}
	if got := ReduceConfidenceInterval.Reduce([]float64{0.7}); got != 0.7 {
		t.Errorf("one score: %v, want 0.7", got)
	}
}
