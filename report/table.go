package report

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/results"
)

// TableOptions configures the terminal table.
type TableOptions struct {
	// Metrics fixes the score columns and their order; scores with other
	// names are shown only in failure details.
	Metrics []string
	// Color adds ANSI colours to verdicts.
	Color bool
	// Details is how many failed assertions to show under a failing test;
	// 0 means 3, a negative number shows none.
	Details int
	// NoMetricSummary leaves out the per-score means at the end, for runs
	// whose scores are turns rather than metrics.
	NoMetricSummary bool
	// Targets are the run's targets, for a run whose header is not at
	// hand; otherwise Start reads them from the header. With more than
	// one, each row names its target: the same test appears once per
	// target.
	Targets []string
}

type tableWriter struct {
	bw      *bufio.Writer
	opt     TableOptions
	idWidth int
	widths  []int
	header  bool
	// targetWidth is the TARGET column's, 0 when the run has one target.
	targetWidth int
	// hold keeps the rows, each with what follows it, until Close, which
	// writes them in the suite's order; order is that order.
	hold  bool
	held  []heldRow
	order resultOrder
}

type heldRow struct {
	key  resultKey
	text string
}

// NewTable writes a human-readable table: a row per test, with the reasons
// for each failure under its row, and a summary at the end. On a terminal,
// where a person watches a run, each row comes as its test finishes;
// anywhere else (a file, a pipe, a CI log) the rows wait for Close and
// come in the suite's order (see InOrder), so that two runs of a suite
// print alike.
func NewTable(w io.Writer, opt TableOptions) Writer {
	t := &tableWriter{bw: bufio.NewWriter(w), opt: opt, idWidth: 24, hold: !isTerminal(w), order: newOrder(nil)}
	if t.opt.Details == 0 {
		t.opt.Details = 3
	}
	for _, m := range opt.Metrics {
		t.widths = append(t.widths, max(utf8.RuneCountInString(m), 5))
	}
	t.setTargets(opt.Targets)
	t.order.rankTargets(opt.Targets)
	return t
}

// maxTargetWidth bounds the TARGET column; longer names are clipped.
const maxTargetWidth = 24

// setTargets adds the TARGET column when the run has several targets.
func (t *tableWriter) setTargets(names []string) {
	if len(names) < 2 {
		return
	}
	w := len("TARGET")
	for _, n := range names {
		w = max(w, utf8.RuneCountInString(n))
	}
	t.targetWidth = min(w, maxTargetWidth)
}

// Start reads the run's targets from its header, unless the options gave
// them.
func (t *tableWriter) Start(h *results.Header) error {
	if h != nil && len(t.opt.Targets) == 0 && !t.header {
		t.setTargets(h.TargetNames())
	}
	if h != nil {
		t.order = newOrder(h)
		if len(t.opt.Targets) > 0 {
			// The options' targets are the ones the rows show.
			clear(t.order.targets)
			t.order.rankTargets(t.opt.Targets)
		}
	}
	return nil
}

// isTerminal reports whether w is a terminal (a character device; the
// standard library cannot tell it from /dev/null, where order is moot).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// InOrder makes w list results in the suite's order wherever it writes:
// the table on a terminal would otherwise print each row as its test
// finishes, which suits a run being watched, not one read back (show,
// report). It returns w, and must come before w's first result. The
// other writers list results in that order already, except jsonl and
// json, which stream them as they come.
func InOrder(w Writer) Writer {
	switch w := w.(type) {
	case *tableWriter:
		w.hold = true
	case Multi:
		for _, x := range w {
			InOrder(x)
		}
	}
	return w
}

const (
	ansiRed    = "\x1b[31m"
	ansiGreen  = "\x1b[32m"
	ansiYellow = "\x1b[33m"
	ansiDim    = "\x1b[2m"
	ansiBold   = "\x1b[1m"
	ansiReset  = "\x1b[0m"
)

func (t *tableWriter) paint(color, s string) string {
	if !t.opt.Color {
		return s
	}
	return color + s + ansiReset
}

// verdict renders v padded to width runes; the padding goes outside the
// colour codes, so columns after it line up with colour on or off.
func (t *tableWriter) verdict(v agenteval.Verdict, width int) string {
	text, color := string(v), ansiDim
	switch v {
	case agenteval.VerdictPass:
		text, color = "pass", ansiGreen
	case agenteval.VerdictFail:
		text, color = "FAIL", ansiRed
	case agenteval.VerdictError:
		text, color = "ERROR", ansiYellow
	}
	return t.paint(color, text) + pad("", width-utf8.RuneCountInString(text))
}

func pad(s string, n int) string {
	if k := utf8.RuneCountInString(s); k < n {
		return s + strings.Repeat(" ", n-k)
	}
	return s
}

func padLeft(s string, n int) string {
	if k := utf8.RuneCountInString(s); k < n {
		return strings.Repeat(" ", n-k) + s
	}
	return s
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

func (t *tableWriter) Write(r *agenteval.Result) error {
	if !t.hold {
		t.columns(t.bw)
		t.row(t.bw, r)
		return t.bw.Flush()
	}
	// The row is kept as text, not the result with its transcript.
	var b strings.Builder
	t.row(&b, r)
	t.held = append(t.held, heldRow{key: resultKey{r.Suite, r.TestID, r.Target}, text: b.String()})
	return nil
}

// columns writes the columns' names, once, before the first row.
func (t *tableWriter) columns(w io.Writer) {
	if !t.header {
		t.header = true
		var b strings.Builder
		b.WriteString(pad("TEST", t.idWidth))
		if t.targetWidth > 0 {
			b.WriteString("  " + pad("TARGET", t.targetWidth))
		}
		for i, m := range t.opt.Metrics {
			b.WriteString("  ")
			b.WriteString(padLeft(m, t.widths[i]))
		}
		b.WriteString("  SCORE  VERDICT")
		fmt.Fprintln(w, t.paint(ansiBold, b.String()))
	}
}

// row writes a result's row, and under it why it did not pass and any
// injection flags.
func (t *tableWriter) row(w io.Writer, r *agenteval.Result) {
	byName := make(map[string]agenteval.Score, len(r.Scores))
	for _, s := range r.Scores {
		byName[s.Name] = s
	}
	var b strings.Builder
	b.WriteString(pad(clip(r.TestID, t.idWidth), t.idWidth))
	if t.targetWidth > 0 {
		b.WriteString("  " + pad(clip(r.Target, t.targetWidth), t.targetWidth))
	}
	for i, m := range t.opt.Metrics {
		cell := "-"
		if s, ok := byName[m]; ok {
			cell = cellFor(s)
		}
		b.WriteString("  ")
		b.WriteString(padLeft(cell, t.widths[i]))
	}
	score := fmt.Sprintf("%.3f", r.Score)
	if r.ExecutionStatus == agenteval.StatusExecutionError && len(r.Scores) == 0 {
		score = "-"
	}
	b.WriteString("  " + padLeft(score, 5) + "  ")
	if note := trialsNote(r); note != "" {
		b.WriteString(t.verdict(r.Verdict, len("ERROR")) + "  " + t.paint(ansiDim, note))
	} else {
		b.WriteString(t.verdict(r.Verdict, 0))
	}
	fmt.Fprintln(w, b.String())
	if r.Verdict != agenteval.VerdictPass && t.opt.Details > 0 {
		t.details(w, r)
	}
	t.injections(w, r)
}

// writeHeld writes the rows held so far in the suite's order.
func (t *tableWriter) writeHeld() {
	if len(t.held) == 0 {
		return
	}
	slices.SortStableFunc(t.held, func(a, b heldRow) int { return t.order.compare(a.key, b.key) })
	t.columns(t.bw)
	for _, h := range t.held {
		t.bw.WriteString(h.text)
	}
	t.held = nil
}

func cellFor(s agenteval.Score) string {
	switch s.Verdict {
	case agenteval.VerdictError:
		return "error"
	case agenteval.VerdictSkip:
		return "skip"
	}
	return fmt.Sprintf("%.3f", s.Score)
}

// details prints why a test did not pass: its error, and for each score that
// did not pass, the reason and the first few failed assertions.
func (t *tableWriter) details(w io.Writer, r *agenteval.Result) {
	if sim := r.Simulation; sim != nil {
		turns := "turns"
		if sim.Turns == 1 {
			turns = "turn"
		}
		line := fmt.Sprintf("simulated user (%s): %d %s, ended by %s", sim.Model, sim.Turns, turns, strings.ReplaceAll(sim.EndReason, "_", " "))
		if sim.Detail != "" {
			line += ": " + sim.Detail
		}
		fmt.Fprintf(w, "    %s\n", t.paint(ansiDim, clip(line, 200)))
	}
	if r.Error != "" && len(r.Scores) == 0 {
		for _, line := range strings.Split(r.Error, "\n") {
			fmt.Fprintf(w, "    %s\n", t.paint(ansiYellow, line))
		}
		return
	}
	for _, s := range r.Scores {
		if s.Verdict == agenteval.VerdictPass || s.Verdict == agenteval.VerdictSkip {
			continue
		}
		mark := t.paint(ansiRed, "✗")
		if s.Verdict == agenteval.VerdictError {
			mark = t.paint(ansiYellow, "!")
		}
		if s.Reason == "" {
			// AgentV's graders give no reason, only their assertions.
			fmt.Fprintf(w, "    %s %s %s\n", mark, s.Name, cellFor(s))
		} else {
			fmt.Fprintf(w, "    %s %s %s: %s\n", mark, s.Name, cellFor(s), s.Reason)
		}
		shown := 0
		for _, a := range s.Assertions {
			if a.Passed {
				continue
			}
			if shown == t.opt.Details {
				fmt.Fprintf(w, "        %s\n", t.paint(ansiDim, "…"))
				break
			}
			shown++
			line := a.Text
			if a.Evidence != "" {
				line += ": " + a.Evidence
			}
			fmt.Fprintf(w, "        %s\n", t.paint(ansiDim, clip(line, 200)))
		}
	}
}

func (t *tableWriter) Close(sum *results.Summary) error {
	t.writeHeld()
	if sum == nil {
		return t.bw.Flush()
	}
	if sum.Total == 0 {
		fmt.Fprintln(t.bw, "no tests")
		return t.bw.Flush()
	}
	parts := []string{t.paint(ansiGreen, fmt.Sprintf("%d passed", sum.Passed))}
	if sum.Failed > 0 {
		parts = append(parts, t.paint(ansiRed, fmt.Sprintf("%d failed", sum.Failed)))
	}
	if sum.Errored > 0 {
		parts = append(parts, t.paint(ansiYellow, fmt.Sprintf("%d %s", sum.Errored, map[bool]string{true: "error", false: "errors"}[sum.Errored == 1])))
	}
	if sum.Skipped > 0 {
		parts = append(parts, fmt.Sprintf("%d skipped", sum.Skipped))
	}
	fmt.Fprintf(t.bw, "\n%d %s: %s\n", sum.Total, map[bool]string{true: "test", false: "tests"}[sum.Total == 1], strings.Join(parts, ", "))
	for _, line := range passAtKLines(sum.PassAtK) {
		fmt.Fprintf(t.bw, "  %s\n", line)
	}
	names := t.opt.Metrics
	if len(names) == 0 && !t.opt.NoMetricSummary {
		names = sum.MetricNames()
	}
	w := 0
	for _, n := range names {
		w = max(w, utf8.RuneCountInString(n))
	}
	for _, n := range names {
		m := sum.Metrics[n]
		if m == nil {
			continue
		}
		line := fmt.Sprintf("  %s  mean %.3f  passed %d/%d", pad(n, w), m.Mean, m.Passed, m.Count+m.Errors)
		if m.Errors > 0 {
			line += fmt.Sprintf("  errors %d", m.Errors)
		}
		fmt.Fprintln(t.bw, line)
	}
	if u := UsageLine(sum.Usage); u != "" {
		fmt.Fprintf(t.bw, "  %s\n", u)
	}
	return t.bw.Flush()
}
