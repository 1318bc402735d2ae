package report

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"math"
	"regexp"
	"strings"
	"testing"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/internal/golden"
	"github.com/agenteval/agenteval/results"
	"github.com/google/go-cmp/cmp"
)

func sample() []*agenteval.Result {
	return []*agenteval.Result{
		{TestID: "ok", Score: 1, Verdict: agenteval.VerdictPass, ExecutionStatus: agenteval.StatusOK, Scores: []agenteval.Score{
			{Name: "acc", Score: 1, Verdict: agenteval.VerdictPass, Weight: 1},
			{Name: "f1", Score: 1, Verdict: agenteval.VerdictPass, Weight: 1},
		}},
		{TestID: "a-rather-long-test-identifier-that-is-clipped", Score: 0.25, Verdict: agenteval.VerdictFail, ExecutionStatus: agenteval.StatusQualityFailure, Scores: []agenteval.Score{
			{Name: "acc", Score: 0.5, Verdict: agenteval.VerdictFail, Weight: 1, Reason: "half the calls", Assertions: []agenteval.Assertion{
				{Text: "call 1", Passed: true}, {Text: "call 2 is book", Evidence: "called search instead"},
			}},
			{Name: "f1", Score: 0, Verdict: agenteval.VerdictFail, Weight: 1, Reason: "nothing matched"},
		}},
		{TestID: "broken", Verdict: agenteval.VerdictError, ExecutionStatus: agenteval.StatusExecutionError, Scores: []agenteval.Score{}, Error: "invalid row: d.jsonl:3:4: bad"},
		{TestID: "half", Score: 0.5, Verdict: agenteval.VerdictError, ExecutionStatus: agenteval.StatusExecutionError, Scores: []agenteval.Score{
			{Name: "acc", Score: 0.5, Verdict: agenteval.VerdictFail, Weight: 1, Reason: "meh"},
			{Name: "f1", Verdict: agenteval.VerdictError, Weight: 1, Reason: "needs reference_tool_calls"},
		}},
	}
}

func write(t *testing.T, w Writer) *results.Summary {
	t.Helper()
	var sum results.Summary
	for _, r := range sample() {
		sum.Add(r)
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(&sum); err != nil {
		t.Fatal(err)
	}
	return &sum
}

func TestTableGolden(t *testing.T) {
	var buf bytes.Buffer
	write(t, NewTable(&buf, TableOptions{Metrics: []string{"acc", "f1"}}))
	golden.Check(t, "testdata/table.golden", buf.Bytes())
}

func TestTableColor(t *testing.T) {
	var buf bytes.Buffer
	write(t, NewTable(&buf, TableOptions{Metrics: []string{"acc"}, Color: true}))
	if !strings.Contains(buf.String(), "\x1b[32mpass\x1b[0m") || !strings.Contains(buf.String(), "\x1b[31mFAIL\x1b[0m") {
		t.Errorf("no colours in:\n%q", buf.String())
	}
}

func TestJSONL(t *testing.T) {
	var buf bytes.Buffer
	write(t, NewJSONL(&buf))
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 4 {
		t.Fatalf("%d lines, want 4", len(lines))
	}
	for _, l := range lines {
		var r agenteval.Result
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
	}
	if !strings.HasPrefix(lines[0], `{"test_id":"ok","score":1,"verdict":"pass","execution_status":"ok","scores":[`) {
		t.Errorf("key order changed: %s", lines[0])
	}
}

func TestJSONDocumentHasRun(t *testing.T) {
	var buf bytes.Buffer
	w := NewJSON(&buf)
	w.(Starter).Start(&results.Header{RunID: "r9"})
	write(t, w)
	if !strings.HasPrefix(buf.String(), `{"run": {"record":"run","run_id":"r9"`) || !strings.Contains(buf.String(), `"results": [`) || !json.Valid(buf.Bytes()) {
		t.Errorf("document:\n%s", buf.String())
	}
}

func TestJSONDocument(t *testing.T) {
	for _, n := range []int{0, 4} {
		var buf bytes.Buffer
		w := NewJSON(&buf)
		var sum results.Summary
		for _, r := range sample()[:n] {
			sum.Add(r)
			w.Write(r)
		}
		w.Close(&sum)
		var doc struct {
			Results []agenteval.Result `json:"results"`
			Summary results.Summary    `json:"summary"`
		}
		if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
			t.Fatalf("%d results: not JSON: %v\n%s", n, err, buf.String())
		}
		if len(doc.Results) != n || doc.Summary.Total != n {
			t.Errorf("%d results: decoded %d results, summary total %d", n, len(doc.Results), doc.Summary.Total)
		}
	}
}

func TestJUnit(t *testing.T) {
	var buf bytes.Buffer
	w := NewJUnit(&buf)
	rs := sample()
	rs[0].Suite, rs[1].Suite = "travel", "travel"
	rs[2].Suite, rs[3].Suite = "other", "other"
	rs = append(rs, &agenteval.Result{TestID: "later", Suite: "other", Verdict: agenteval.VerdictSkip, Error: "skipped because of <deps> & such"})
	for _, r := range rs {
		w.Write(r)
	}
	if err := w.Close(nil); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "testdata/junit.golden", buf.Bytes())
}

// trialsResult is a test that ran once per letter of verdicts: p passed, f
// failed, e failed to run. Like a result read from a file written without
// pass_at_k, it carries only its trials, so the summary computes the rest.
func trialsResult(id, verdicts string) *agenteval.Result {
	r := &agenteval.Result{TestID: id, Suite: "s", Verdict: agenteval.VerdictFail, ExecutionStatus: agenteval.StatusQualityFailure, Scores: []agenteval.Score{}}
	for i, v := range verdicts {
		tr := agenteval.Trial{Trial: i + 1, Verdict: agenteval.VerdictFail, ExecutionStatus: agenteval.StatusQualityFailure}
		switch v {
		case 'p':
			tr.Verdict, tr.ExecutionStatus, tr.Score = agenteval.VerdictPass, agenteval.StatusOK, 1
		case 'e':
			tr.Verdict, tr.ExecutionStatus = agenteval.VerdictError, agenteval.StatusExecutionError
		}
		r.Trials = append(r.Trials, tr)
	}
	if len(r.Trials) == 1 {
		// The runner folds a single trial into the result.
		r.Verdict, r.ExecutionStatus, r.Trials = r.Trials[0].Verdict, r.Trials[0].ExecutionStatus, nil
	}
	return r
}

func TestPassAtKFor(t *testing.T) {
	// n=5, c=2: pass@k = 1 − C(3,k)/C(5,k), pass^k = C(2,k)/C(5,k).
	want := []agenteval.PassAtK{
		{K: 1, PassAtK: 1 - 3.0/5, PassHatK: 2.0 / 5},
		{K: 2, PassAtK: 1 - 3.0/10, PassHatK: 1.0 / 10},
		{K: 3, PassAtK: 1 - 1.0/10, PassHatK: 0},
		{K: 4, PassAtK: 1, PassHatK: 0},
		{K: 5, PassAtK: 1, PassHatK: 0},
	}
	got := agenteval.PassAtKFor(5, 2)
	for i, w := range want {
		if got[i].K != w.K || math.Abs(got[i].PassAtK-w.PassAtK) > 1e-12 || math.Abs(got[i].PassHatK-w.PassHatK) > 1e-12 {
			t.Errorf("k=%d: got %+v, want %+v", w.K, got[i], w)
		}
	}
	// 1000 trials, the most a suite allows: no binomial overflows.
	big := agenteval.PassAtKFor(1000, 500)
	if p := big[999]; p.PassAtK != 1 || p.PassHatK != 0 || math.IsNaN(big[499].PassHatK) || big[0].PassAtK != 0.5 {
		t.Errorf("n=1000: k=1 %+v, k=500 %+v, k=1000 %+v", big[0], big[499], big[999])
	}
}

func trialResults() []*agenteval.Result {
	rs := []*agenteval.Result{trialsResult("flaky", "ppf"), trialsResult("never", "fef"), trialsResult("once", "p"), trialsResult("steady", "ppp")}
	rs[0].Score = 2.0 / 3
	rs[2].Score = 1
	rs[3].Score, rs[3].Verdict, rs[3].ExecutionStatus = 1, agenteval.VerdictPass, agenteval.StatusOK
	rs[1].Error = "1 of 3 trials failed to run and were left out: trial 2: agent <crashed> & \"quit\""
	for _, r := range rs {
		if len(r.Trials) > 0 {
			n, c, _ := results.TrialCounts(r)
			r.PassAtK = agenteval.PassAtKFor(n, c)
		}
	}
	return rs
}

func TestTableTrials(t *testing.T) {
	run := func(color bool) string {
		var buf bytes.Buffer
		w := NewTable(&buf, TableOptions{Color: color, NoMetricSummary: true})
		var sum results.Summary
		for _, r := range trialResults() {
			sum.Add(r)
			if err := w.Write(r); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(&sum); err != nil {
			t.Fatal(err)
		}
		return buf.String()
	}
	plain := run(false)
	golden.Check(t, "testdata/table_trials.golden", []byte(plain))
	// Colours must not move the columns.
	colored := run(true)
	if strip := regexp.MustCompile("\x1b\\[[0-9]+m").ReplaceAllString(colored, ""); strip != plain {
		t.Errorf("with colours stripped:\n%s\nwant:\n%s", strip, plain)
	}
}

func TestPassAtKLinesManyTrials(t *testing.T) {
	var sum results.Summary
	sum.Add(trialsResult("many", strings.Repeat("pf", 30)))
	lines := passAtKLines(sum.PassAtK)
	if len(lines) != 2 || !strings.Contains(lines[0], "  k=5 ") || strings.Contains(lines[0], "k=6 ") ||
		!strings.Contains(lines[0], "k=50 ") || !strings.HasSuffix(lines[1], "k=60 0.000  (1 test)") {
		t.Errorf("lines for 60 trials:\n%s", strings.Join(lines, "\n"))
	}
}

func TestJUnitTrials(t *testing.T) {
	var buf bytes.Buffer
	w := NewJUnit(&buf)
	rs := trialResults()
	rs = append(rs, &agenteval.Result{TestID: "plain", Suite: "other", Score: 1, Verdict: agenteval.VerdictPass, ExecutionStatus: agenteval.StatusOK})
	for _, r := range rs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(nil); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "testdata/junit_trials.golden", buf.Bytes())

	type prop struct {
		Name  string `xml:"name,attr"`
		Value string `xml:"value,attr"`
	}
	var doc struct {
		Suites []struct {
			Name  string `xml:"name,attr"`
			Props []prop `xml:"properties>property"`
			Cases []struct {
				Name  string `xml:"name,attr"`
				Props []prop `xml:"properties>property"`
				Error *struct {
					Message string `xml:"message,attr"`
				} `xml:"error"`
				Failure *struct {
					Message string `xml:"message,attr"`
					Text    string `xml:",chardata"`
				} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("not XML: %v\n%s", err, buf.String())
	}
	props := func(ps []prop) map[string]string {
		m := map[string]string{}
		for _, p := range ps {
			m[p.Name] = p.Value
		}
		return m
	}
	if len(doc.Suites) != 2 || doc.Suites[0].Name != "other" || doc.Suites[1].Name != "s" {
		t.Fatalf("suites: %+v", doc.Suites)
	}
	if other := doc.Suites[0]; len(other.Props) != 0 || len(other.Cases[0].Props) != 0 {
		t.Errorf("a suite of single runs has properties: %+v", other)
	}
	// flaky (3,2), never (3,0), once (1,1), steady (3,3):
	// k=1: (2/3+0+1+1)/4 = 2/3; k=2 over 3 tests: pass@2 (1+0+1)/3 = 2/3,
	// pass^2 (1/3+0+1)/3 = 4/9; k=3: pass@3 2/3, pass^3 (0+0+1)/3 = 1/3.
	s := doc.Suites[1]
	want := map[string]string{
		"pass@1": "0.6667", "pass^1": "0.6667", "tests@1": "4",
		"pass@2": "0.6667", "pass^2": "0.4444", "tests@2": "3",
		"pass@3": "0.6667", "pass^3": "0.3333", "tests@3": "3",
	}
	if got := props(s.Props); !cmp.Equal(got, want) {
		t.Errorf("suite properties: %s", cmp.Diff(want, got))
	}
	if order := s.Props[0].Name + " " + s.Props[1].Name + " " + s.Props[3].Name; order != "pass@1 pass^1 pass@2" {
		t.Errorf("property order %s", order)
	}
	cases := map[string]map[string]string{}
	for _, c := range s.Cases {
		cases[c.Name] = props(c.Props)
	}
	if got, want := cases["flaky"], map[string]string{"trials": "3", "trials_passed": "2",
		"pass@1": "0.6667", "pass^1": "0.6667", "pass@2": "1.0000", "pass^2": "0.3333", "pass@3": "1.0000", "pass^3": "0.0000"}; !cmp.Equal(got, want) {
		t.Errorf("flaky: %s", cmp.Diff(want, got))
	}
	if got := cases["never"]; got["trials_passed"] != "0" || got["pass@3"] != "0.0000" {
		t.Errorf("never: %v", got)
	}
	if got := cases["once"]; len(got) != 0 {
		t.Errorf("a test that ran once has properties: %v", got)
	}
	if c := s.Cases[1]; c.Failure == nil || !strings.Contains(c.Failure.Message, "below the threshold") {
		t.Errorf("never lost its failure: %+v", c)
	}
}

// TestTableShowsHowASimulationEnded: a failing simulated conversation says
// who played the user, how long it went and why it stopped.
func TestTableShowsHowASimulationEnded(t *testing.T) {
	var buf bytes.Buffer
	w := NewTable(&buf, TableOptions{})
	r := &agenteval.Result{TestID: "refund", Score: 0.5, Verdict: agenteval.VerdictFail, ExecutionStatus: agenteval.StatusQualityFailure,
		Scores:     []agenteval.Score{{Name: "subgoals", Score: 0.5, Verdict: agenteval.VerdictFail, Reason: "1 of 2 subgoals achieved"}},
		Simulation: &agenteval.Simulation{Model: "openai:gpt-4o-mini", Turns: 6, EndReason: agenteval.EndMaxTurns}}
	if err := w.Write(r); err != nil {
		t.Fatal(err)
	}
	w.Close(nil)
	if !strings.Contains(buf.String(), "simulated user (openai:gpt-4o-mini): 6 turns, ended by max turns") {
		t.Errorf("table:\n%s", buf.String())
	}
}

// TestUsageLine: the line says the calls, what came from the cache, the
// tokens and the cost, and does not call a run with real calls all cached.
func TestUsageLine(t *testing.T) {
	cost := func(c float64) *float64 { return &c }
	u := agenteval.Usage{Calls: 6, CachedCalls: 1, InputTokens: 450, OutputTokens: 45, CostUSD: cost(0.0045)}
	if line := UsageLine(u); !strings.Contains(line, "6 model calls (+1 from cache), 450 input + 45 output tokens, $0.0045") || strings.Contains(line, "all cached") {
		t.Errorf("usage line = %q", line)
	}
	if line := UsageLine(agenteval.Usage{CachedCalls: 2}); !strings.Contains(line, "$0 (all cached)") {
		t.Errorf("all cached: usage line = %q", line)
	}
	if line := UsageLine(agenteval.Usage{}); line != "" {
		t.Errorf("no calls: usage line = %q, want none", line)
	}
}

// twoTargets is a test run against two targets, as a matrix run holds it.
func twoTargets() []*agenteval.Result {
	var rs []*agenteval.Result
	for _, tg := range []string{"alpha", "a-target-name-too-long-for-its-column"} {
		for _, r := range sample()[:2] {
			r.Suite, r.Target = "s", tg
			rs = append(rs, r)
		}
	}
	return rs
}

// A run of several targets holds each test once per target: every row of
// the table, the Markdown failures and the JUnit cases name their target.
func TestTargetsLabelled(t *testing.T) {
	multi := &results.Header{RunID: "r", Target: "alpha, a-target-name-too-long-for-its-column"}
	var buf bytes.Buffer
	writeRun(t, NewTable(&buf, TableOptions{Details: -1}), multi, twoTargets())
	// In the suite's order: by test, then by target as the run lists them.
	want := "TEST                      TARGET                    SCORE  VERDICT\n" +
		"a-rather-long-test-iden…  alpha                     0.250  FAIL\n" +
		"a-rather-long-test-iden…  a-target-name-too-long-…  0.250  FAIL\n" +
		"ok                        alpha                     1.000  pass\n" +
		"ok                        a-target-name-too-long-…  1.000  pass\n"
	if !strings.HasPrefix(buf.String(), want) {
		t.Errorf("table:\n%s\nwant it to start:\n%s", buf.String(), want)
	}
	// Without a header, the caller names the targets.
	buf.Reset()
	writeRun(t, NewTable(&buf, TableOptions{Details: -1, Targets: []string{"alpha", "a-target-name-too-long-for-its-column"}}), nil, twoTargets())
	if !strings.HasPrefix(buf.String(), want) {
		t.Errorf("table with the targets given:\n%s", buf.String())
	}
	// One target: no column.
	buf.Reset()
	writeRun(t, NewTable(&buf, TableOptions{Details: -1}), &results.Header{Target: "alpha"}, twoTargets()[:2])
	if strings.Contains(buf.String(), "TARGET") || strings.Contains(buf.String(), "alpha") {
		t.Errorf("one target:\n%s", buf.String())
	}

	buf.Reset()
	writeRun(t, NewMarkdown(&buf), multi, twoTargets())
	for _, tg := range []string{"alpha", "a-target-name-too-long-for-its-column"} {
		if !strings.Contains(buf.String(), "| s/a-rather-long-test-identifier-that-is-clipped \\["+tg+"\\] | fail |") {
			t.Errorf("markdown lacks the failure on %s:\n%s", tg, buf.String())
		}
	}

	buf.Reset()
	writeRun(t, NewJUnit(&buf), nil, twoTargets())
	for _, tg := range []string{"alpha", "a-target-name-too-long-for-its-column"} {
		if !strings.Contains(buf.String(), `<testcase name="ok [`+tg+`]" classname="s"`) {
			t.Errorf("junit lacks ok on %s:\n%s", tg, buf.String())
		}
	}
}
