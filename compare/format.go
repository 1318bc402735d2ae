package compare

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/report"
)

// Limits keep a pull-request comment readable (and under GitHub's size
// limit): the JSON format has everything.
const (
	maxTestsPerSection = 50
	maxChecksPerTest   = 12
)

var sections = []struct {
	change Change
	title  string
	icon   string
}{
	{Regressed, "Regressed", "❌"},
	{Fixed, "Fixed", "✅"},
	{New, "New", "➕"},
	{Gone, "Gone", "➖"},
	{Changed, "Changed", "↕️"},
}

// WriteJSON writes the comparison as one JSON document.
func (c *Comparison) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(c)
}

func (c *Comparison) byChange(ch Change) []*Test {
	var out []*Test
	for i := range c.Tests {
		if c.Tests[i].Change == ch {
			out = append(out, &c.Tests[i])
		}
	}
	return out
}

// name is how a test is named in the outputs: suite/id, with its target
// in brackets when a run tested several, since the test then appears once
// per target.
func (c *Comparison) name(t *Test) string {
	n := t.TestID
	if t.Suite != "" {
		n = t.Suite + "/" + t.TestID
	}
	if c.MultiTarget {
		n += " [" + targetName(t.Target) + "]"
	}
	return n
}

func targetName(t string) string {
	if t == "" {
		return "(no target)"
	}
	return t
}

// targetsLine says how the runs' targets were matched when they differ,
// or "": the targets compared, and those that only one run has.
func (c *Comparison) targetsLine() string {
	if len(c.Targets) == 0 && len(c.OnlyBase) == 0 && len(c.OnlyNew) == 0 {
		return ""
	}
	names := func(ts []string) string {
		out := make([]string, len(ts))
		for i, t := range ts {
			out[i] = targetName(t)
		}
		return strings.Join(out, ", ")
	}
	var pairs []string
	for _, p := range c.Targets {
		if p.Base == p.New {
			pairs = append(pairs, targetName(p.New))
		} else {
			pairs = append(pairs, targetName(p.Base)+" (base) with "+targetName(p.New)+" (new)")
		}
	}
	parts := []string{"no target in common"}
	if len(pairs) > 0 {
		parts[0] = "compared " + strings.Join(pairs, ", ")
	}
	if len(c.OnlyBase) > 0 {
		parts = append(parts, "only in base: "+names(c.OnlyBase))
	}
	if len(c.OnlyNew) > 0 {
		parts = append(parts, "only in new: "+names(c.OnlyNew))
	}
	return "targets: " + strings.Join(parts, "; ")
}

func fmtOutcome(o *Outcome) string {
	if o == nil {
		return "absent"
	}
	s := fmt.Sprintf("%s %.2f", o.Verdict, o.Score)
	if o.Trials > 1 {
		s += fmt.Sprintf(" (%d/%d trials)", o.Passed, o.Trials)
	}
	return s
}

func signed(x float64, format string) string {
	switch {
	case math.Abs(x) < eps:
		return "±0"
	case x > 0:
		return "+" + fmt.Sprintf(format, x)
	}
	return "−" + fmt.Sprintf(format, -x)
}

var fmtMS = report.FormatMS

func signedMS(d float64) string {
	if math.Abs(d) < 0.5 {
		return "±0"
	}
	if d > 0 {
		return "+" + fmtMS(d)
	}
	return "−" + fmtMS(-d)
}

func fmtCost(c *float64, used bool) string {
	switch {
	case !used:
		return "–"
	case c == nil:
		return "unknown"
	}
	return fmt.Sprintf("$%.4f", *c)
}

func used(u agenteval.Usage) bool { return u.Calls > 0 || u.InputTokens > 0 || u.OutputTokens > 0 }

func fmtInt(n int64) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

func sideLabel(s Side) string {
	parts := []string{}
	if s.RunID != "" && s.Label != s.RunID {
		parts = append(parts, s.RunID)
	}
	if !s.Started.IsZero() {
		parts = append(parts, s.Started.UTC().Format("2006-01-02 15:04 UTC"))
	}
	if s.Target != "" {
		parts = append(parts, "target "+s.Target)
	}
	if s.Commit != "" {
		parts = append(parts, "commit "+s.Commit[:min(10, len(s.Commit))])
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// row is one line of the totals: a name, both values and the change.
type row struct{ name, base, new, delta string }

func (c *Comparison) totals() []row {
	b, n := c.Base, c.New
	rows := []row{
		{"tests", fmt.Sprint(b.Total), fmt.Sprint(n.Total), signed(float64(n.Total-b.Total), "%.0f")},
		{"pass rate", pctS(b.PassRate), pctS(n.PassRate), signed(100*(n.PassRate-b.PassRate), "%.1f pt")},
		{"passed · failed · errors", fmt.Sprintf("%d · %d · %d", b.Passed, b.Failed, b.Errored), fmt.Sprintf("%d · %d · %d", n.Passed, n.Failed, n.Errored), ""},
	}
	for k := 0; k < max(len(b.PassAtK), len(n.PassAtK)); k++ {
		var bp, np, bh, nh float64
		var have [2]bool
		if k < len(b.PassAtK) {
			bp, bh, have[0] = b.PassAtK[k].PassAtK, b.PassAtK[k].PassHatK, true
		}
		if k < len(n.PassAtK) {
			np, nh, have[1] = n.PassAtK[k].PassAtK, n.PassAtK[k].PassHatK, true
		}
		cell := func(p, h float64, ok bool) string {
			if !ok {
				return "–"
			}
			return pctS(p) + " · " + pctS(h)
		}
		d := ""
		if have[0] && have[1] {
			d = signed(100*(np-bp), "%.1f pt") + " · " + signed(100*(nh-bh), "%.1f pt")
		}
		rows = append(rows, row{fmt.Sprintf("pass@%d · pass^%d", k+1, k+1), cell(bp, bh, have[0]), cell(np, nh, have[1]), d})
	}
	if !used(b.Usage) && !used(n.Usage) {
		// No model calls on either side: nothing to say about tokens.
		return append(rows, row{"latency (mean)", fmtMS(b.MeanMS), fmtMS(n.MeanMS), signedMS(n.MeanMS - b.MeanMS)},
			row{"latency (p95)", fmtMS(b.P95MS), fmtMS(n.P95MS), signedMS(n.P95MS - b.P95MS)})
	}
	bt, nt := b.Usage.InputTokens+b.Usage.OutputTokens, n.Usage.InputTokens+n.Usage.OutputTokens
	tokD := signed(float64(nt-bt), "%.0f")
	if bt > 0 && nt != bt {
		tokD += fmt.Sprintf(" (%s)", signed(100*float64(nt-bt)/float64(bt), "%.1f%%"))
	}
	rows = append(rows, row{"tokens", fmtInt(bt), fmtInt(nt), tokD})
	costD := ""
	if b.Usage.CostUSD != nil && n.Usage.CostUSD != nil {
		costD = signed(*n.Usage.CostUSD-*b.Usage.CostUSD, "$%.4f")
	}
	rows = append(rows, row{"cost", fmtCost(b.Usage.CostUSD, used(b.Usage)), fmtCost(n.Usage.CostUSD, used(n.Usage)), costD},
		row{"latency (mean)", fmtMS(b.MeanMS), fmtMS(n.MeanMS), signedMS(n.MeanMS - b.MeanMS)},
		row{"latency (p95)", fmtMS(b.P95MS), fmtMS(n.P95MS), signedMS(n.P95MS - b.P95MS)})
	return rows
}

func pctS(x float64) string { return fmt.Sprintf("%.1f%%", 100*x) }

func (c *Comparison) countsLine(bold func(string) string) string {
	s := c.Summary
	parts := []string{fmt.Sprintf("%d regressed", s.Regressed)}
	if s.Regressed > 0 {
		parts[0] = bold(parts[0])
	}
	parts = append(parts, fmt.Sprintf("%d fixed", s.Fixed), fmt.Sprintf("%d new", s.New), fmt.Sprintf("%d gone", s.Gone),
		fmt.Sprintf("%d changed", s.Changed), fmt.Sprintf("%d unchanged", s.Unchanged))
	return strings.Join(parts, " · ")
}

// notes explain what the numbers do not say.
func (c *Comparison) notes() []string {
	s := c.Summary
	var out []string
	if s.Noisy > 0 {
		out = append(out, fmt.Sprintf("%s within noise for the number of trials run (Fisher's exact test, p ≥ %.2f): run more trials before trusting %s.",
			plural(s.Noisy, "regression or fix is", "regressions and fixes are"), noiseP, plural(s.Noisy, "it", "them")))
	}
	if s.SingleTrial > 0 {
		out = append(out, fmt.Sprintf("%s on one trial; with a non-deterministic agent, --trials N measures how often a test passes.",
			plural(s.SingleTrial, "regression rests", "regressions rest")))
	}
	if s.Ignored > 0 {
		out = append(out, fmt.Sprintf("%s smaller than --min-delta %.2f %s.", plural(s.Ignored, "drop", "drops"), c.MinDelta,
			pick(s.Ignored, "is not counted as a regression", "are not counted as regressions")))
	}
	if c.Base.Total > 0 && c.New.Total > 0 && c.Summary.Unchanged+c.Summary.Changed+c.Summary.Regressed+c.Summary.Fixed == 0 {
		out = append(out, "The runs have no test in common: are they runs of the same suites?")
	}
	return out
}

// WriteTable writes the comparison for a terminal.
func (c *Comparison) WriteTable(w io.Writer, color bool) error {
	bw := bufio.NewWriter(w)
	paint := func(code, s string) string {
		if !color {
			return s
		}
		return code + s + "\x1b[0m"
	}
	red, green, dim, bold := "\x1b[31m", "\x1b[32m", "\x1b[2m", "\x1b[1m"
	fmt.Fprintf(bw, "base %s%s\nnew  %s%s\n", paint(bold, c.Base.Label), sideLabel(c.Base), paint(bold, c.New.Label), sideLabel(c.New))
	if l := c.targetsLine(); l != "" {
		fmt.Fprintln(bw, l)
	}
	fmt.Fprintln(bw)
	rows := c.totals()
	w1, w2, w3 := 0, 0, 0
	for _, r := range rows {
		w1, w2, w3 = max(w1, len([]rune(r.name))), max(w2, len([]rune(r.base))), max(w3, len([]rune(r.new)))
	}
	for _, r := range rows {
		fmt.Fprintf(bw, "  %s  %s → %s  %s\n", padR(r.name, w1), padL(r.base, w2), padL(r.new, w3), paint(dim, r.delta))
	}
	fmt.Fprintf(bw, "\n%s\n", c.countsLine(func(s string) string { return paint(red+bold, s) }))
	for _, sec := range sections {
		tests := c.byChange(sec.change)
		if len(tests) == 0 {
			continue
		}
		col := dim
		switch sec.change {
		case Regressed:
			col = red
		case Fixed:
			col = green
		}
		fmt.Fprintf(bw, "\n%s\n", paint(col+bold, strings.ToUpper(sec.title)))
		for i, t := range tests {
			if i == maxTestsPerSection {
				fmt.Fprintf(bw, "  … and %d more (--format json lists them all)\n", len(tests)-i)
				break
			}
			line := fmt.Sprintf("  %s  %s → %s", c.name(t), fmtOutcome(t.Base), fmtOutcome(t.New))
			if t.Base != nil && t.New != nil {
				line += "  " + paint(dim, deltaNote(t))
			}
			fmt.Fprintln(bw, line)
			for _, note := range []string{t.Noise, t.Ignored} {
				if note != "" {
					fmt.Fprintf(bw, "      %s\n", paint(dim, note))
				}
			}
			if t.New != nil && t.New.Error != "" && sec.change == Regressed {
				fmt.Fprintf(bw, "      %s\n", paint(red, "error: "+t.New.Error))
			}
			for j, ch := range t.Checks {
				if j == maxChecksPerTest {
					fmt.Fprintf(bw, "      … %d more changed checks\n", len(t.Checks)-j)
					break
				}
				fmt.Fprintf(bw, "      %s: %s → %s\n", ch.Path, checkCell(ch.Base), checkCell(ch.New))
				if ch.Base != nil && ch.New != nil && ch.Base.Reason != ch.New.Reason {
					fmt.Fprintf(bw, "          %s %s\n          %s %s\n", paint(dim, "base:"), oneLine(ch.Base.Reason), paint(dim, "new: "), oneLine(ch.New.Reason))
				}
			}
		}
	}
	if notes := c.notes(); len(notes) > 0 {
		fmt.Fprintln(bw)
		for _, n := range notes {
			fmt.Fprintf(bw, "%s\n", paint(dim, "note: "+n))
		}
	}
	return bw.Flush()
}

func deltaNote(t *Test) string {
	s := "Δ score " + signed(t.Delta, "%.2f")
	if t.RateDelta != nil {
		s += ", Δ pass rate " + signed(100**t.RateDelta, "%.0f pt")
	}
	if t.Base.Tokens != t.New.Tokens {
		s += ", Δ tokens " + signed(float64(t.New.Tokens-t.Base.Tokens), "%.0f")
	}
	if d := t.New.DurationMS - t.Base.DurationMS; math.Abs(d) >= 0.5 {
		s += ", Δ latency " + signedMS(d)
	}
	return s
}

func checkCell(s *CheckSide) string {
	if s == nil {
		return "absent"
	}
	return fmt.Sprintf("%s %.2f", s.Verdict, s.Score)
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 300 {
		return string(r[:299]) + "…"
	}
	if s == "" {
		return "(no reason given)"
	}
	return s
}

// plural is "n one" or "n many".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

func pick(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func padR(s string, n int) string { return s + strings.Repeat(" ", max(0, n-len([]rune(s)))) }
func padL(s string, n int) string { return strings.Repeat(" ", max(0, n-len([]rune(s)))) + s }

// md escapes text for a Markdown table cell on GitHub: no markup, no
// HTML, no line breaks that would end the row.
func md(s string) string {
	if strings.TrimSpace(s) == "" {
		return ""
	}
	s = oneLine(s)
	r := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "|", "\\|", "`", "\\`", "*", "\\*", "_", "\\_", "[", "\\[", "]", "\\]", "#", "\\#")
	return r.Replace(s)
}

// WriteMarkdown writes the comparison as Markdown for a pull-request
// comment or a GitHub Actions job summary.
func (c *Comparison) WriteMarkdown(w io.Writer) error {
	bw := bufio.NewWriter(w)
	verdict := "✅ no regressions"
	if c.Summary.Regressed > 0 {
		verdict = fmt.Sprintf("❌ %d regressed", c.Summary.Regressed)
	}
	fmt.Fprintf(bw, "### agenteval compare: %s\n\n", verdict)
	fmt.Fprintf(bw, "**base** %s %s → **new** %s %s\n\n", md(c.Base.Label), md(sideLabel(c.Base)), md(c.New.Label), md(sideLabel(c.New)))
	if l := c.targetsLine(); l != "" {
		fmt.Fprintf(bw, "%s\n\n", md(l))
	}
	fmt.Fprintln(bw, "| | base | new | change |")
	fmt.Fprintln(bw, "|---|---:|---:|---:|")
	for _, r := range c.totals() {
		fmt.Fprintf(bw, "| %s | %s | %s | %s |\n", r.name, r.base, r.new, r.delta)
	}
	fmt.Fprintf(bw, "\n%s\n", c.countsLine(func(s string) string { return "**" + s + "**" }))
	for _, sec := range sections {
		tests := c.byChange(sec.change)
		if len(tests) == 0 {
			continue
		}
		fmt.Fprintf(bw, "\n#### %s %s (%d)\n\n", sec.icon, sec.title, len(tests))
		fmt.Fprintln(bw, "| test | base | new | change |")
		fmt.Fprintln(bw, "|---|---|---|---|")
		var details []*Test
		for i, t := range tests {
			if i == maxTestsPerSection {
				fmt.Fprintf(bw, "| … and %d more | | | |\n", len(tests)-i)
				break
			}
			note := ""
			if t.Base != nil && t.New != nil {
				note = deltaNote(t)
				if t.Noise != "" {
					note += "; " + t.Noise
				}
				if t.Ignored != "" {
					note += "; " + t.Ignored
				}
			}
			fmt.Fprintf(bw, "| %s | %s | %s | %s |\n", md(c.name(t)), md(fmtOutcome(t.Base)), md(fmtOutcome(t.New)), md(note))
			if len(t.Checks) > 0 || (t.New != nil && t.New.Error != "") {
				details = append(details, t)
			}
		}
		for _, t := range details {
			fmt.Fprintf(bw, "\n<details><summary>%s: what changed</summary>\n\n", md(c.name(t)))
			if t.New != nil && t.New.Error != "" {
				fmt.Fprintf(bw, "Error: %s\n\n", md(t.New.Error))
			}
			if len(t.Checks) > 0 {
				fmt.Fprintln(bw, "| check | base | new |")
				fmt.Fprintln(bw, "|---|---|---|")
				for j, ch := range t.Checks {
					if j == maxChecksPerTest {
						fmt.Fprintf(bw, "| … %d more | | |\n", len(t.Checks)-j)
						break
					}
					fmt.Fprintf(bw, "| %s | %s | %s |\n", md(ch.Path), mdCheck(ch.Base), mdCheck(ch.New))
				}
			}
			fmt.Fprintln(bw, "\n</details>")
		}
	}
	if notes := c.notes(); len(notes) > 0 {
		fmt.Fprintln(bw)
		for _, n := range notes {
			fmt.Fprintf(bw, "> %s\n", md(n))
		}
	}
	return bw.Flush()
}

func mdCheck(s *CheckSide) string {
	if s == nil {
		return "absent"
	}
	out := fmt.Sprintf("%s %.2f", s.Verdict, s.Score)
	if s.Reason != "" {
		out += ": " + md(s.Reason)
	}
	return out
}
