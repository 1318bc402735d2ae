package view

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/results"
	"github.com/agenteval/agenteval/store"
	"github.com/agenteval/agenteval/store/sqlite"
)

func result(id string, v agenteval.Verdict) *agenteval.Result {
	return &agenteval.Result{TestID: id, Suite: "s", Verdict: v, Score: map[agenteval.Verdict]float64{agenteval.VerdictPass: 1}[v],
		Scores: []agenteval.Score{}, Output: agenteval.Conversation{{Role: agenteval.RoleUser, Content: "hi"}, {Role: agenteval.RoleAssistant, Content: "</script><script>alert(1)</script>"}}}
}

func newStore(t *testing.T) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(filepath.Join(t.TempDir(), "a.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func record(t *testing.T, db *sqlite.DB, id string, at time.Time, finish bool, rs ...*agenteval.Result) {
	t.Helper()
	ctx := context.Background()
	if err := db.StartRun(ctx, &results.Header{RunID: id, Started: at, Suites: []results.SuiteFile{{Path: "s.yaml", Name: "s"}}, Target: "t"}); err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		db.AddResult(id, r)
	}
	if finish {
		if err := db.FinishRun(ctx, id, store.Finish{Status: store.Done}); err != nil {
			t.Fatal(err)
		}
	}
}

func get(t *testing.T, url string) (int, string, http.Header) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

func TestPages(t *testing.T) {
	db := newStore(t)
	t0 := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	record(t, db, "aaaa00000001", t0, true, result("x", agenteval.VerdictPass), result("y", agenteval.VerdictPass))
	record(t, db, "bbbb00000002", t0.Add(time.Hour), true, result("x", agenteval.VerdictPass), result("y", agenteval.VerdictFail))
	db.Tag(context.Background(), "aaaa00000001", "baseline")
	srv := httptest.NewServer((&Server{Store: db}).Handler())
	defer srv.Close()

	code, body, h := get(t, srv.URL+"/")
	if code != 200 || !strings.Contains(body, `"mode":"runs"`) || !strings.Contains(body, `"id":"bbbb00000002"`) {
		t.Fatalf("runs page: %d\n%s", code, body)
	}
	if !strings.Contains(h.Get("Content-Security-Policy"), "default-src 'none'") || h.Get("X-Frame-Options") != "DENY" {
		t.Errorf("headers: %v", h)
	}
	code, body, _ = get(t, srv.URL+"/api/runs")
	if code != 200 || !strings.Contains(body, `"tags":["baseline"]`) {
		t.Errorf("api/runs: %d %s", code, body)
	}
	// A run by any reference; its content stays inside its script block.
	for _, ref := range []string{"bbbb00000002", "bbbb", "last"} {
		code, body, _ = get(t, srv.URL+"/runs/"+ref)
		if code != 200 || !strings.Contains(body, `{"id":"y","suite":"s","v":"fail"`) || strings.Contains(body, "<script>alert(1)") {
			t.Errorf("/runs/%s: %d", ref, code)
		}
		if strings.Contains(body, `"live":"`) {
			t.Errorf("/runs/%s: a finished run is not live", ref)
		}
	}
	if code, body, _ = get(t, srv.URL+"/runs/zzzz"); code != 404 || !strings.Contains(body, "not found") {
		t.Errorf("unknown run: %d %s", code, body)
	}
	code, body, _ = get(t, srv.URL+"/compare?base=baseline&new=last")
	if code != 200 || !strings.Contains(body, `"regressed":1`) || !strings.Contains(body, `class="chunk" data-run="0"`) || !strings.Contains(body, `class="chunk" data-run="1"`) {
		t.Errorf("compare: %d", code)
	}
	if code, _, _ = get(t, srv.URL+"/compare?base=baseline"); code != 400 {
		t.Errorf("compare without new: %d", code)
	}
}

// The viewer only reads, and answers only to loopback names, so a web
// page elsewhere cannot reach the store through DNS rebinding.
func TestReadOnlyAndLoopback(t *testing.T) {
	db := newStore(t)
	srv := httptest.NewServer((&Server{Store: db}).Handler())
	defer srv.Close()
	resp, err := http.Post(srv.URL+"/", "text/plain", strings.NewReader("x"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST: %d", resp.StatusCode)
	}
	req, _ := http.NewRequest("GET", srv.URL+"/", nil)
	req.Host = "evil.example:80"
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("foreign Host: %d", resp.StatusCode)
	}
	for _, host := range []string{"localhost:8765", "127.0.0.1:8765", "[::1]:8765"} {
		if !loopbackHost(host) {
			t.Errorf("%s is loopback", host)
		}
	}
	open := httptest.NewServer((&Server{Store: db, AllowAnyHost: true}).Handler())
	defer open.Close()
	req, _ = http.NewRequest("GET", open.URL+"/", nil)
	req.Host = "evalbox.lan:8765"
	resp, _ = http.DefaultClient.Do(req)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("--host: foreign Host got %d", resp.StatusCode)
	}
}

// A running run's page follows it: results come as events, then the end.
func TestLiveEvents(t *testing.T) {
	db := newStore(t)
	record(t, db, "cccc00000001", time.Now(), false, result("a", agenteval.VerdictPass))
	srv := httptest.NewServer((&Server{Store: db, Poll: 20 * time.Millisecond}).Handler())
	defer srv.Close()
	deadline := time.Now().Add(5 * time.Second)
	var body string
	for time.Now().Before(deadline) {
		_, body, _ = get(t, srv.URL+"/runs/cccc00000001")
		if strings.Contains(body, `{"id":"a"`) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	i := strings.Index(body, `"live":"`)
	if i < 0 {
		t.Fatalf("a running run's page has no live URL")
	}
	live := body[i+len(`"live":"`):]
	live = live[:strings.IndexByte(live, '"')]
	live = strings.ReplaceAll(live, `\u0026`, "&")
	resp, err := http.Get(srv.URL + live)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %s", ct)
	}
	events := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "event: ") || strings.HasPrefix(sc.Text(), "data: ") {
				events <- sc.Text()
			}
		}
		close(events)
	}()
	db.AddResult("cccc00000001", result("b", agenteval.VerdictFail))
	next := func() string {
		select {
		case e, ok := <-events:
			if !ok {
				return "(closed)"
			}
			return e
		case <-time.After(5 * time.Second):
			return "(timeout)"
		}
	}
	if e := next(); e != "event: result" {
		t.Fatalf("first event %q", e)
	}
	if d := next(); !strings.Contains(d, `"index":{"id":"b"`) || !strings.Contains(d, `"detail":{"result":{"test_id":"b"`) || strings.Contains(d, "</script>") {
		t.Fatalf("result data %q", d)
	}
	db.FinishRun(context.Background(), "cccc00000001", store.Finish{Status: store.Done})
	if e := next(); e != "event: end" {
		t.Fatalf("after the finish: %q", e)
	}
	if d := next(); !strings.Contains(d, `"status":"done"`) || !strings.Contains(d, `"total":2`) {
		t.Errorf("end data %q", d)
	}
	if e := next(); e != "(closed)" {
		t.Errorf("the stream goes on after the end: %q", e)
	}
}

// The viewer compares runs of several targets target by target, and last
// passes over a run that failed before its first test.
func TestMultiTargetCompare(t *testing.T) {
	db := newStore(t)
	ctx := context.Background()
	t0 := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	on := func(target string, r *agenteval.Result) *agenteval.Result { r.Target = target; return r }
	run := func(id string, at time.Duration, st store.Status, rs ...*agenteval.Result) {
		t.Helper()
		h := &results.Header{RunID: id, Started: t0.Add(at), Suites: []results.SuiteFile{{Path: "s.yaml", Name: "s"}}, Target: "a, b"}
		if err := db.StartRun(ctx, h); err != nil {
			t.Fatal(err)
		}
		for _, r := range rs {
			db.AddResult(id, r)
		}
		if err := db.FinishRun(ctx, id, store.Finish{Status: st}); err != nil {
			t.Fatal(err)
		}
	}
	run("aaaa00000001", 0, store.Done, on("a", result("x", agenteval.VerdictPass)), on("b", result("x", agenteval.VerdictPass)))
	// Target a broke; b's result comes after it.
	run("bbbb00000002", time.Hour, store.Done, on("a", result("x", agenteval.VerdictFail)), on("b", result("x", agenteval.VerdictPass)))
	run("cccc00000003", 2*time.Hour, store.Failed)
	srv := httptest.NewServer((&Server{Store: db}).Handler())
	defer srv.Close()

	code, body, _ := get(t, srv.URL+"/compare?base=last~1&new=last")
	if code != 200 || !strings.Contains(body, `"regressed":1`) || !strings.Contains(body, `"test_id":"x","target":"a","change":"regressed"`) ||
		!strings.Contains(body, `"test_id":"x","target":"b","change":"unchanged"`) {
		t.Errorf("compare: %d\n%s", code, body)
	}
	if code, body, _ = get(t, srv.URL+"/runs/last"); code != 200 || !strings.Contains(body, `"run_id":"bbbb00000002"`) ||
		!strings.Contains(body, `{"id":"x","suite":"s","v":"fail","tg":"a",`) || !strings.Contains(body, `{"id":"x","suite":"s","v":"pass","tg":"b",`) {
		t.Errorf("/runs/last: %d", code)
	}
	if code, body, _ = get(t, srv.URL+"/runs/cccc00000003"); code != 200 || !strings.Contains(body, `"run_id":"cccc00000003"`) {
		t.Errorf("the failed run by its id: %d", code)
	}
}
