package report

import (
	"fmt"
	"strings"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/results"
)

// shownKs picks the k values a terminal line has room for: all of them up
// to 10, else 1 to 5, round numbers, and the largest.
func shownKs(maxK int) []int {
	if maxK <= 10 {
		ks := make([]int, maxK)
		for i := range ks {
			ks[i] = i + 1
		}
		return ks
	}
	ks := []int{1, 2, 3, 4, 5}
	for _, k := range []int{10, 20, 50, 100, 200, 500} {
		if k < maxK {
			ks = append(ks, k)
		}
	}
	return append(ks, maxK)
}

// passAtKLines renders suite-level pass@k and pass^k as two aligned lines
// for the table's summary, followed by how many tests the means are over.
func passAtKLines(ps []results.PassAtKSummary) []string {
	if len(ps) == 0 {
		return nil
	}
	var at, hat strings.Builder
	at.WriteString("pass@k")
	hat.WriteString("pass^k")
	for _, k := range shownKs(len(ps)) {
		p := ps[k-1]
		fmt.Fprintf(&at, "  k=%d %.3f", p.K, p.PassAtK)
		fmt.Fprintf(&hat, "  k=%d %.3f", p.K, p.PassHatK)
	}
	hat.WriteString("  (" + testsNote(ps) + ")")
	return []string{at.String(), hat.String()}
}

// testsNote says how many tests the means are over: "3 tests" when every k
// has the same, else "3 tests; 2 for k=2..3" (counts only fall as k grows).
func testsNote(ps []results.PassAtKSummary) string {
	var parts []string
	for i := 0; i < len(ps); {
		j := i
		for j+1 < len(ps) && ps[j+1].Tests == ps[i].Tests {
			j++
		}
		switch {
		case i == 0:
			s := "s"
			if ps[0].Tests == 1 {
				s = ""
			}
			parts = append(parts, fmt.Sprintf("%d test%s", ps[0].Tests, s))
		case i == j:
			parts = append(parts, fmt.Sprintf("%d for k=%d", ps[i].Tests, ps[i].K))
		default:
			parts = append(parts, fmt.Sprintf("%d for k=%d..%d", ps[i].Tests, ps[i].K, ps[j].K))
		}
		i = j + 1
	}
	return strings.Join(parts, "; ")
}

// trialsNote is the short trial count shown beside a test's verdict, such as
// "2/3 trials passed", or "" for a test that ran once.
func trialsNote(r *agenteval.Result) string {
	n, c, errs := results.TrialCounts(r)
	if n < 2 {
		return ""
	}
	s := fmt.Sprintf("%d/%d trials passed", c, n)
	if errs > 0 {
		s += fmt.Sprintf(", %d errored", errs)
	}
	return s
}
