package compare

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/internal/golden"
	"github.com/agenteval/agenteval/results"
)

func input(label string, h *results.Header, rs ...*agenteval.Result) Input {
	return Input{Label: label, Header: h, Results: func(fn func(*agenteval.Result) error) error {
		for _, r := range rs {
			if err := fn(r); err != nil {
				return err
			}
		}
		return nil
	}}
}

func res(id string, v agenteval.Verdict, score float64, scores ...agenteval.Score) *agenteval.Result {
	st := agenteval.StatusOK
	if v == agenteval.VerdictFail {
		st = agenteval.StatusQualityFailure
	}
	if v == agenteval.VerdictError {
		st = agenteval.StatusExecutionError
	}
	return &agenteval.Result{TestID: id, Suite: "s", Verdict: v, Score: score, ExecutionStatus: st, Scores: scores, DurationMS: 100,
		Usage: &agenteval.Usage{Calls: 1, InputTokens: 100, OutputTokens: 10}}
}

func turn(k string, v agenteval.Verdict, score float64, reason string, as ...agenteval.Assertion) agenteval.Score {
	return agenteval.Score{Name: k, Type: "composite", Verdict: v, Score: score, Reason: reason,
		Scores: []agenteval.Score{{Name: "tool_calls", Verdict: v, Score: score, Reason: reason, Assertions: as}}}
}

func trials(id string, passed, n int) *agenteval.Result {
	r := res(id, agenteval.VerdictPass, float64(passed)/float64(n))
	if float64(passed)/float64(n) < 0.8 {
		r.Verdict = agenteval.VerdictFail
	}
	for i := range n {
		v := agenteval.VerdictFail
		if i < passed {
			v = agenteval.VerdictPass
		}
		r.Trials = append(r.Trials, agenteval.Trial{Trial: i + 1, Verdict: v})
	}
	r.PassAtK = agenteval.PassAtKFor(n, passed)
	return r
}

func byID(c *Comparison) map[string]Test {
	m := map[string]Test{}
	for _, t := range c.Tests {
		m[t.TestID] = t
	}
	return m
}

func TestChanges(t *testing.T) {
	good := turn("turn-3", agenteval.VerdictPass, 1, "1 of 1 expected calls found", agenteval.Assertion{Text: "expected call 1: update_booking", Passed: true, Evidence: "matched call 1"})
	bad := turn("turn-3", agenteval.VerdictFail, 0, "0 of 1 expected calls found", agenteval.Assertion{Text: "expected call 1: update_booking", Evidence: "called search instead"})
	base := input("base", nil,
		res("regress", agenteval.VerdictPass, 1, good),
		res("fix", agenteval.VerdictFail, 0.5),
		res("same", agenteval.VerdictPass, 1),
		res("small-drop", agenteval.VerdictPass, 0.82),
		res("to-error", agenteval.VerdictPass, 1),
		res("score-only", agenteval.VerdictFail, 0.5),
		res("gone", agenteval.VerdictPass, 1),
	)
	cur := input("new", nil,
		res("regress", agenteval.VerdictFail, 0.67, bad),
		res("fix", agenteval.VerdictPass, 0.9),
		res("same", agenteval.VerdictPass, 1),
		res("small-drop", agenteval.VerdictFail, 0.79),
		res("to-error", agenteval.VerdictError, 0),
		res("score-only", agenteval.VerdictFail, 0.6),
		res("added", agenteval.VerdictPass, 1),
	)
	c, err := Compare(base, cur, Options{MinDelta: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	got := byID(c)
	want := map[string]Change{"regress": Regressed, "fix": Fixed, "same": Unchanged, "small-drop": Changed, "to-error": Regressed,
		"score-only": Changed, "gone": Gone, "added": New}
	for id, ch := range want {
		if got[id].Change != ch {
			t.Errorf("%s: %s, want %s", id, got[id].Change, ch)
		}
	}
	if c.Regressions() != 2 || c.Summary.Ignored != 1 || c.Summary.SingleTrial != 2 {
		t.Errorf("summary = %+v", c.Summary)
	}
	if !strings.Contains(got["small-drop"].Ignored, "below --min-delta 0.05") {
		t.Errorf("small-drop: %q", got["small-drop"].Ignored)
	}
	// Down to the turn and the check, with both reasons.
	checks := got["regress"].Checks
	var paths []string
	for _, ch := range checks {
		paths = append(paths, ch.Path)
	}
	if strings.Join(paths, "; ") != "turn-3; turn-3 › tool_calls; turn-3 › tool_calls › expected call 1: update_booking" {
		t.Fatalf("changed checks: %v", paths)
	}
	if last := checks[2]; last.Base.Reason != "matched call 1" || last.New.Reason != "called search instead" || last.New.Verdict != agenteval.VerdictFail {
		t.Errorf("assertion change = %+v / %+v", last.Base, last.New)
	}
	// Without --min-delta every drop from pass to fail counts.
	c, _ = Compare(base, cur, Options{})
	if c.Regressions() != 3 {
		t.Errorf("without min-delta: %d regressions", c.Regressions())
	}
}

// An unchanged rerun has nothing to report.
func TestUnchanged(t *testing.T) {
	rs := []*agenteval.Result{res("a", agenteval.VerdictPass, 1), res("b", agenteval.VerdictFail, 0.4), trials("c", 2, 3)}
	c, err := Compare(input("a", nil, rs...), input("b", nil, rs...), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Summary.Unchanged != 3 || c.Regressions() != 0 {
		t.Errorf("summary = %+v", c.Summary)
	}
}

func TestTrialsAreRates(t *testing.T) {
	base := input("base", nil, trials("flaky", 4, 5), trials("broken", 10, 10), trials("better", 2, 5), trials("steady", 3, 5))
	cur := input("new", nil, trials("flaky", 3, 5), trials("broken", 0, 10), trials("better", 5, 5), trials("steady", 3, 5))
	c, err := Compare(base, cur, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := byID(c)
	if g := got["flaky"]; g.Change != Regressed || !g.WithinNoise || !strings.Contains(g.Noise, "within noise: 4/5 → 3/5 trials passed (Fisher p=1.00)") || *g.RateDelta != -0.2 {
		t.Errorf("flaky = %+v (%s)", g, g.Noise)
	}
	if g := got["broken"]; g.Change != Regressed || g.WithinNoise || !strings.Contains(g.Noise, "beyond noise: 10/10 → 0/10") {
		t.Errorf("broken = %+v", g)
	}
	if g := got["better"]; g.Change != Fixed || !g.WithinNoise {
		t.Errorf("better = %+v", g)
	}
	if g := got["steady"]; g.Change != Unchanged || g.Noise != "" {
		t.Errorf("steady = %+v", g)
	}
	if c.Summary.Noisy != 2 || c.Summary.SingleTrial != 0 {
		t.Errorf("summary = %+v", c.Summary)
	}
	// pass@k of the whole run, from the trials.
	if len(c.Base.PassAtK) != 10 || len(c.New.PassAtK) != 10 {
		t.Errorf("pass@k: %d, %d", len(c.Base.PassAtK), len(c.New.PassAtK))
	}
	// --min-delta applies to pass rates: a one-trial-in-five drop is ignored.
	c, _ = Compare(base, cur, Options{MinDelta: 0.25})
	if g := byID(c)["flaky"]; g.Change != Changed || g.Ignored == "" {
		t.Errorf("flaky with min-delta 0.25 = %+v", g)
	}
}

func TestFisher(t *testing.T) {
	for _, tc := range []struct {
		c1, n1, c2, n2 int
		p              float64
	}{
		{3, 3, 0, 3, 0.1},
		{10, 10, 0, 10, 1.0825e-5},
		{4, 5, 3, 5, 1},
		{5, 5, 5, 5, 1},
		{1, 1, 0, 1, 1},
		{8, 10, 2, 10, 0.0230141},
		{1, 5, 5, 5, 0.047619},
	} {
		if got := fisherP(tc.c1, tc.n1, tc.c2, tc.n2); math.Abs(got-tc.p) > 1e-4*math.Max(tc.p, 1e-3) {
			t.Errorf("fisherP(%d/%d, %d/%d) = %.6g, want %.6g", tc.c1, tc.n1, tc.c2, tc.n2, got, tc.p)
		}
	}
}

func goldenComparison(t *testing.T) *Comparison {
	t0 := time.Date(2026, 11, 1, 9, 30, 0, 0, time.UTC)
	cost := func(c float64) *float64 { return &c }
	mk := func(id string, v agenteval.Verdict, score float64, c float64, scores ...agenteval.Score) *agenteval.Result {
		r := res(id, v, score, scores...)
		r.Suite = "quickstart"
		r.Usage.CostUSD = cost(c)
		return r
	}
	good := turn("turn-3", agenteval.VerdictPass, 1, "1 of 1 expected calls found in order", agenteval.Assertion{Text: "expected call 1: update_booking({\"time\":\"8pm\"})", Passed: true, Evidence: "matched call 1"})
	bad := turn("turn-3", agenteval.VerdictFail, 0, "0 of 1 expected calls found in order", agenteval.Assertion{Text: "expected call 1: update_booking({\"time\":\"8pm\"})", Evidence: "no call to update_booking; called search_tables | <b>instead</b>"})
	base := input("baseline", &results.Header{RunID: "3f9a2b1c0d4e", Started: t0, Target: "replay", Git: &results.Git{Commit: "0123456789abcdef"}},
		mk("book-and-move", agenteval.VerdictPass, 1, 0.002, turn("turn-1", agenteval.VerdictPass, 1, "ok"), good),
		mk("opening_hours", agenteval.VerdictFail, 0.5, 0.001),
		mk("refund", agenteval.VerdictPass, 1, 0.003),
		mk("retired", agenteval.VerdictPass, 1, 0.001))
	base.Label = "baseline"
	cur := input("7c1d22aa9b01", &results.Header{RunID: "7c1d22aa9b01", Started: t0.Add(26 * time.Hour), Target: "replay"},
		mk("book-and-move", agenteval.VerdictFail, 0.67, 0.002, turn("turn-1", agenteval.VerdictPass, 1, "ok"), bad),
		mk("opening_hours", agenteval.VerdictPass, 1, 0.001),
		mk("refund", agenteval.VerdictPass, 1, 0.004),
		mk("greeting", agenteval.VerdictPass, 1, 0.001))
	c, err := Compare(base, cur, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestMarkdownGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := goldenComparison(t).WriteMarkdown(&buf); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "testdata/compare.md.golden", buf.Bytes())
}

func TestTableGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := goldenComparison(t).WriteTable(&buf, false); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "testdata/compare.txt.golden", buf.Bytes())
}

func TestJSON(t *testing.T) {
	var buf bytes.Buffer
	if err := goldenComparison(t).WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var back Comparison
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if back.Summary.Regressed != 1 || back.Summary.Fixed != 1 || back.Summary.New != 1 || back.Summary.Gone != 1 || len(back.Tests) != 5 || back.Base.RunID != "3f9a2b1c0d4e" {
		t.Errorf("round trip: %+v", back.Summary)
	}
}

func on(target string, r *agenteval.Result) *agenteval.Result {
	r.Target = target
	return r
}

// A run of two targets holds each test once per target, and each is
// compared with the same target's result: a test that broke on one target
// is a regression even when it still passes on the other, whichever
// result comes last.
func TestTargetsKeyResults(t *testing.T) {
	base := input("base", nil,
		on("alpha", res("refund", agenteval.VerdictPass, 1)), on("alpha", res("hours", agenteval.VerdictPass, 1)),
		on("beta", res("refund", agenteval.VerdictPass, 1)), on("beta", res("hours", agenteval.VerdictPass, 1)))
	for _, order := range [][2]string{{"alpha", "beta"}, {"beta", "alpha"}} {
		var rs []*agenteval.Result
		for _, tg := range order {
			v, score := agenteval.VerdictPass, 1.0
			if tg == "alpha" {
				v, score = agenteval.VerdictFail, 0.5
			}
			rs = append(rs, on(tg, res("refund", v, score)), on(tg, res("hours", agenteval.VerdictPass, 1)))
		}
		c, err := Compare(base, input("new", nil, rs...), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if c.Regressions() != 1 || c.Summary.Unchanged != 3 || len(c.Tests) != 4 {
			t.Errorf("%v: summary = %+v, %d tests", order, c.Summary, len(c.Tests))
		}
		for _, tc := range c.Tests {
			if (tc.Change == Regressed) != (tc.TestID == "refund" && tc.Target == "alpha") {
				t.Errorf("%v: %s on %s: %s", order, tc.TestID, tc.Target, tc.Change)
			}
		}
		if !c.MultiTarget || len(c.Targets) != 0 || c.OnlyBase != nil || c.OnlyNew != nil {
			t.Errorf("%v: targets %v, only %v / %v", order, c.Targets, c.OnlyBase, c.OnlyNew)
		}
		var tab, mdb bytes.Buffer
		c.WriteTable(&tab, false)
		c.WriteMarkdown(&mdb)
		if !strings.Contains(tab.String(), "\nREGRESSED\n  s/refund [alpha]  pass 1.00 → fail 0.50") || strings.Contains(tab.String(), "targets:") {
			t.Errorf("%v: table:\n%s", order, tab.String())
		}
		if !strings.Contains(mdb.String(), "| s/refund \\[alpha\\] | pass 1.00 | fail 0.50 |") {
			t.Errorf("%v: markdown:\n%s", order, mdb.String())
		}
	}
}

// Runs of different targets say which targets were compared, and the
// tests of a target only one run has are new or gone.
func TestTargetsMatched(t *testing.T) {
	base := input("base", nil,
		on("alpha", res("a", agenteval.VerdictPass, 1)), on("beta", res("a", agenteval.VerdictPass, 1)))
	cur := input("new", nil,
		on("alpha", res("a", agenteval.VerdictFail, 0)), on("gamma", res("a", agenteval.VerdictPass, 1)))
	c, err := Compare(base, cur, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Targets) != 1 || c.Targets[0] != (TargetPair{"alpha", "alpha"}) || strings.Join(c.OnlyBase, ",") != "beta" || strings.Join(c.OnlyNew, ",") != "gamma" {
		t.Errorf("targets %v, only in base %v, only in new %v", c.Targets, c.OnlyBase, c.OnlyNew)
	}
	if c.Summary.Regressed != 1 || c.Summary.New != 1 || c.Summary.Gone != 1 {
		t.Errorf("summary = %+v", c.Summary)
	}
	const line = "targets: compared alpha; only in base: beta; only in new: gamma"
	var tab, mdb, js bytes.Buffer
	c.WriteTable(&tab, false)
	c.WriteMarkdown(&mdb)
	c.WriteJSON(&js)
	for _, want := range []string{line + "\n", "\n  s/a [gamma]  absent → pass 1.00\n", "\n  s/a [beta]  pass 1.00 → absent\n"} {
		if !strings.Contains(tab.String(), want) {
			t.Errorf("the table lacks %q:\n%s", want, tab.String())
		}
	}
	if !strings.Contains(mdb.String(), "\n"+line+"\n") {
		t.Errorf("the markdown lacks the targets:\n%s", mdb.String())
	}
	for _, want := range []string{`"targets": [`, `"only_base_targets": [`, `"only_new_targets": [`, `"target": "gamma"`} {
		if !strings.Contains(js.String(), want) {
			t.Errorf("the JSON lacks %s:\n%s", want, js.String())
		}
	}

	// One target against another: a new version of an agent run as a
	// target of its own is compared with the old one, test by test.
	c, err = Compare(input("base", nil, on("good", res("a", agenteval.VerdictPass, 1))), input("new", nil, on("bad", res("a", agenteval.VerdictFail, 0))), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Regressions() != 1 || c.MultiTarget || len(c.Targets) != 1 || c.Tests[0].BaseTarget != "good" || c.Tests[0].Target != "bad" {
		t.Errorf("good → bad: %+v, targets %v, tests %+v", c.Summary, c.Targets, c.Tests)
	}
	tab.Reset()
	c.WriteTable(&tab, false)
	if !strings.Contains(tab.String(), "targets: compared good (base) with bad (new)\n") || !strings.Contains(tab.String(), "\n  s/a  pass 1.00 → fail 0.00") {
		t.Errorf("good → bad:\n%s", tab.String())
	}
}
