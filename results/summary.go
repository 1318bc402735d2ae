package results

import (
	"sort"

	"github.com/agenteval/agenteval"
)

// Summary aggregates results as they stream past.
type Summary struct {
	Total   int `json:"total"`
	Passed  int `json:"passed"`
	Failed  int `json:"failed"`
	Errored int `json:"errored"`
	Skipped int `json:"skipped"`
	// Metrics holds per-score statistics, keyed by score name.
	Metrics    map[string]*MetricSummary `json:"metrics"`
	Usage      agenteval.Usage           `json:"usage"`
	DurationMS float64                   `json:"duration_ms"`
	// PassAtK is pass@k and pass^k over the tests, for k = 1..the most
	// trials any test ran; nil unless some test ran more than one trial.
	PassAtK []PassAtKSummary `json:"pass_at_k,omitempty"`
	passAtK passAtKMeans
}

// MetricSummary is the statistics of one score name across tests.
type MetricSummary struct {
	Count  int     `json:"count"`
	Mean   float64 `json:"mean"`
	Passed int     `json:"passed"`
	Failed int     `json:"failed"`
	Errors int     `json:"errors"`
	// Usage is what the metric's judge calls cost, across all tests.
	Usage agenteval.Usage `json:"usage"`
	sum   float64
}

// Add counts one result.
func (s *Summary) Add(r *agenteval.Result) {
	s.Total++
	switch r.Verdict {
	case agenteval.VerdictPass:
		s.Passed++
	case agenteval.VerdictFail:
		s.Failed++
	case agenteval.VerdictError:
		s.Errored++
	case agenteval.VerdictSkip:
		s.Skipped++
	}
	s.passAtK.add(r)
	s.PassAtK = s.passAtK.summary(s.PassAtK)
	// A result's usage is everything its test spent: the agent's calls,
	// the simulated user's and the judge's, in every trial.
	s.Usage.Add(r.Usage)
	if s.Metrics == nil {
		s.Metrics = map[string]*MetricSummary{}
	}
	for _, sc := range r.Scores {
		m := s.Metrics[sc.Name]
		if m == nil {
			m = &MetricSummary{}
			s.Metrics[sc.Name] = m
		}
		// Failed judge calls cost tokens too, so usage counts every score.
		m.Usage.Add(sc.Usage)
		switch sc.Verdict {
		case agenteval.VerdictError:
			m.Errors++
			continue
		case agenteval.VerdictSkip:
			continue
		case agenteval.VerdictPass:
			m.Passed++
		case agenteval.VerdictFail:
			m.Failed++
		}
		m.Count++
		m.sum += sc.Score
		m.Mean = m.sum / float64(m.Count)
	}
}

// MetricNames lists, sorted, the score names that were graded at least
// once (scored or errored). A name only ever skipped (a turn with nothing
// to grade, a turn cut off by on_turn_failure) has no mean to show, so a
// table of means leaves it out; Metrics still holds it.
func (s *Summary) MetricNames() []string {
	out := make([]string, 0, len(s.Metrics))
	for n, m := range s.Metrics {
		if m.Count > 0 || m.Errors > 0 {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}
