package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agenteval/agenteval/internal/browser"
	"github.com/agenteval/agenteval/internal/fakellm"
	"github.com/agenteval/agenteval/store"
	"github.com/agenteval/agenteval/store/sqlite"
	"github.com/chromedp/chromedp"
)

// labelSuite has judged criteria at the top of a test and in the turns
// of a conversation. The judge (fakellm's literal-minded one) fails the
// criteria whose quoted phrase the agent never says; the rest pass. A
// criterion carries markup, which must stay text.
const labelSuite = `name: shop
tests:
  - id: refund
    input: I want my money back for order 42.
    assertions:
      - type: rubrics
        criteria:
          - id: polite
            outcome: The reply is polite.
          - id: number
            outcome: The reply gives the "refund number <img src=x onerror=__pwn('criterion')>".
  - id: exchange
    mode: conversation
    turns:
      - input: Can I swap the kettle?
        assertions:
          - The reply offers an exchange.
      - input: Thanks, bye.
        assertions:
          - The reply says "goodbye".
`

// syncBuffer is a buffer the viewer writes while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startView runs agenteval view in the working directory, as the CLI
// does, until the test ends, and returns its address.
func startView(t *testing.T, o viewOptions) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var out, errs syncBuffer
	done := make(chan error, 1)
	go func() { done <- runView(ctx, newEnv(strings.NewReader(""), &out, &errs), o) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Errorf("view did not stop")
		}
	})
	addr := regexp.MustCompile(`http://(127\.0\.0\.1:\d+)/`)
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if m := addr.FindStringSubmatch(out.String()); m != nil {
			if !strings.Contains(out.String(), "labels: as "+o.as) {
				t.Errorf("view does not say who labels:\n%s", out.String())
			}
			return "http://" + m[1]
		}
		select {
		case err := <-done:
			t.Fatalf("view stopped: %v\n%s%s", err, out.String(), errs.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatalf("view never said where it listens:\n%s%s", out.String(), errs.String())
	return ""
}

// A person labels a judge's verdict in the viewer: on a judged run's page
// they disagree with a criterion the judge passed, write a note, save,
// reload and find it; the label is in the store under their name; a
// criterion in a conversation's turn takes a label too. Writes without
// the page's token, and from another site's page, are refused and change
// nothing.
func TestBrowserLabels(t *testing.T) {
	ctx := browser.New(t, 1400, 1000)
	if err := browser.HookScripts(ctx); err != nil {
		t.Fatal(err)
	}
	fake, err := fakellm.Start(fakellm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fake.Close)
	fake.Add(
		&fakellm.Rule{Match: func(r *fakellm.Request) bool { return r.SchemaName() != "" }, Reply: fakellm.StructureJudge()},
		&fakellm.Rule{Reply: fakellm.Reply{Content: "Sorry about that. Order 42 is refunded, and yes, we can exchange the kettle."}},
	)
	t.Setenv("OPENAI_BASE_URL", fake.URL)
	t.Setenv("OPENAI_API_KEY", "k")
	t.Setenv("AGENTEVAL_STORE", "")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "suite.yaml"), []byte(labelSuite), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	// The judge fails "refund number" and "goodbye": the agent says neither.
	mainIn(t, 1, "run", "suite.yaml", "--target", "openai:fake", "--judge", "openai:fake", "--no-cache", "-q", "-o", "run.jsonl")
	base := startView(t, viewOptions{host: "127.0.0.1", as: "Test Person", asSet: true})
	db, err := sqlite.Open(filepath.Join(dir, ".agenteval", "agenteval.db"), sqlite.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	runID, err := store.Resolve(context.Background(), db, "last")
	if err != nil {
		t.Fatal(err)
	}
	labels := func() []store.Label {
		t.Helper()
		ls, err := db.RunLabels(context.Background(), runID)
		if err != nil {
			t.Fatal(err)
		}
		return ls
	}

	step(t, ctx, "open the run", chromedp.Navigate(base+"/runs/"+runID), chromedp.WaitVisible(chromedp.CSS(".row")))
	waitFor(t, ctx, "the labels' totals show", `(document.querySelector(".top .lbl-summary")||{}).innerText === "labels 0 of 4 judged criteria · 0 agree with the judge (–)"`)
	step(t, ctx, "open the refund test", chromedp.Click(chromedp.CSS(`.row[data-key$="refund"]`)), chromedp.WaitVisible(chromedp.CSS(".lbl")))
	if n := eval[int](t, ctx, `document.querySelectorAll(".detail .lbl").length`); n != 2 {
		t.Fatalf("the refund test shows %d labelling lines, want 2 (one per judged criterion)", n)
	}
	// The judged criteria are the rubric's, each with its line under it.
	const numberLine = `Array.from(document.querySelectorAll(".detail .assert")).filter(function(a){return a.innerText.indexOf("refund number") >= 0})[0].nextElementSibling`
	const politeLine = `Array.from(document.querySelectorAll(".detail .assert")).filter(function(a){return a.innerText.indexOf("polite") >= 0})[0].nextElementSibling`
	if cls := eval[string](t, ctx, numberLine+`.className`); cls != "lbl" {
		t.Fatalf("the line under the refund-number criterion is %q", cls)
	}
	if s := eval[string](t, ctx, `document.querySelector(".detail .lbl-test").innerText`); s != "labelled 0 of 2 judged" {
		t.Errorf("the test's totals: %q", s)
	}

	// The judge failed "refund number"; the person disagrees: it holds.
	step(t, ctx, "disagree", chromedp.Click(chromedp.JSPath(numberLine+`.querySelector(".lbl-disagree")`)))
	waitFor(t, ctx, "the label is saved", numberLine+`.querySelector(".lbl-status").innerText.indexOf("labelled by Test Person") === 0`)
	const note = `The reply says "refunded" <img src=x onerror=__pwn('note')>`
	step(t, ctx, "type a note", chromedp.SendKeys(chromedp.JSPath(numberLine+`.querySelector(".lbl-note")`), note))
	if eval[bool](t, ctx, numberLine+`.querySelector(".lbl-save").disabled`) {
		t.Fatalf("save is not enabled after typing a note")
	}
	step(t, ctx, "save", chromedp.Click(chromedp.JSPath(numberLine+`.querySelector(".lbl-save")`)))
	waitFor(t, ctx, "the note is saved", numberLine+`.querySelector(".lbl-save").disabled && `+numberLine+`.querySelector(".lbl-status").innerText.indexOf("labelled by Test Person") === 0`)
	waitFor(t, ctx, "the totals follow", `document.querySelector(".top .lbl-summary").innerText === "labels 1 of 4 judged criteria · 0 agree with the judge (0%)"`)
	step(t, ctx, "agree on politeness", chromedp.Click(chromedp.JSPath(politeLine+`.querySelector(".lbl-agree")`)))
	waitFor(t, ctx, "the totals count the agreement", `document.querySelector(".top .lbl-summary").innerText === "labels 2 of 4 judged criteria · 1 agree with the judge (50%)"`)
	browser.Screenshot(t, ctx, "view-labels")

	ls := labels()
	if len(ls) != 2 {
		t.Fatalf("stored labels: %+v", ls)
	}
	var number *store.Label
	for i := range ls {
		if strings.Contains(ls[i].Criterion, "refund number") {
			number = &ls[i]
		}
	}
	if number == nil || number.Human != "pass" || number.Note != note || number.Labeller != "Test Person" || number.TestID != "refund" ||
		number.Suite != "shop" || number.Target != "openai:fake" || number.Trial != 0 || number.Score == "" {
		t.Fatalf("the disagreement stored: %+v", number)
	}

	// Reloaded, the page shows the labels as they were left.
	step(t, ctx, "reload", chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(".lbl")))
	waitFor(t, ctx, "the disagreement shows", numberLine+`.className === "lbl disagree"`)
	if got := eval[string](t, ctx, numberLine+`.querySelector(".lbl-note").value`); got != note {
		t.Errorf("the note after a reload: %q", got)
	}
	if on := eval[string](t, ctx, numberLine+`.querySelector("button.on").innerText`); on != "disagree" {
		t.Errorf("the button on after a reload: %q", on)
	}
	waitFor(t, ctx, "the totals after a reload", `document.querySelector(".top .lbl-summary").innerText.indexOf("labels 2 of 4") === 0`)

	// A criterion of a conversation's turn: the judge failed "goodbye".
	step(t, ctx, "open the conversation", chromedp.Click(chromedp.CSS(`.row[data-key$="exchange"]`)), chromedp.WaitVisible(chromedp.CSS(`.turn[data-turn="2"] .lbl`)))
	if n := eval[int](t, ctx, `document.querySelectorAll(".detail .lbl").length`); n != 2 {
		t.Fatalf("the conversation shows %d labelling lines, want 2", n)
	}
	step(t, ctx, "agree the goodbye is missing", chromedp.Click(chromedp.CSS(`.turn[data-turn="2"] .lbl .lbl-agree`)))
	waitFor(t, ctx, "the totals count it", `document.querySelector(".top .lbl-summary").innerText === "labels 3 of 4 judged criteria · 2 agree with the judge (67%)"`)
	var turn *store.Label
	for _, l := range labels() {
		if l.TestID == "exchange" {
			turn = &l
		}
	}
	if turn == nil || !strings.HasPrefix(turn.Score, "turn-2") || turn.Human != "fail" || !strings.Contains(turn.Criterion, "goodbye") {
		t.Fatalf("the turn's label: %+v", turn)
	}
	noScriptRan(t, ctx)

	// The page's own script, without the token: refused, nothing stored.
	refused := evalAsync[string](t, ctx, `(async function(){
	  var r = await fetch("/api/labels", {method: "POST", headers: {"Content-Type": "application/json"},
	    body: JSON.stringify({run_id: `+jsString(runID)+`, suite: "shop", test_id: "refund", target: "openai:fake", score: `+jsString(number.Score)+`, criterion: `+jsString(number.Criterion)+`, human: "fail"})});
	  return r.status + " " + (await r.json()).error;
	})()`)
	if !strings.HasPrefix(refused, "403 refused: a write needs the viewer's session token") {
		t.Errorf("a write without the token: %s", refused)
	}

	// Another site's page, which knows everything but the token.
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<!doctype html><title>elsewhere</title><p>elsewhere</p>`)
	}))
	defer evil.Close()
	step(t, ctx, "open another site", chromedp.Navigate(evil.URL+"/"), chromedp.WaitVisible(chromedp.CSS("p")))
	body := `JSON.stringify({run_id: ` + jsString(runID) + `, suite: "shop", test_id: "refund", target: "openai:fake", score: ` + jsString(number.Score) + `, criterion: ` + jsString(number.Criterion) + `, human: "fail", note: "forged"})`
	forged := evalAsync[[]string](t, ctx, `(async function(){
	  var out = [];
	  // A request a form could send: no preflight, so it reaches the viewer.
	  try { var r = await fetch(`+jsString(base+"/api/labels")+`, {method: "POST", mode: "no-cors", headers: {"Content-Type": "text/plain"}, body: `+body+`}); out.push("simple: " + r.type); } catch (e) { out.push("simple: " + e); }
	  // With JSON and a made-up token: the browser asks first, and is told no.
	  try { var r2 = await fetch(`+jsString(base+"/api/labels")+`, {method: "POST", headers: {"Content-Type": "application/json", "X-Agenteval-Token": "guess"}, body: `+body+`}); out.push("json: " + r2.status); } catch (e) { out.push("json: blocked"); }
	  return out;
	})()`)
	t.Logf("forged writes: %q", forged)
	if len(forged) != 2 || forged[1] != "json: blocked" {
		t.Errorf("the forged writes: %q", forged)
	}
	for _, l := range labels() {
		if l.Note == "forged" || (l.TestID == "refund" && strings.Contains(l.Criterion, "refund number") && l.Human != "pass") {
			t.Errorf("a forged write changed a label: %+v", l)
		}
	}
	if n := len(labels()); n != 3 {
		t.Errorf("%d labels after the forged writes, want 3", n)
	}
}

// evalAsync evaluates JavaScript that returns a promise, and waits for it.
func evalAsync[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	c, cancel := browser.Timeout(ctx, 15*time.Second)
	defer cancel()
	v, err := chromedp.Run(c, chromedp.Evaluate[T](js, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("evaluate %s: %v", js, err)
	}
	return v
}

// jsString quotes s for JavaScript.
func jsString(s string) string { return fmt.Sprintf("%q", s) }

// TestViewLabeller: who labels is --as when given (checked), else git's
// user.name, and git is not asked under --no-exec.
func TestViewLabeller(t *testing.T) {
	e := newEnv(strings.NewReader(""), &strings.Builder{}, &strings.Builder{})
	for _, tc := range []struct {
		name   string
		o      viewOptions
		noExec bool
		want   string
		err    string
	}{
		{"--as", viewOptions{as: "  Ann Lee ", asSet: true}, false, "Ann Lee", ""},
		{"--as under --no-exec", viewOptions{as: "Ann", asSet: true}, true, "Ann", ""},
		{"--no-exec without --as", viewOptions{}, true, "", ""},
		{"--as with a newline", viewOptions{as: "Ann\nroot", asSet: true}, false, "", "no control characters"},
		{"--as too long", viewOptions{as: strings.Repeat("a", 101), asSet: true}, false, "", "at most 100 characters"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e.noExec = tc.noExec
			got, err := viewLabeller(e, tc.o)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("%q, %v; want %q", got, err, tc.want)
			}
		})
	}
	// git's user.name, from a repository's own configuration.
	dir := t.TempDir()
	if _, err := os.Stat("/usr/bin/git"); err != nil {
		t.Skip("git is not installed")
	}
	os.MkdirAll(filepath.Join(dir, ".git"), 0o755)
	os.WriteFile(filepath.Join(dir, ".git", "HEAD"), []byte("ref: refs/heads/main\n"), 0o644)
	os.MkdirAll(filepath.Join(dir, ".git", "objects"), 0o755)
	os.MkdirAll(filepath.Join(dir, ".git", "refs"), 0o755)
	os.WriteFile(filepath.Join(dir, ".git", "config"), []byte("[core]\n\trepositoryformatversion = 0\n[user]\n\tname = Repo Person\n"), 0o644)
	e.noExec, e.root = false, dir
	if got, err := viewLabeller(e, viewOptions{}); err != nil || got != "Repo Person" {
		t.Errorf("from git: %q, %v", got, err)
	}
}
