package report

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/agenteval/agenteval"
)

// TranscriptOptions configure WriteTranscript.
type TranscriptOptions struct {
	Color bool
	// Trial picks a trial's transcript (1-based); 0 shows the test's own.
	Trial int
	// Full shows system prompts whole instead of their first line.
	Full bool
	// Width is the terminal's width for rules; 0 means 80.
	Width int
}

// WriteTranscript prints a test as a person reads it in a terminal: each
// turn's messages and tool calls, then that turn's verdict and the
// graders' reasons and evidence; then the checks of the whole
// conversation.
func WriteTranscript(w io.Writer, r *agenteval.Result, opt TranscriptOptions) error {
	bw := bufio.NewWriter(w)
	t := &tableWriter{opt: TableOptions{Color: opt.Color}}
	width := opt.Width
	if width <= 0 {
		width = 80
	}
	out, scores, sim, errText := r.Output, r.Scores, r.Simulation, r.Error
	head := fmt.Sprintf("%s · %s %.2f", r.TestID, t.verdict(r.Verdict, 0), r.Score)
	var facts []string
	if r.Suite != "" {
		facts = append(facts, "suite "+r.Suite)
	}
	if r.Target != "" {
		facts = append(facts, "target "+r.Target)
	}
	facts = append(facts, FormatMS(r.DurationMS))
	if u := r.Usage; u != nil && (u.InputTokens+u.OutputTokens) > 0 {
		facts = append(facts, fmt.Sprintf("%d tokens", u.InputTokens+u.OutputTokens))
	}
	if len(r.Tags) > 0 {
		facts = append(facts, "tags "+strings.Join(r.Tags, ", "))
	}
	fmt.Fprintln(bw, t.paint(ansiBold, head)+"  "+t.paint(ansiDim, strings.Join(facts, " · ")))
	if n := len(r.Trials); n > 1 {
		passed := 0
		for _, tr := range r.Trials {
			if tr.Verdict == agenteval.VerdictPass {
				passed++
			}
		}
		line := fmt.Sprintf("%d of %d trials passed", passed, n)
		if note := trialsNote(r); note != "" {
			line += " (" + note + ")"
		}
		if opt.Trial > 0 {
			if opt.Trial > n {
				return fmt.Errorf("test %s ran %d trials; there is no trial %d", r.TestID, n, opt.Trial)
			}
			tr := r.Trials[opt.Trial-1]
			out, scores, sim, errText = tr.Output, tr.Scores, tr.Simulation, tr.Error
			line += fmt.Sprintf("; showing trial %d: %s %.2f", opt.Trial, t.verdict(tr.Verdict, 0), tr.Score)
		} else {
			line += "; showing the test's representative trial (--trial N shows another)"
		}
		fmt.Fprintln(bw, line)
	} else if opt.Trial > 1 {
		return fmt.Errorf("test %s ran one trial; there is no trial %d", r.TestID, opt.Trial)
	}
	if errText != "" {
		for _, l := range strings.Split(errText, "\n") {
			fmt.Fprintln(bw, t.paint(ansiYellow, "error: "+l))
		}
	}
	if sim != nil {
		line := fmt.Sprintf("simulated user (%s): %d turns, ended by %s", sim.Model, sim.Turns, strings.ReplaceAll(sim.EndReason, "_", " "))
		if sim.Detail != "" {
			line += ": " + sim.Detail
		}
		fmt.Fprintln(bw, t.paint(ansiDim, line))
	}

	turnScores := map[int]agenteval.Score{}
	var rest []agenteval.Score
	maxTurn := 0
	for _, s := range scores {
		if isTurn(s.Name) {
			k, _ := strconv.Atoi(s.Name[len("turn-"):])
			turnScores[k] = s
			maxTurn = max(maxTurn, k)
			continue
		}
		rest = append(rest, s)
	}
	starts := TurnStarts(out, scores)
	turnAt := map[int]int{}
	for k, i := range starts {
		turnAt[i] = k + 1
	}
	results := map[string]agenteval.Message{}
	for _, m := range out {
		if m.Role == agenteval.RoleTool && m.ToolCallID != "" {
			results[m.ToolCallID] = m
		}
	}
	shown := map[string]bool{}
	rule := func(title string, s *agenteval.Score) {
		right := ""
		if s != nil {
			right = fmt.Sprintf(" %s %.2f", t.verdict(s.Verdict, 0), s.Score)
			if s.Verdict == agenteval.VerdictSkip {
				right = " " + t.verdict(s.Verdict, 0)
			}
		}
		plainRight := len([]rune(stripANSI(right)))
		n := max(3, width-len([]rune(title))-plainRight-4)
		fmt.Fprintf(bw, "\n%s %s %s%s\n", t.paint(ansiDim, "──"), t.paint(ansiBold, title), t.paint(ansiDim, strings.Repeat("─", n)), right)
	}
	cur := 0
	closeTurn := func() {
		if s, ok := turnScores[cur]; ok && cur > 0 {
			writeChecks(bw, t, []agenteval.Score{s})
		}
	}
	for i, m := range out {
		if k, ok := turnAt[i]; ok {
			closeTurn()
			cur = k
			s, ok := turnScores[k]
			if ok {
				rule(fmt.Sprintf("Turn %d", k), &s)
			} else {
				rule(fmt.Sprintf("Turn %d", k), nil)
			}
		}
		if m.Role == agenteval.RoleTool && shown[m.ToolCallID] {
			continue
		}
		writeMessage(bw, t, m, results, shown, opt.Full)
	}
	closeTurn()
	for k := len(starts) + 1; k <= maxTurn; k++ {
		if s, ok := turnScores[k]; ok {
			rule(fmt.Sprintf("Turn %d", k), &s)
			writeChecks(bw, t, []agenteval.Score{s})
		}
	}
	if len(rest) > 0 {
		title := "Checks"
		if len(starts) > 0 {
			title = "Whole conversation"
		}
		rule(title, nil)
		writeChecks(bw, t, rest)
	}
	return bw.Flush()
}

// FormatMS writes milliseconds for people: 850 ms, 2.3 s, 1m05s.
func FormatMS(ms float64) string {
	switch {
	case ms < 1000:
		return fmt.Sprintf("%.0f ms", ms)
	case ms < 60000:
		return fmt.Sprintf("%.1f s", ms/1000)
	}
	return fmt.Sprintf("%dm%02ds", int(ms/60000), int(ms/1000)%60)
}

func stripANSI(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == 0x1b {
			for i < len(s) && s[i] != 'm' {
				i++
			}
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// indent writes text under a label, continuation lines lined up.
func indent(w io.Writer, label, text string) {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	for i, l := range lines {
		if i == 0 {
			fmt.Fprintf(w, "  %s%s\n", label, l)
			continue
		}
		fmt.Fprintf(w, "  %s%s\n", strings.Repeat(" ", len([]rune(stripANSI(label)))), l)
	}
}

func writeMessage(w io.Writer, t *tableWriter, m agenteval.Message, results map[string]agenteval.Message, shown map[string]bool, full bool) {
	const lw = 8
	switch m.Role {
	case agenteval.RoleSystem:
		text := m.Content
		if !full {
			first, _, cut := strings.Cut(text, "\n")
			if r := []rune(first); len(r) > 100 {
				first, cut = string(r[:99]), true
			}
			if cut {
				first += "… (--full shows it all)"
			}
			text = first
		}
		indent(w, t.paint(ansiDim, pad("system", lw)), t.paint(ansiDim, text))
		return
	case agenteval.RoleUser:
		indent(w, t.paint(ansiBold, pad("user", lw)), m.Content)
		return
	case agenteval.RoleTool:
		label := "tool"
		if m.Name != "" {
			label = m.Name
		}
		indent(w, t.paint(ansiDim, pad(label, lw)), "← "+m.Content)
		return
	}
	label := t.paint(ansiBold, pad("agent", lw))
	if m.Content != "" {
		indent(w, label, m.Content)
		label = pad("", lw)
	}
	for _, c := range m.ToolCalls {
		args := c.RawArgs
		if c.Args != nil {
			b, _ := json.Marshal(c.Args)
			args = string(b)
		}
		indent(w, label, t.paint(ansiBold, "→ "+c.Name)+" "+args)
		label = pad("", lw)
		if res, ok := results[c.ID]; ok && c.ID != "" {
			shown[c.ID] = true
			indent(w, pad("", lw+2), t.paint(ansiDim, "← ")+res.Content)
		}
	}
}

func (t *tableWriter) mark(v agenteval.Verdict) string {
	switch v {
	case agenteval.VerdictPass:
		return t.paint(ansiGreen, "✓")
	case agenteval.VerdictFail:
		return t.paint(ansiRed, "✗")
	case agenteval.VerdictError:
		return t.paint(ansiYellow, "!")
	}
	return t.paint(ansiDim, "–")
}

// writeChecks prints scores with their reasons and evidence; a composite
// score's graders are listed under it.
func writeChecks(w io.Writer, t *tableWriter, scores []agenteval.Score) {
	var one func(s agenteval.Score, depth int)
	one = func(s agenteval.Score, depth int) {
		ind := strings.Repeat("    ", depth)
		if depth == 0 && len(s.Scores) > 0 {
			for _, c := range s.Scores {
				one(c, depth)
			}
			return
		}
		line := fmt.Sprintf("  %s%s %s %s", ind, t.mark(s.Verdict), s.Name, t.paint(ansiDim, cellFor(s)))
		if s.Required {
			line += t.paint(ansiDim, " required")
		}
		if s.Reason != "" {
			line += "  " + s.Reason
		}
		fmt.Fprintln(w, line)
		for _, c := range s.Scores {
			one(c, depth+1)
		}
		if len(s.Scores) > 0 {
			return
		}
		for _, a := range s.Assertions {
			v := agenteval.VerdictFail
			if a.Passed {
				v = agenteval.VerdictPass
			}
			line := fmt.Sprintf("  %s    %s %s", ind, t.mark(v), a.Text)
			if a.Evidence != "" && a.Evidence != s.Reason {
				line += t.paint(ansiDim, " — "+a.Evidence)
			}
			fmt.Fprintln(w, line)
		}
	}
	for _, s := range scores {
		one(s, 0)
	}
}
