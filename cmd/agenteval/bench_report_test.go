package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/internal/browser"
	"github.com/agenteval/agenteval/report"
	"github.com/agenteval/agenteval/results"
	"github.com/chromedp/chromedp"
)

// synthetic makes the i-th of many realistic results: a conversation of
// four turns with a tool call and its result in each, every turn graded by
// a tool-call check and a judged rubric with its reason; one test in five
// fails its third turn.
func synthetic(i int) *agenteval.Result {
	r := &agenteval.Result{TestID: fmt.Sprintf("case-%05d", i), Suite: []string{"bookings", "support", "billing"}[i%3], Target: "openai:gpt-4o-mini",
		Tags: []string{[]string{"smoke", "regression", "edge"}[i%3]}, Score: 1, Verdict: agenteval.VerdictPass, ExecutionStatus: agenteval.StatusOK,
		DurationMS: float64(800 + i%700), Usage: &agenteval.Usage{Calls: 8, InputTokens: int64(2400 + i%500), OutputTokens: int64(300 + i%90)}}
	cost := float64(r.Usage.InputTokens)*0.15e-6 + float64(r.Usage.OutputTokens)*0.6e-6
	r.Usage.CostUSD = &cost
	r.Output = agenteval.Conversation{{Role: agenteval.RoleSystem, Content: "You are the assistant of a restaurant group. Use the tools to look up, book, move and cancel tables, and answer questions about menus and opening hours. Be brief and confirm every change with its reference."}}
	fails := i%5 == 0
	for k := 1; k <= 4; k++ {
		id := fmt.Sprintf("call-%d-%d", i, k)
		r.Output = append(r.Output,
			agenteval.Message{Role: agenteval.RoleUser, Content: fmt.Sprintf("Turn %d of case %d: could you check a table for %d people at %dpm on Friday, near the window if possible?", k, i, 2+k, 6+k)},
			agenteval.Message{Role: agenteval.RoleAssistant, ToolCalls: []agenteval.ToolCall{{ID: id, Name: "check_availability", Args: map[string]any{"party_size": float64(2 + k), "time": fmt.Sprintf("%dpm", 6+k), "day": "Friday", "seating": "window"}}}},
			agenteval.Message{Role: agenteval.RoleTool, ToolCallID: id, Content: fmt.Sprintf(`{"available": true, "tables": [{"id": "T%d", "seats": %d, "window": true}]}`, k, 2+k)},
			agenteval.Message{Role: agenteval.RoleAssistant, Content: fmt.Sprintf("Good news: table T%d by the window is free for %d at %dpm on Friday. Shall I book it under your name? I can also note any allergies or a special occasion.", k, 2+k, 6+k)})
		v, score, reason := agenteval.VerdictPass, 1.0, "1 of 1 expected calls found in order (1 calls made)"
		if fails && k == 3 {
			v, score, reason = agenteval.VerdictFail, 0, "0 of 1 expected calls found in order (1 calls made)"
			r.Verdict, r.Score, r.ExecutionStatus = agenteval.VerdictFail, 0.75, agenteval.StatusQualityFailure
		}
		r.Scores = append(r.Scores, agenteval.Score{Name: fmt.Sprintf("turn-%d", k), Type: "composite", Score: score, Verdict: v, Weight: 1, Reason: reason,
			Scores: []agenteval.Score{
				{Name: "tool_calls", Type: "tool_calls", Score: score, Verdict: v, Weight: 1, Reason: reason,
					Assertions: []agenteval.Assertion{{Text: fmt.Sprintf(`expected call 1: check_availability({"party_size":%d,"time":"%dpm"})`, 2+k, 6+k), Passed: v == agenteval.VerdictPass, Evidence: "matched call 1"}}},
				{Name: "rubrics", Type: "rubrics", Score: 1, Verdict: agenteval.VerdictPass, Weight: 1, Reason: "1 of 1 criteria met",
					Assertions: []agenteval.Assertion{{Text: "The reply confirms the time and the party size.", Passed: true, Evidence: "It states the table, the party size and the time, and asks before booking."}}},
			}})
	}
	return r
}

func writeSynthetic(tb testing.TB, path string, n int) {
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	w := report.NewJSONL(bw)
	w.(report.Starter).Start(&results.Header{RunID: "bench0000001", Started: time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC), Command: "run",
		Suites: []results.SuiteFile{{Path: "bookings.yaml", Name: "bookings"}, {Path: "support.yaml", Name: "support"}, {Path: "billing.yaml", Name: "billing"}},
		Target: "openai:gpt-4o-mini", Judge: "openai:gpt-4o-mini"})
	for i := range n {
		w.Write(synthetic(i))
	}
	w.Close(nil)
	bw.Flush()
	f.Close()
}

// BenchmarkReport10k writes the HTML report of 10,000 conversation tests
// with agenteval report, then opens it in Chromium: write-s is the
// command's time, tti-s the time from navigation until the page has drawn
// its list and answers clicks, open-ms the time to show a test's
// conversation, scroll-ms the time to draw the list after a jump to its
// middle, search-ms a full-text search of every transcript. Our targets
// are 2 s to write and 2 s to interactive.
func BenchmarkReport10k(b *testing.B) {
	dir := b.TempDir()
	results := filepath.Join(dir, "results.jsonl")
	if keep := os.Getenv("AGENTEVAL_BENCH_RESULTS"); keep != "" {
		// Keep the results for measuring the command on its own.
		results = keep
	}
	writeSynthetic(b, results, 10000)
	page := filepath.Join(dir, "report.html")
	b.ResetTimer()
	for b.Loop() {
		begin := time.Now()
		var out, errb strings.Builder
		if code := Main([]string{"report", results, "-o", page}, strings.NewReader(""), &out, &errb); code != 0 {
			b.Fatalf("report exited %d: %s", code, errb.String())
		}
		b.ReportMetric(time.Since(begin).Seconds(), "write-s")
	}
	b.StopTimer()
	if st, err := os.Stat(page); err == nil {
		b.ReportMetric(float64(st.Size())/1e6, "html-MB")
	}
	ctx := browser.New(b, 1400, 900)
	c, cancel := context.WithTimeout(ctx, 120*time.Second)
	defer cancel()
	// Opened five times: the median resists a busy machine.
	var ttis []float64
	for range 5 {
		if err := chromedp.Do(c, chromedp.Navigate("about:blank"), chromedp.Navigate("file://"+page)); err != nil {
			b.Fatal(err)
		}
		ready, err := chromedp.Run(c, chromedp.Poll[float64](`window.__agentevalReady`))
		if err != nil {
			b.Fatal(err)
		}
		ttis = append(ttis, ready/1000)
		if nav, err := chromedp.Run(c, chromedp.Evaluate[map[string]float64](`(function(){var n=performance.getEntriesByType("navigation")[0]; return {responseEnd:n.responseEnd, domInteractive:n.domInteractive, script:window.__agentevalScript, ready:window.__agentevalReady};})()`)); err == nil {
			b.Logf("navigation timing (ms): %v", nav)
		}
	}
	sort.Float64s(ttis)
	b.ReportMetric(ttis[len(ttis)/2], "tti-s")
	b.ReportMetric(ttis[len(ttis)-1], "tti-max-s")
	rows, _ := chromedp.Run(c, chromedp.Evaluate[int](`document.querySelectorAll(".row").length`))
	count, _ := chromedp.Run(c, chromedp.Evaluate[string](`document.querySelector(".filters .count").innerText`))
	if !strings.Contains(count, "10000") || rows == 0 || rows > 200 {
		b.Fatalf("the list says %q with %d rows drawn; want 10000 tests, only the visible rows drawn", count, rows)
	}
	measure := func(name, js string) {
		ms, err := chromedp.Run(c, chromedp.Evaluate[float64](js, chromedp.EvalAwaitPromise))
		if err != nil {
			b.Fatalf("%s: %v", name, err)
		}
		b.ReportMetric(ms, name)
	}
	// Each measure waits for two frames, so the work and the paint count.
	const frames = `new Promise(function(res){requestAnimationFrame(function(){requestAnimationFrame(res)})})`
	measure("scroll-ms", `(function(){var t=performance.now(); var r=document.querySelector(".rows"); r.scrollTop=r.scrollHeight/2; r.dispatchEvent(new Event("scroll")); return `+frames+`.then(function(){ if(!document.querySelector('.row[data-key$="case-05000"]') && !document.querySelector('.row[data-key$="case-04999"]')) throw new Error("the middle rows were not drawn"); return performance.now()-t;});})()`)
	// Opening a test inflates its block first: wait until its last turn
	// is drawn.
	measure("open-ms", `(function(){var t=performance.now(); document.querySelector('.row[data-i]').click(); return new Promise(function(res, rej){ (function poll(){ if(document.querySelector('.turn[data-turn="4"]')) return `+frames+`.then(function(){res(performance.now()-t)}); if(performance.now()-t > 10000) return rej(new Error("no conversation")); requestAnimationFrame(poll); })(); });})()`)
	// A search of every transcript: the first inflates all blocks. The
	// 120 ms the search box waits for typing to pause is not counted.
	measure("search-ms", `(function(){var s=document.querySelector("input[type=search]"); var t=performance.now(); s.value="case 9999:"; s.dispatchEvent(new Event("input")); return new Promise(function(res, rej){ (function poll(){ var n=document.querySelectorAll(".row").length; if(n===1 && document.querySelector(".filters .count").innerText.indexOf("1 of") === 0) return res(performance.now()-t-120); if(performance.now()-t > 20000) return rej(new Error(n+" rows match")); requestAnimationFrame(poll); })(); });})()`)
}
