package suite

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/agenteval/agenteval"
)

// What a JSONL file holds.
const (
	// JSONLTests is AgentV's JSONL eval format: one test per line.
	JSONLTests = "tests"
	// JSONLSamples is recorded conversations: Ragas samples or OpenAI
	// messages rows, for agenteval score.
	JSONLSamples = "samples"
)

// testFields mark a JSONL line as a test; sampleFields as a recorded
// conversation.
var (
	testFields   = []string{"input", "criteria", "vars", "assertions", "assert", "expected_output", "turns", "input_files", "expected_outcome", "conversation_id"}
	sampleFields = []string{"user_input", "messages", "reference_tool_calls", "reference_topics", "response", "retrieved_contexts"}
)

// SniffJSONL says what a JSONL file holds, from its first lines: AgentV
// tests (JSONLTests) or recorded conversations (JSONLSamples, the
// default).
func SniffJSONL(data []byte) string {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	tests, samples := 0, 0
	for n := 0; sc.Scan() && n < 20; {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		n++
		var m map[string]json.RawMessage
		if json.Unmarshal(line, &m) != nil {
			continue
		}
		for _, k := range sampleFields {
			if _, ok := m[k]; ok {
				samples++
				break
			}
		}
		for _, k := range testFields {
			if _, ok := m[k]; ok {
				tests++
				break
			}
		}
	}
	if tests > samples {
		return JSONLTests
	}
	return JSONLSamples
}

// RecordedJSON says whether JSON data (an array of rows, or one row) is
// recorded conversations, Ragas samples or OpenAI messages rows, for
// agenteval score, rather than tests. It looks at the first row's keys.
func RecordedJSON(data []byte) bool {
	keys, ok := firstObjectKeys(data)
	return ok && (keys["user_input"] || keys["messages"]) && !keys["tests"]
}

// SkipSummary says how many of a suite's tests will be skipped, and why:
// "2 will be skipped (workspace: 1; a skill-trigger grader: 1)", or "".
func SkipSummary(s *Suite) string {
	skipped := 0
	why := map[string]int{}
	for i := range s.NumTests() {
		skip := s.Info(i).Skip
		if skip == "" {
			continue
		}
		skipped++
		for _, r := range strings.Split(skip, "; ") {
			why[shortReason(r)]++
		}
	}
	if skipped == 0 {
		return ""
	}
	var rs []string
	for r := range why {
		rs = append(rs, r)
	}
	sort.Strings(rs)
	for i, r := range rs {
		rs[i] = fmt.Sprintf("%s: %d", r, why[r])
	}
	return fmt.Sprintf("%d will be skipped (%s)", skipped, strings.Join(rs, "; "))
}

// shortReason is a skip reason's feature, without its explanation.
func shortReason(r string) string {
	if i := strings.Index(r, " ("); i > 0 {
		return r[:i]
	}
	if i := strings.Index(r, ", which"); i > 0 {
		return r[:i]
	}
	return r
}

// Explain writes how each test of a suite was read: its input, its
// reference, its graders, its targets, and why it will be skipped, so that
// the mapping from either spelling of the file is there to see.
func Explain(w io.Writer, s *Suite) {
	fmt.Fprintf(w, "%s (%s)\n", s.File, s.Schema)
	if s.Name != "" {
		fmt.Fprintf(w, "  suite: %s\n", s.Name)
	}
	if len(s.Tags) > 0 {
		fmt.Fprintf(w, "  tags: %s\n", strings.Join(s.Tags, ", "))
	}
	if s.DefaultTarget != "" {
		fmt.Fprintf(w, "  target: %s\n", s.DefaultTarget)
	}
	if len(s.Matrix) > 0 {
		fmt.Fprintf(w, "  targets (one run each): %s\n", strings.Join(s.Matrix, ", "))
	}
	for _, t := range s.Targets {
		fmt.Fprintf(w, "  target %s: %s\n", t.Name, describeTarget(t))
	}
	for _, d := range s.Differences {
		fmt.Fprintf(w, "  differs from %s: %s (line %d", d.Peer, d.Msg, d.Line)
		if d.Count > 1 {
			fmt.Fprintf(w, ", %d places", d.Count)
		}
		fmt.Fprintln(w, ")")
	}
	if s.Workers > 0 {
		fmt.Fprintf(w, "  workers: %d\n", s.Workers)
	}
	err := s.EachTest(func(_ int, t *agenteval.Test) error {
		fmt.Fprintf(w, "  test %s", t.ID)
		if t.Mode == agenteval.ModeConversation {
			fmt.Fprintf(w, " (conversation, %d turns)", len(t.Turns))
		}
		fmt.Fprintln(w)
		if t.Skip != "" {
			fmt.Fprintf(w, "    skipped: %s\n", t.Skip)
		}
		for _, m := range t.Input {
			fmt.Fprintf(w, "    input %s: %s%s\n", m.Role, oneLine(m.Content, 100), partsNote(m))
		}
		if t.ExpectedOutput != "" {
			fmt.Fprintf(w, "    expected_output: %s\n", oneLine(t.ExpectedOutput, 100))
		}
		if t.Criteria != "" {
			fmt.Fprintf(w, "    criteria: %s\n", oneLine(t.Criteria, 100))
		}
		if len(t.Vars) > 0 {
			keys := make([]string, 0, len(t.Vars))
			for k := range t.Vars {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			fmt.Fprintf(w, "    vars: %s\n", strings.Join(keys, ", "))
		}
		for _, a := range t.Assertions {
			fmt.Fprintf(w, "    grader %s\n", describeAssertion(a))
		}
		for i, tr := range t.Turns {
			fmt.Fprintf(w, "    turn %d: %s\n", i+1, oneLine(tr.Input.Pretty(), 90))
			if tr.ExpectedOutput != "" {
				fmt.Fprintf(w, "      expected_output: %s\n", oneLine(tr.ExpectedOutput, 90))
			}
			for _, a := range tr.Assertions {
				fmt.Fprintf(w, "      grader %s\n", describeAssertion(a))
			}
		}
		if len(t.Targets) > 0 {
			fmt.Fprintf(w, "    targets: %s\n", strings.Join(t.Targets, ", "))
		}
		if t.Trials > 1 {
			strategy := t.TrialStrategy
			if strategy == "" {
				strategy = agenteval.ReduceMean
			}
			fmt.Fprintf(w, "    trials: %d (%s)\n", t.Trials, strategy)
		}
		if t.ConversationID != "" {
			fmt.Fprintf(w, "    conversation_id: %s\n", t.ConversationID)
		}
		return nil
	})
	if err != nil {
		fmt.Fprintf(w, "  %v\n", err)
	}
}

func describeTarget(t TargetSpec) string {
	switch {
	case t.Unsupported != "":
		return "cannot run here: " + t.Unsupported
	case t.Model != "":
		return "model " + t.Model
	case t.HTTP != nil:
		return "http " + t.HTTP.URL
	case len(t.Command) > 0:
		return "command " + strings.Join(t.Command, " ")
	case t.Template != "":
		return "cli command " + t.Template
	case t.Replay != "":
		return "replay " + t.Replay
	case t.alias != "":
		return "alias of " + t.alias
	}
	return "?"
}

func describeAssertion(a agenteval.AssertionSpec) string {
	if a.Type == "" {
		return "rubric criterion: " + oneLine(a.Criterion, 90)
	}
	var b strings.Builder
	b.WriteString(a.Type)
	if a.Name != "" {
		fmt.Fprintf(&b, " %q", a.Name)
	}
	var opts []string
	if a.Weight != nil {
		opts = append(opts, fmt.Sprintf("weight %v", *a.Weight))
	}
	if a.Required {
		opts = append(opts, "required")
	}
	if a.Negate {
		opts = append(opts, "negated")
	}
	if a.Threshold != nil {
		opts = append(opts, fmt.Sprintf("threshold %v", *a.Threshold))
	}
	keys := make([]string, 0, len(a.Params))
	for k := range a.Params {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		opts = append(opts, k+"="+oneLine(varString(a.Params[k]), 60))
	}
	if len(opts) > 0 {
		b.WriteString(" (" + strings.Join(opts, ", ") + ")")
	}
	return b.String()
}

func partsNote(m agenteval.Message) string {
	note := ""
	kinds := map[string]int{}
	for _, p := range m.Parts {
		kinds[p.Type]++
	}
	for _, k := range []string{"file", "image"} {
		if n := kinds[k]; n > 0 {
			note += fmt.Sprintf(" [+%d %s]", n, k)
		}
	}
	if len(m.ToolCalls) > 0 {
		var names []string
		for _, c := range m.ToolCalls {
			names = append(names, c.Name)
		}
		note += " [tool calls: " + strings.Join(names, ", ") + "]"
	}
	return note
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
