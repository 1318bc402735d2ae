package report

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/results"
)

type markdownWriter struct {
	bw       *bufio.Writer
	header   *results.Header
	failures []*agenteval.Result
	dropped  int
	order    resultOrder
	// usage sums the results' own usage (agent, simulated user and
	// judge), where the summary's counts the graders'.
	usage agenteval.Usage
}

// maxMarkdownFailures bounds the failures listed, so the page stays
// readable (and fits a pull-request comment).
const maxMarkdownFailures = 50

// NewMarkdown writes a run's summary and its failures as Markdown, for a
// pull-request comment or a CI job summary. It holds the failing results
// until Close, and lists the first 50 in the suite's order.
func NewMarkdown(w io.Writer) Writer {
	return &markdownWriter{bw: bufio.NewWriter(w), order: newOrder(nil)}
}

func (m *markdownWriter) Start(h *results.Header) error {
	m.header = h
	m.order = newOrder(h)
	return nil
}

func (m *markdownWriter) Write(r *agenteval.Result) error {
	m.usage.Add(r.Usage)
	if r.Verdict == agenteval.VerdictPass || r.Verdict == agenteval.VerdictSkip {
		return nil
	}
	// Only what the page shows is kept: no transcript.
	c := *r
	c.Output, c.Trials = nil, nil
	m.failures = append(m.failures, &c)
	if len(m.failures) == 2*maxMarkdownFailures {
		// Which failures are listed must not depend on which finished
		// first: keep the first ones in order, a batch at a time.
		m.keepFirst()
	}
	return nil
}

// keepFirst sorts the failures held and drops those past the ones listed.
func (m *markdownWriter) keepFirst() {
	slices.SortStableFunc(m.failures, func(a, b *agenteval.Result) int {
		return m.order.compare(resultKey{a.Suite, a.TestID, a.Target}, resultKey{b.Suite, b.TestID, b.Target})
	})
	if len(m.failures) > maxMarkdownFailures {
		m.dropped += len(m.failures) - maxMarkdownFailures
		clear(m.failures[maxMarkdownFailures:])
		m.failures = m.failures[:maxMarkdownFailures]
	}
}

// mdText escapes text for Markdown on GitHub: no markup, no HTML, one line.
func mdText(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	r := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "|", "\\|", "`", "\\`", "*", "\\*", "_", "\\_", "[", "\\[", "]", "\\]", "#", "\\#")
	return r.Replace(s)
}

func (m *markdownWriter) Close(sum *results.Summary) error {
	if sum == nil {
		sum = &results.Summary{}
	}
	rate := 0.0
	if sum.Total > 0 {
		rate = float64(sum.Passed) / float64(sum.Total)
	}
	icon := "✅"
	if sum.Failed+sum.Errored > 0 {
		icon = "❌"
	}
	fmt.Fprintf(m.bw, "### %s agenteval: %d of %d tests passed (%.1f%%)\n\n", icon, sum.Passed, sum.Total, 100*rate)
	if h := m.header; h != nil {
		var facts []string
		if h.RunID != "" {
			facts = append(facts, "run "+mdText(h.RunID))
		}
		if names := h.SuiteNames(); len(names) > 0 {
			facts = append(facts, mdText(strings.Join(names, ", ")))
		}
		if h.Target != "" {
			facts = append(facts, "target "+mdText(h.Target))
		}
		if h.Judge != "" {
			facts = append(facts, "judge "+mdText(h.Judge))
		}
		if !h.Started.IsZero() {
			facts = append(facts, h.Started.UTC().Format("2006-01-02 15:04 UTC"))
		}
		fmt.Fprintf(m.bw, "%s\n\n", strings.Join(facts, " · "))
	}
	fmt.Fprintln(m.bw, "| passed | failed | errors | skipped | tokens | cost | duration |")
	fmt.Fprintln(m.bw, "|---:|---:|---:|---:|---:|---:|---:|")
	u := m.usage
	cost := "–"
	if u.Calls > 0 || u.InputTokens+u.OutputTokens > 0 {
		cost = "unknown"
		if u.CostUSD != nil {
			cost = fmt.Sprintf("$%.4f", *u.CostUSD)
		}
	}
	fmt.Fprintf(m.bw, "| %d | %d | %d | %d | %d | %s | %s |\n", sum.Passed, sum.Failed, sum.Errored, sum.Skipped,
		u.InputTokens+u.OutputTokens, cost, FormatMS(sum.DurationMS))
	if len(sum.PassAtK) > 0 {
		fmt.Fprintln(m.bw, "\n| k | pass@k | pass^k |\n|---:|---:|---:|")
		for _, p := range sum.PassAtK {
			fmt.Fprintf(m.bw, "| %d | %.1f%% | %.1f%% |\n", p.K, 100*p.PassAtK, 100*p.PassHatK)
		}
	}
	m.keepFirst()
	if len(m.failures) > 0 {
		fmt.Fprintf(m.bw, "\n#### Failures\n\n| test | verdict | score | why |\n|---|---|---:|---|\n")
		// A run of several targets holds a test once per target.
		multi := m.header != nil && len(m.header.TargetNames()) > 1
		for _, r := range m.failures {
			name := r.TestID
			if r.Suite != "" {
				name = r.Suite + "/" + r.TestID
			}
			if multi {
				name += " [" + r.Target + "]"
			}
			fmt.Fprintf(m.bw, "| %s | %s | %.2f | %s |\n", mdText(name), r.Verdict, r.Score, mdText(FirstFailure(r)))
		}
		if m.dropped > 0 {
			fmt.Fprintf(m.bw, "| … and %d more | | | |\n", m.dropped)
		}
	}
	return m.bw.Flush()
}
