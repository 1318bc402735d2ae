package main

import (
	"bytes"
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/internal/browser"
	"github.com/agenteval/agenteval/results"
	"github.com/agenteval/agenteval/store"
	"github.com/agenteval/agenteval/store/sqlite"
	"github.com/agenteval/agenteval/view"
	"github.com/chromedp/chromedp"
)

// mainIn runs the CLI in the working directory and checks its exit code.
func mainIn(t *testing.T, want int, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	if got := Main(args, strings.NewReader(""), &out, &errb); got != want {
		t.Fatalf("agenteval %s: exit %d, want %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), got, want, out.String(), errb.String())
	}
	return out.String()
}

// browserFixture runs the restaurant fixture twice, good then bad, in a
// new project folder: the store holds both runs, the first tagged
// baseline, and new.html is the bad run's report (run --html).
func browserFixture(t *testing.T) string {
	dir := t.TempDir()
	for _, f := range []string{"suite.yaml", "good.jsonl", "bad.jsonl"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "examples", "regression", f))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, f), b, 0o644)
	}
	t.Chdir(dir)
	mainIn(t, 0, "run", "suite.yaml", "--target", "good", "-q", "-o", "base.jsonl")
	mainIn(t, 0, "tag", "last", "baseline")
	mainIn(t, 1, "run", "suite.yaml", "--target", "bad", "-q", "-o", "new.jsonl", "--html", "new.html")
	mainIn(t, 0, "report", "baseline", "last", "-o", "compare.html")
	return dir
}

func step(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	c, cancel := browser.Timeout(ctx, 15*time.Second)
	defer cancel()
	if err := chromedp.Do(c, steps...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func eval[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	c, cancel := browser.Timeout(ctx, 15*time.Second)
	defer cancel()
	v, err := chromedp.Run(c, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("evaluate %s: %v", js, err)
	}
	return v
}

// waitFor polls a JavaScript condition until it holds.
func waitFor(t *testing.T, ctx context.Context, what, cond string) {
	t.Helper()
	c, cancel := browser.Timeout(ctx, 15*time.Second)
	defer cancel()
	if _, err := chromedp.Run(c, chromedp.Poll[bool](cond)); err != nil {
		t.Fatalf("waiting until %s: %v", what, err)
	}
}

// noScriptRan checks that no payload ran, that no blocked one tried, and
// that none became an element.
func noScriptRan(t *testing.T, ctx context.Context) {
	t.Helper()
	ran, err := browser.RanScripts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(ran) > 0 {
		t.Errorf("scripts from results ran or tried to: %v", ran)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll("#app img, #app iframe, #app svg, #app script, #app [onerror], #app [onload], #app a[href^='javascript']").length`); n > 0 {
		t.Errorf("%d elements came from result content", n)
	}
}

const rowsJS = `Array.from(document.querySelectorAll(".row")).map(function(r){return r.innerText.replace(/\s+/g," ")})`

// The report written by run --html, as a person uses it: the failing test
// is listed; clicking it shows turn 3 with its reason; the Failed filter
// hides passing tests; the payloads in a reply, a tool call and a tool
// result show as text and run nothing.
func TestBrowserReport(t *testing.T) {
	ctx := browser.New(t, 1400, 900)
	dir := browserFixture(t)
	if err := browser.HookScripts(ctx); err != nil {
		t.Fatal(err)
	}
	step(t, ctx, "open the report", chromedp.Navigate("file://"+filepath.Join(dir, "new.html")), chromedp.WaitVisible(chromedp.CSS(".row")))
	rows := eval[[]string](t, ctx, rowsJS)
	if len(rows) != 6 {
		t.Fatalf("the list shows %d tests, want 6: %q", len(rows), rows)
	}
	var failing string
	for _, r := range rows {
		if strings.Contains(r, "book-and-move") {
			failing = r
		}
	}
	if !strings.HasPrefix(failing, "FAIL") || !strings.Contains(failing, "turn-3") {
		t.Errorf("the failing test is not listed as failing at turn 3: %q", failing)
	}
	if s := eval[string](t, ctx, `document.querySelector(".card.passrate .v").innerText`); s != "66.7%" {
		t.Errorf("pass rate card = %q", s)
	}

	step(t, ctx, "open the failing test", chromedp.Click(chromedp.CSS(`.row[data-key$="book-and-move"]`)), chromedp.WaitVisible(chromedp.CSS(`.turn[data-turn="3"]`)))
	turn3 := eval[string](t, ctx, `document.querySelector('.turn[data-turn="3"]').innerText`)
	for _, want := range []string{"Turn 3", "FAIL", "Actually, make it 8pm.", "search_tables", "0 of 1 expected calls found in order", "update_booking was never called", `missing "8pm" in the reply`} {
		if !strings.Contains(turn3, want) {
			t.Errorf("turn 3 lacks %q:\n%s", want, turn3)
		}
	}
	if turn1 := eval[string](t, ctx, `document.querySelector('.turn[data-turn="1"]').innerText`); !strings.Contains(turn1, "PASS") || !strings.Contains(turn1, "check_availability") {
		t.Errorf("turn 1:\n%s", turn1)
	}
	step(t, ctx, "show turn 3", chromedp.Evaluate[chromedp.Void](`document.querySelector('.turn[data-turn="3"]').scrollIntoView()`))
	browser.Screenshot(t, ctx, "report")

	step(t, ctx, "show failed tests only", chromedp.Click(chromedp.CSS(`button[data-show="failed"]`)))
	waitFor(t, ctx, "the filter applies", `document.querySelectorAll(".row").length === 2`)
	for _, r := range eval[[]string](t, ctx, rowsJS) {
		if !strings.HasPrefix(r, "FAIL") {
			t.Errorf("the Failed filter shows %q", r)
		}
	}
	step(t, ctx, "search", chromedp.Click(chromedp.CSS(`button[data-show="all"]`)), chromedp.SendKeys(chromedp.CSS(`input[type=search]`), "garden room"))
	waitFor(t, ctx, "the search finds the transcript", `document.querySelectorAll(".row").length === 0`)
	// The bad run's large-party reply no longer mentions the garden room;
	// the word "sorry" is in two transcripts.
	step(t, ctx, "search again", chromedp.Evaluate[chromedp.Void](`(function(){var s=document.querySelector("input[type=search]"); s.value="twelve"; s.dispatchEvent(new Event("input"));})()`))
	waitFor(t, ctx, "the search matches a transcript", `document.querySelectorAll(".row").length === 1 && document.querySelector(".row").innerText.indexOf("large-party") >= 0`)
	step(t, ctx, "clear the search", chromedp.Evaluate[chromedp.Void](`(function(){var s=document.querySelector("input[type=search]"); s.value=""; s.dispatchEvent(new Event("input"));})()`))
	waitFor(t, ctx, "all tests are back", `document.querySelectorAll(".row").length === 6`)

	step(t, ctx, "open the test with payloads", chromedp.Click(chromedp.CSS(`.row[data-key$="echo-markup"]`)), chromedp.WaitVisible(chromedp.CSS(".msg.assistant")))
	reply := eval[string](t, ctx, `document.querySelector(".msg.assistant").innerText`)
	for _, want := range []string{"<b>hello</b>", "<script>__pwn('script tag')</script>", `<img src=x onerror="__pwn('img onerror')">`} {
		if !strings.Contains(reply, want) {
			t.Errorf("the reply does not show %q as text:\n%s", want, reply)
		}
	}
	noScriptRan(t, ctx)
	browser.Screenshot(t, ctx, "report-escaped")
	step(t, ctx, "open the test with payloads in tool calls", chromedp.Click(chromedp.CSS(`.row[data-key$="cancel-booking"]`)), chromedp.WaitVisible(chromedp.CSS(".call")))
	if call := eval[string](t, ctx, `document.querySelector(".call").innerText`); !strings.Contains(call, `onerror=\"__pwn('tool args')\"`) || !strings.Contains(call, "<script>__pwn('tool result')</script>") {
		t.Errorf("the tool call does not show its payloads as text:\n%s", call)
	}
	noScriptRan(t, ctx)

	// A link to a test opens it.
	step(t, ctx, "open a link to a test", chromedp.Navigate("file://"+filepath.Join(dir, "new.html")+"#t=restaurant%1Flarge-party"), chromedp.WaitVisible(chromedp.CSS(".test-head")))
	if h := eval[string](t, ctx, `document.querySelector(".test-head h2").innerText`); h != "large-party" {
		t.Errorf("the link opened %q", h)
	}
}

// Two runs side by side: the regression is listed with the turn and the
// checks that changed, and both conversations.
func TestBrowserCompareReport(t *testing.T) {
	ctx := browser.New(t, 1400, 1000)
	dir := browserFixture(t)
	if err := browser.HookScripts(ctx); err != nil {
		t.Fatal(err)
	}
	step(t, ctx, "open the comparison", chromedp.Navigate("file://"+filepath.Join(dir, "compare.html")), chromedp.WaitVisible(chromedp.CSS(".row")))
	rows := eval[[]string](t, ctx, rowsJS)
	if len(rows) != 2 || !strings.HasPrefix(rows[0], "REGRESSED") {
		t.Fatalf("changed tests = %q, want the 2 regressions", rows)
	}
	step(t, ctx, "open the regression", chromedp.Click(chromedp.CSS(`.row[data-key$="book-and-move"]`)), chromedp.WaitVisible(chromedp.CSS("table.changes")))
	changes := eval[string](t, ctx, `document.querySelector("table.changes").innerText`)
	for _, want := range []string{"turn-3 › tool_calls", "matched call 1", "update_booking was never called"} {
		if !strings.Contains(changes, want) {
			t.Errorf("the changes lack %q:\n%s", want, changes)
		}
	}
	if n := eval[int](t, ctx, `document.querySelectorAll(".sides .conv").length`); n != 2 {
		t.Errorf("%d conversations side by side, want 2", n)
	}
	noScriptRan(t, ctx)
	browser.Screenshot(t, ctx, "compare")
}

// The viewer lists the stored runs, opens one, compares two picked from
// the list, and follows a run in progress.
func TestBrowserViewer(t *testing.T) {
	ctx := browser.New(t, 1400, 900)
	dir := browserFixture(t)
	if err := browser.HookScripts(ctx); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, ".agenteval", "agenteval.db")
	db, err := sqlite.Open(path, sqlite.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	srv := httptest.NewServer((&view.Server{Store: db, Poll: 100 * time.Millisecond}).Handler())
	defer srv.Close()

	step(t, ctx, "open the viewer", chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS(".runs-table input")))
	runs := eval[[]string](t, ctx, `Array.from(document.querySelectorAll(".runs-table tr")).slice(1).map(function(r){return r.innerText.replace(/\s+/g," ")})`)
	if len(runs) != 2 || !strings.Contains(runs[1], "baseline") || !strings.Contains(runs[0], "bad") {
		t.Fatalf("runs listed: %q", runs)
	}
	step(t, ctx, "pick two runs", chromedp.Click(chromedp.CSS(`.runs-table tr:nth-child(2) input`)), chromedp.Click(chromedp.CSS(`.runs-table tr:nth-child(3) input`)))
	browser.Screenshot(t, ctx, "view-runs")
	step(t, ctx, "compare them", chromedp.Click(chromedp.CSS(".runs-page button")), chromedp.WaitVisible(chromedp.CSS(".row")))
	if url := eval[string](t, ctx, `location.pathname + location.search`); !strings.HasPrefix(url, "/compare?base=") {
		t.Errorf("compare went to %s", url)
	}
	if rows := eval[[]string](t, ctx, rowsJS); len(rows) != 2 || !strings.HasPrefix(rows[0], "REGRESSED") {
		t.Errorf("compare rows = %q", rows)
	}
	step(t, ctx, "open the regression", chromedp.Click(chromedp.CSS(`.row[data-key$="book-and-move"]`)), chromedp.WaitVisible(chromedp.CSS("table.changes")))
	browser.Screenshot(t, ctx, "view-compare")
	noScriptRan(t, ctx)

	step(t, ctx, "open the baseline by its tag", chromedp.Navigate(srv.URL+"/runs/baseline"), chromedp.WaitVisible(chromedp.CSS(".row")))
	if n := eval[int](t, ctx, `document.querySelectorAll(".row").length`); n != 6 {
		t.Errorf("the baseline shows %d tests", n)
	}

	// A run in progress, written by another handle as a run would.
	w, err := sqlite.Open(path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	var got []*agenteval.Result
	if _, err := results.ReadResults(filepath.Join(dir, "new.jsonl"), func(r *agenteval.Result) error {
		got = append(got, r)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	h := &results.Header{RunID: "live00000001", Started: time.Now().UTC(), Command: "run", Target: "bad",
		Suites: []results.SuiteFile{{Path: "suite.yaml", Name: "restaurant"}}}
	bg := context.Background()
	if err := w.StartRun(bg, h); err != nil {
		t.Fatal(err)
	}
	for _, r := range got[:2] {
		w.AddResult(h.RunID, r)
	}
	waitStored(t, db, h.RunID, 2)
	step(t, ctx, "open the live run", chromedp.Navigate(srv.URL+"/runs/"+h.RunID), chromedp.WaitVisible(chromedp.CSS(".top .live")))
	waitFor(t, ctx, "the first results show", `document.querySelectorAll(".row").length === 2`)
	for _, r := range got[2:] {
		w.AddResult(h.RunID, r)
	}
	waitFor(t, ctx, "later results arrive live", `document.querySelectorAll(".row").length === 6`)
	waitFor(t, ctx, "the totals follow", `document.querySelector(".card.passrate .sub").innerText.indexOf("of 6 tests") >= 0`)
	browser.Screenshot(t, ctx, "view-live")
	if err := w.FinishRun(bg, h.RunID, store.Finish{Status: store.Done, DurationMS: 1200}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the page says the run finished", `document.querySelector(".top .live").innerText === "run finished"`)
	noScriptRan(t, ctx)

	// The list of runs takes in a run that starts while it is open.
	step(t, ctx, "open the list again", chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS(".runs-table input")))
	waitFor(t, ctx, "three runs are listed", `document.querySelectorAll(".runs-table tr").length === 4`)
	h2 := &results.Header{RunID: "late00000002", Started: time.Now().UTC(), Command: "run", Target: "good", Suites: h.Suites}
	if err := w.StartRun(bg, h2); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the new run shows without a reload", `document.querySelectorAll(".runs-table tr").length === 5 && document.querySelector(".runs-table").innerText.indexOf("late00000002") >= 0`)
}

func waitStored(t *testing.T, db *sqlite.DB, id string, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		r, err := db.Run(context.Background(), id)
		if err == nil && r.Total >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s never stored %d results (%v)", id, n, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
