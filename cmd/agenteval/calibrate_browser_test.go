package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/internal/browser"
	"github.com/agenteval/agenteval/results"
	"github.com/agenteval/agenteval/store"
	"github.com/agenteval/agenteval/store/sqlite"
	"github.com/chromedp/chromedp"
)

// judgedResult is a test whose rubric decided one criterion by a vote of
// three, k of them for pass.
func judgedResult(id, criterion string, k int) *agenteval.Result {
	v := agenteval.VerdictFail
	if k >= 2 {
		v = agenteval.VerdictPass
	}
	return &agenteval.Result{TestID: id, Suite: "desk", Target: "bot", Verdict: v, ExecutionStatus: agenteval.StatusOf(v),
		Scores: []agenteval.Score{{Name: "rubrics", Type: "rubrics", Verdict: v, Weight: 1,
			Assertions: []agenteval.Assertion{{Text: "criterion-1: " + criterion, Passed: k >= 2, Evidence: "because"}},
			Details:    map[string]any{"self_consistency": []map[string]any{{"criterion": "criterion-1: " + criterion, "pass_votes": k, "samples": 3}}}}},
		Output: agenteval.Conversation{{Role: agenteval.RoleUser, Content: "hi"}, {Role: agenteval.RoleAssistant, Content: "hello"}}}
}

// The HTML report of a labelled run shows the judge's agreement with the
// labels, its false passes and the criteria too vague to judge; and, as
// the judge voted, how often its samples agreed.
func TestBrowserReportAgreement(t *testing.T) {
	ctx := browser.New(t, 1400, 900)
	dir := t.TempDir()
	t.Chdir(dir)
	db, err := sqlite.Open(filepath.Join(dir, "runs.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	bg := context.Background()
	if err := db.StartRun(bg, &results.Header{RunID: "r1", Started: time.Now(), Judge: "openai:gpt-4o-mini", Suites: []results.SuiteFile{{Path: "desk.yaml", Name: "desk"}}}); err != nil {
		t.Fatal(err)
	}
	// Judge pass, pass, fail, pass (by 3, 3, 1 and 2 votes of 3); people
	// pass, fail, fail, fail: one agreement on each side, two false
	// passes of three human fails.
	votes := []int{3, 3, 1, 2}
	human := []agenteval.Verdict{agenteval.VerdictPass, agenteval.VerdictFail, agenteval.VerdictFail, agenteval.VerdictFail}
	var labels []store.Label
	for i, k := range votes {
		id := "t" + string(rune('1'+i))
		crit := "The reply is polite."
		if i >= 2 {
			crit = "The reply names the time."
		}
		db.AddResult("r1", judgedResult(id, crit, k))
		labels = append(labels, store.Label{LabelKey: store.LabelKey{RunID: "r1", Suite: "desk", TestID: id, Target: "bot", Score: "rubrics", Criterion: "criterion-1: " + crit},
			Human: human[i], Labeller: "Ana"})
	}
	if err := db.FinishRun(bg, "r1", store.Finish{Status: store.Done}); err != nil {
		t.Fatal(err)
	}
	if err := db.PutLabels(bg, labels); err != nil {
		t.Fatal(err)
	}
	db.Close()
	mainIn(t, 0, "report", "r1", "--store", "runs.db", "-o", "r1.html")

	if err := browser.HookScripts(ctx); err != nil {
		t.Fatal(err)
	}
	step(t, ctx, "open the report", chromedp.Navigate("file://"+filepath.Join(dir, "r1.html")), chromedp.WaitVisible(chromedp.CSS(".row")))
	cards := eval[[]string](t, ctx, `Array.from(document.querySelectorAll(".summary .card")).map(function(c){return c.innerText.replace(/\s+/g," ")})`)
	text := strings.Join(cards, "\n")
	// n 4: PP 1, PF 2, FP 0, FF 1; p_o 0.5; p_e (3·1 + 1·3)/16 = 0.375;
	// κ = 0.125 / 0.625 = 0.2. Self-consistency (1 + 1 + 2/3 + 2/3) / 4.
	for _, want := range []string{
		"JUDGE AGREEMENT 50.0% κ 0.20 · 4 labels",
		"FALSE PASSES 2 of 3 66.7% [20.8%, 93.9%]",
		"TOO VAGUE TO JUDGE 2",
		"JUDGE SELF-CONSISTENCY 83.3% 2 of 4 votes split",
	} {
		if !strings.Contains(strings.ToUpper(text), strings.ToUpper(want)) {
			t.Errorf("no card %q in:\n%s", want, text)
		}
	}
	browser.Screenshot(t, ctx, "report-agreement")
	noScriptRan(t, ctx)
}
