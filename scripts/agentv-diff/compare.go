package main

import (
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"

	"github.com/agenteval/agenteval/internal/fakellm"
)

// The models run.sh gives the fake: the agent's, and every grader's.
const (
	agentModel = "fake-agent"
	judgeModel = "fake-judge"
)

// scoreTolerance is how far two scores may be apart and still agree.
const scoreTolerance = 1e-6

// The aspects a difference is about.
const (
	aspectRan   = "ran"
	aspectScore = "score"
	aspectAgent = "agent"
	aspectJudge = "judge"
)

// Meta says what ran.
type Meta struct {
	Ref       string `json:"ref"`
	AgentV    string `json:"agentv"`
	Agenteval string `json:"agenteval,omitempty"`
	Files     string `json:"files"`
}

// Comparison is the whole result: what the report shows.
type Comparison struct {
	Meta   Meta             `json:"meta"`
	Files  int              `json:"files"`
	Counts Counts           `json:"counts"`
	Tests  []TestComparison `json:"tests"`
	Groups []Group          `json:"groups"`
}

// Counts are the report's headline numbers.
type Counts struct {
	Listed        int `json:"listed"`
	Both          int `json:"both"`
	OnlyAgentV    int `json:"only_agentv"`
	OnlyAgenteval int `json:"only_agenteval"`
	ScoreAgree    int `json:"score_agree"`
	AgentAgree    int `json:"agent_agree"`
	JudgeAgree    int `json:"judge_agree"`
	AllAgree      int `json:"all_agree"`
}

// TestComparison is one test, both tools.
type TestComparison struct {
	File            string   `json:"file"`
	ID              string   `json:"id"`
	InAgentV        bool     `json:"in_agentv"`
	InAgenteval     bool     `json:"in_agenteval"`
	AgentVScore     *float64 `json:"agentv_score,omitempty"`
	AgentevalScore  *float64 `json:"agenteval_score,omitempty"`
	AgentVStatus    string   `json:"agentv_status,omitempty"`
	AgentevalStatus string   `json:"agenteval_status,omitempty"`
	AgentVCalls     int      `json:"agentv_agent_calls"`
	AgentevalCalls  int      `json:"agenteval_agent_calls"`
	AgentVJudge     int      `json:"agentv_judge_calls"`
	AgentevalJudge  int      `json:"agenteval_judge_calls"`
	ScoreAgree      bool     `json:"score_agree"`
	AgentAgree      bool     `json:"agent_agree"`
	JudgeAgree      bool     `json:"judge_agree"`
	Diffs           []Diff   `json:"diffs,omitempty"`
}

// Diff is one difference of one test: its aspect, its cause (the same text
// for every test it applies to, so tests group by it) and what it is in
// this test.
type Diff struct {
	Aspect string `json:"aspect"`
	Cause  string `json:"cause"`
	Detail string `json:"detail,omitempty"`
}

// Group is the tests that differ for one cause.
type Group struct {
	Aspect  string `json:"aspect"`
	Cause   string `json:"cause"`
	Reason  string `json:"reason"`
	Tests   int    `json:"tests"`
	Example string `json:"example"`
	Detail  string `json:"detail,omitempty"`
}

// name is how the report names a test: its file under examples/, and id.
func (t *TestComparison) name() string {
	return strings.TrimPrefix(t.File, "examples/") + "#" + t.ID
}

func (t *TestComparison) add(aspect, cause, detail string) {
	t.Diffs = append(t.Diffs, Diff{Aspect: aspect, Cause: cause, Detail: detail})
}

// compareWork compares every test that run.sh ran.
func compareWork(dir string) (*Comparison, error) {
	files, err := readFiles(dir)
	if err != nil {
		return nil, err
	}
	tests, err := readTests(dir)
	if err != nil {
		return nil, err
	}
	reqs, err := readRequests(filepath.Join(dir, "requests.jsonl"))
	if err != nil {
		return nil, err
	}
	c := &Comparison{Files: len(files)}
	source := readSource(filepath.Join(dir, "tree", "examples"))
	listed, err := listedIDs(dir, len(files))
	if err != nil {
		return nil, err
	}
	for _, t := range tests {
		av, err := agentvResults(filepath.Join(dir, "test", fmt.Sprintf("av.%d", t.N)))
		if err != nil {
			return nil, err
		}
		ae, err := agentevalResults(filepath.Join(dir, "test", fmt.Sprintf("ae.%d.jsonl", t.N)))
		if err != nil {
			return nil, err
		}
		in := runOf{
			agentv:        pick(av, t.ID),
			agenteval:     pick(ae, t.ID),
			agentvReqs:    reqs[fmt.Sprintf("av.%d", t.N)],
			agentevalReqs: reqs[fmt.Sprintf("ae.%d", t.N)],
			agentvOut:     firstError(filepath.Join(dir, "test", fmt.Sprintf("av.%d.out", t.N))),
			agentevalOut:  firstError(filepath.Join(dir, "test", fmt.Sprintf("ae.%d.jsonl.out", t.N))),
			source:        source,
		}
		// A test AgentV skipped says why in the run of its whole file.
		if in.agentv == nil && (in.agentvOut == "" || strings.Contains(in.agentvOut, "No tests matched")) {
			if why := listError(filepath.Join(dir, "list", fmt.Sprintf("av.%d.out", t.FileIndex)), t.ID); why != "" {
				in.agentvOut = why
			}
		}
		l := listed[t.FileIndex-1]
		in.onlyListedBy = onlyListedBy(l, t.ID)
		c.Tests = append(c.Tests, compareTest(t, in))
	}
	c.summarize()
	return c, nil
}

// pick is the result for id; with several (trials), the last.
func pick(rs []Result, id string) *Result {
	var out *Result
	for i := range rs {
		if rs[i].TestID == id {
			out = &rs[i]
		}
	}
	return out
}

// runOf is what both tools left for one test.
type runOf struct {
	agentv, agenteval         *Result
	agentvReqs, agentevalReqs []fakellm.LogEntry
	agentvOut, agentevalOut   string
	// source is the normalized text of the examples' files.
	source string
	// onlyListedBy names the tool that alone listed the test, when the
	// other listed tests of the file under other ids.
	onlyListedBy string
}

// compareTest compares one test's results and requests.
func compareTest(t Test, in runOf) TestComparison {
	tc := TestComparison{File: t.File, ID: t.ID, InAgentV: in.agentv != nil, InAgenteval: in.agenteval != nil}
	if in.agentv != nil {
		tc.AgentVScore, tc.AgentVStatus = in.agentv.Score, in.agentv.Status
	}
	if in.agenteval != nil {
		tc.AgentevalScore, tc.AgentevalStatus = in.agenteval.Score, in.agenteval.Status
	}
	avAgent, avJudge := split(in.agentvReqs, false)
	aeAgent, aeJudge := split(in.agentevalReqs, true)
	tc.AgentVCalls, tc.AgentevalCalls = len(avAgent), len(aeAgent)
	tc.AgentVJudge, tc.AgentevalJudge = len(avJudge), len(aeJudge)
	switch {
	case !tc.InAgentV && in.onlyListedBy == "agenteval" && !strings.Contains(in.agentvOut, "Skipping test"),
		!tc.InAgenteval && in.onlyListedBy == "AgentV" && strings.Contains(in.agentevalOut, "matches none"):
		// The other tool has no test of this id, and did not skip one.
		tc.add(aspectRan, "only "+in.onlyListedBy+" has a test of this id: the other names the file's tests otherwise", "AgentV: "+in.agentvOut+"; agenteval: "+in.agentevalOut)
		return tc
	case !tc.InAgentV && !tc.InAgenteval:
		tc.add(aspectRan, "neither tool ran the test alone", "AgentV: "+in.agentvOut+"; agenteval: "+in.agentevalOut)
		return tc
	case !tc.InAgentV:
		tc.add(aspectRan, "only agenteval ran it: "+normalizeError(in.agentvOut), in.agentvOut)
		return tc
	case !tc.InAgenteval:
		tc.add(aspectRan, "only AgentV ran it: "+normalizeError(in.agentevalOut), in.agentevalOut)
		return tc
	}
	compareScores(&tc, in.agentv, in.agenteval)
	// A test one tool skipped, or ended in an execution error, has
	// nothing to compare on that side.
	skipped := ""
	switch {
	case in.agentv.Verdict == "skip" && in.agenteval.Verdict != "skip":
		skipped = "AgentV skips the test"
	case in.agenteval.Verdict == "skip" && in.agentv.Verdict != "skip":
		skipped = "agenteval skips the test"
	case in.agentv.Status == "execution_error" && in.agenteval.Status != "execution_error":
		skipped = "AgentV ends the test in an execution error"
	case in.agenteval.Status == "execution_error" && in.agentv.Status != "execution_error":
		skipped = "agenteval ends the test in an execution error"
	}
	compareAgent(&tc, avAgent, aeAgent, skipped)
	// The agent's replies are the fake's text, material as much as the
	// examples' files are.
	var replies strings.Builder
	for _, r := range append(avAgent, aeAgent...) {
		replies.WriteString(normalize(r.Reply.Content) + "\n")
	}
	compareJudge(&tc, avJudge, aeJudge, sources{in.source, replies.String()}, skipped)
	tc.ScoreAgree, tc.AgentAgree, tc.JudgeAgree = true, true, true
	for _, d := range tc.Diffs {
		switch d.Aspect {
		case aspectScore:
			tc.ScoreAgree = false
		case aspectAgent:
			tc.AgentAgree = false
		case aspectJudge:
			tc.JudgeAgree = false
		}
	}
	return tc
}

// split sorts a run's requests into the agent's and the judge's. Every
// grader target is the judge model; agenteval's judge asks for structured
// output, and its other requests to the judge model (a simulated user)
// are neither.
func split(reqs []fakellm.LogEntry, structuredJudge bool) (agent, judge []fakellm.LogEntry) {
	for _, r := range reqs {
		switch {
		case r.Model == agentModel:
			agent = append(agent, r)
		case r.Model == judgeModel && (!structuredJudge || r.ResponseFormat != ""):
			judge = append(judge, r)
		}
	}
	return agent, judge
}

// --- Scores ---------------------------------------------------------------------

func compareScores(tc *TestComparison, av, ae *Result) {
	if (av.Verdict == "skip") != (ae.Verdict == "skip") {
		if ae.Verdict == "skip" {
			tc.add(aspectScore, "agenteval skips the test: "+normalizeError(ae.Error), ae.Error)
		} else {
			tc.add(aspectScore, "AgentV skips the test: "+normalizeError(av.Error), av.Error)
		}
		return
	}
	if av.Status == "execution_error" && ae.Status != "execution_error" {
		tc.add(aspectScore, "AgentV: execution error: "+normalizeError(av.Error), av.Error)
		return
	}
	if ae.Status == "execution_error" && av.Status != "execution_error" {
		tc.add(aspectScore, "agenteval: execution error: "+normalizeError(ae.Error), ae.Error)
		return
	}
	if scoresAgree(av.Score, ae.Score) {
		return
	}
	detail := fmt.Sprintf("AgentV %s, agenteval %s", fmtScore(av.Score), fmtScore(ae.Score))
	causes := graderCauses(av.Scores, ae.Scores)
	if len(causes) == 0 {
		tc.add(aspectScore, "the graders agree but the test's score differs (weights, or how graders combine)", detail)
		return
	}
	for _, c := range causes {
		tc.add(aspectScore, c.cause, detail+"; "+c.detail)
	}
}

func scoresAgree(a, b *float64) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return math.Abs(*a-*b) <= scoreTolerance
}

func fmtScore(s *float64) string {
	if s == nil {
		return "none"
	}
	return fmt.Sprintf("%.4g", *s)
}

type cause struct{ cause, detail string }

// graderCauses pairs the two tools' graders and says which score
// differently: by name, then the rest by type in order (the tools name
// unnamed graders differently: contains-#98765 and contains). AgentV
// leaves out the implicit criteria grader when it is the only one; so
// does the pairing.
func graderCauses(av, ae []GraderResult) []cause {
	var out []cause
	pair := make([]int, len(av))
	used := make([]bool, len(ae))
	for i := range av {
		pair[i] = -1
		for j := range ae {
			if !used[j] && ae[j].Name == av[i].Name {
				pair[i], used[j] = j, true
				break
			}
		}
	}
	for i := range av {
		if pair[i] >= 0 {
			continue
		}
		for j := range ae {
			if !used[j] && graderType(ae[j].Type) == graderType(av[i].Type) {
				pair[i], used[j] = j, true
				break
			}
		}
	}
	for i, g := range av {
		if pair[i] < 0 {
			out = append(out, cause{fmt.Sprintf("grader %s only in AgentV's results", g.Type), fmt.Sprintf("%s: %s (%s)", g.Name, fmtScore(g.Score), firstAssertion(g))})
			continue
		}
		o := ae[pair[i]]
		if scoresAgree(g.Score, o.Score) {
			continue
		}
		why := o.Reason
		if why == "" {
			why = o.Verdict
		}
		out = append(out, cause{fmt.Sprintf("grader %s (agenteval %s) scores differently", g.Type, o.Type),
			fmt.Sprintf("%s: AgentV %s (%s), agenteval %s (%s)", g.Name, fmtScore(g.Score), firstAssertion(g), fmtScore(o.Score), truncate(why, 120))})
	}
	for j, o := range ae {
		if used[j] || len(av) == 0 && len(ae) == 1 {
			// AgentV's results list no grader for a test judged by its
			// criteria alone.
			continue
		}
		out = append(out, cause{fmt.Sprintf("grader %s only in agenteval's results", o.Type), fmt.Sprintf("%s: %s (%s)", o.Name, fmtScore(o.Score), truncate(o.Reason, 120))})
	}
	return out
}

// graderType is a grader type in one spelling: llm-grader and llm_grader
// are the same.
func graderType(t string) string {
	t = strings.ReplaceAll(strings.ToLower(t), "-", "_")
	if t == "llm_rubric" {
		// AgentV 5's judge of a test's criteria; agenteval's is rubrics.
		return "rubrics"
	}
	return t
}

func firstAssertion(g GraderResult) string {
	for _, a := range g.Assertions {
		if !a.Passed {
			return truncate(a.Text, 120)
		}
	}
	if g.Verdict != "" {
		return g.Verdict
	}
	return "-"
}

var (
	// scriptError is agenteval's error for a grader whose program cannot
	// run, led by the grader's name.
	scriptError = regexp.MustCompile(`^[^\s:]+: (script \S+ .*)$`)
	numbers     = regexp.MustCompile(`\d+(\.\d+)?`)
	absPaths    = regexp.MustCompile(`(^|[\s'"(])/[^\s'":,)]+`)
	quotedID    = regexp.MustCompile(`"[^"]{1,80}"|'[^']{1,80}'`)
	parens      = regexp.MustCompile(`\([^()]*\)`)
)

// normalizeError makes an error message a group key: numbers, paths and
// quoted names replaced, cut to one short line.
func normalizeError(s string) string {
	if s == "" {
		return "no result and no error message"
	}
	s = strings.SplitN(strings.TrimSpace(s), "\n", 2)[0]
	if m := scriptError.FindStringSubmatch(s); m != nil {
		s = m[1]
	}
	s = absPaths.ReplaceAllString(s, "${1}PATH")
	s = quotedID.ReplaceAllString(s, "'…'")
	s = parens.ReplaceAllString(s, "(…)")
	s = numbers.ReplaceAllString(s, "N")
	return truncate(s, 140)
}

func truncate(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// --- Agent requests ----------------------------------------------------------------

// compareAgent pairs the agent requests by turn, after putting each tool's
// in a canonical order (by length, then text), since trials and turns may
// be sent concurrently.
func compareAgent(tc *TestComparison, av, ae []fakellm.LogEntry, skipped string) {
	av, ae = canonical(av), canonical(ae)
	if skipped != "" && (len(av) == 0) != (len(ae) == 0) {
		tc.add(aspectAgent, skipped+" (see Scores), before or without calling the agent", "")
		return
	}
	if len(av) != len(ae) {
		more := "AgentV"
		if len(ae) > len(av) {
			more = "agenteval"
		}
		tc.add(aspectAgent, fmt.Sprintf("%s calls the agent more often", more), fmt.Sprintf("AgentV %d calls, agenteval %d", len(av), len(ae)))
	}
	seen := map[string]bool{}
	for i := 0; i < len(av) && i < len(ae); i++ {
		for _, c := range messageCauses(av[i], ae[i]) {
			if seen[c.cause] {
				continue
			}
			seen[c.cause] = true
			tc.add(aspectAgent, c.cause, fmt.Sprintf("turn %d: %s", i+1, c.detail))
		}
	}
}

func canonical(rs []fakellm.LogEntry) []fakellm.LogEntry {
	out := append([]fakellm.LogEntry(nil), rs...)
	key := func(r fakellm.LogEntry) string {
		var b strings.Builder
		for _, m := range r.Messages {
			b.WriteString(m.Role)
			b.WriteByte(0)
			b.WriteString(m.Content)
			b.WriteByte(0)
		}
		return b.String()
	}
	sort.SliceStable(out, func(i, j int) bool {
		if len(out[i].Messages) != len(out[j].Messages) {
			return len(out[i].Messages) < len(out[j].Messages)
		}
		return key(out[i]) < key(out[j])
	})
	return out
}

// messageCauses says how two agent requests for the same turn differ.
func messageCauses(av, ae fakellm.LogEntry) []cause {
	var out []cause
	avSys, avRest := systemAndRest(av.Messages)
	aeSys, aeRest := systemAndRest(ae.Messages)
	switch {
	case len(avSys) > 0 && len(aeSys) == 0:
		out = append(out, cause{"a system message only AgentV sends", "AgentV: " + quote(avSys[0].Content)})
	case len(aeSys) > 0 && len(avSys) == 0:
		out = append(out, cause{"a system message only agenteval sends", "agenteval: " + quote(aeSys[0].Content)})
	case !sameMessages(avSys, aeSys):
		out = append(out, cause{"the system message differs", firstDifference(joinContent(avSys), joinContent(aeSys))})
	}
	if len(avRest) != len(aeRest) {
		out = append(out, cause{"the history sent to the agent differs in length",
			fmt.Sprintf("AgentV sends %d messages after the system message, agenteval %d", len(avRest), len(aeRest))})
	} else {
		for i := range avRest {
			a, b := avRest[i], aeRest[i]
			if a.Role != b.Role {
				out = append(out, cause{"a message's role differs", fmt.Sprintf("message %d: AgentV %s, agenteval %s", i+1, a.Role, b.Role)})
				break
			}
			if a.Content != b.Content {
				c := cause{fmt.Sprintf("a %s message's text differs", a.Role), fmt.Sprintf("message %d: %s", i+1, firstDifference(a.Content, b.Content))}
				switch {
				case strings.Contains(b.Content, "{{") && !strings.Contains(a.Content, "{{"):
					c.cause = fmt.Sprintf("a %s message's {{ template }} is expanded by AgentV only", a.Role)
				case sameJSON(a.Content, b.Content):
					c.cause = fmt.Sprintf("a %s message's JSON has its keys in another order", a.Role)
				case fileOnlyIn(a.Content, b.Content):
					c.cause = fmt.Sprintf("a %s message has a file part only agenteval sends", a.Role)
				case fileOnlyIn(b.Content, a.Content):
					c.cause = fmt.Sprintf("a %s message has a file part only AgentV sends", a.Role)
				case strings.TrimSpace(a.Content) == strings.TrimSpace(b.Content):
					c.cause = fmt.Sprintf("a %s message's text differs in leading or trailing white space", a.Role)
				case strings.Join(strings.Fields(a.Content), " ") == strings.Join(strings.Fields(b.Content), " "):
					c.cause = fmt.Sprintf("a %s message's text differs in white space inside it", a.Role)
				}
				out = append(out, c)
				break
			}
			if !sameCalls(a.ToolCalls, b.ToolCalls) || a.ToolCallID != b.ToolCallID {
				out = append(out, cause{fmt.Sprintf("a %s message's tool calls differ", a.Role), fmt.Sprintf("message %d", i+1)})
				break
			}
		}
	}
	if strings.Join(av.Tools, ",") != strings.Join(ae.Tools, ",") {
		out = append(out, cause{"the tools offered to the agent differ", fmt.Sprintf("AgentV [%s], agenteval [%s]", strings.Join(av.Tools, ", "), strings.Join(ae.Tools, ", "))})
	}
	return out
}

func systemAndRest(ms []fakellm.LogMessage) (sys, rest []fakellm.LogMessage) {
	for _, m := range ms {
		if m.Role == "system" || m.Role == "developer" {
			sys = append(sys, m)
		} else {
			rest = append(rest, m)
		}
	}
	return sys, rest
}

func sameMessages(a, b []fakellm.LogMessage) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Role != b[i].Role || a[i].Content != b[i].Content {
			return false
		}
	}
	return true
}

func sameCalls(a, b []fakellm.LogToolCall) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || a[i].Arguments != b[i].Arguments {
			return false
		}
	}
	return true
}

func joinContent(ms []fakellm.LogMessage) string {
	var parts []string
	for _, m := range ms {
		parts = append(parts, m.Content)
	}
	return strings.Join(parts, "\n")
}

func quote(s string) string { return fmt.Sprintf("%q", truncate(s, 100)) }

// firstDifference shows where two texts part: a little of each from the
// first byte that differs.
func firstDifference(a, b string) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	start := max(i-20, 0)
	// Do not cut a UTF-8 sequence.
	for start > 0 && start < len(a) && a[start]&0xC0 == 0x80 {
		start--
	}
	return fmt.Sprintf("from byte %d, AgentV %s, agenteval %s", i, snippet(safeSlice(a, start), 60), snippet(safeSlice(b, start), 60))
}

func safeSlice(s string, from int) string {
	if from >= len(s) {
		return ""
	}
	for from > 0 && s[from]&0xC0 == 0x80 {
		from--
	}
	return s[from:]
}

// snippet quotes the first n runes of s, white space as it is.
func snippet(s string, n int) string {
	if r := []rune(s); len(r) > n {
		s = string(r[:n]) + "…"
	}
	return fmt.Sprintf("%q", s)
}

// fileOnlyIn says whether long is short and then a file part (a <file
// path=...> block) more.
func fileOnlyIn(short, long string) bool {
	rest, ok := strings.CutPrefix(long, strings.TrimRight(short, " \n"))
	return ok && strings.HasPrefix(strings.TrimLeft(rest, " \n"), "<file path=")
}

// sameJSON says whether two texts are the same JSON value written
// differently (keys in another order, other spacing).
func sameJSON(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}
