package view

import (
	"context"
	"encoding/json"
	"html/template"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/report"
	"github.com/agenteval/agenteval/store"
)

// judgedResult is a test whose rubric a judge decided (one criterion
// passed, one failed) beside a check no judge made; its id and texts
// carry markup, which must stay text.
func judgedResult(id string) *agenteval.Result {
	r := result(id, agenteval.VerdictFail)
	r.Scores = []agenteval.Score{
		{Name: "rubric", Type: "rubrics", Verdict: agenteval.VerdictFail, Weight: 1, Usage: &agenteval.Usage{Calls: 1, InputTokens: 10},
			Assertions: []agenteval.Assertion{
				{Text: "criterion-1: The reply is polite.", Passed: true, Evidence: "says please"},
				{Text: `criterion-2: It names </script><img src=x onerror=alert(1)>.`, Passed: false, Evidence: "it does not"},
			}},
		{Name: "turn-1", Type: "turn", Verdict: agenteval.VerdictPass, Weight: 1, Scores: []agenteval.Score{
			{Name: "tone", Type: "llm_grader", Verdict: agenteval.VerdictPass, Weight: 1, Usage: &agenteval.Usage{CachedCalls: 1},
				Assertions: []agenteval.Assertion{{Text: "friendly", Passed: true}}},
		}},
		{Name: "contains", Type: "contains", Verdict: agenteval.VerdictPass, Weight: 1, Assertions: []agenteval.Assertion{{Text: "says hi", Passed: true}}},
	}
	return r
}

const labelRun = "labl00000001"

type labelFixture struct {
	srv  *httptest.Server
	s    *Server
	st   store.Labels
	test string
}

func newLabelFixture(t *testing.T, s *Server) *labelFixture {
	t.Helper()
	db := newStore(t)
	record(t, db, labelRun, time.Now().Add(-time.Hour), true, judgedResult(`x"><script>__pwn(1)</script>`), result("plain", agenteval.VerdictPass))
	s.Store = db
	if s.Labeller == "" {
		s.Labeller = "Ann"
	}
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	return &labelFixture{srv: srv, s: s, st: db, test: `x"><script>__pwn(1)</script>`}
}

// body is a good label of the failed criterion, as the page sends it.
func (f *labelFixture) body() map[string]any {
	return map[string]any{"run_id": labelRun, "suite": "s", "test_id": f.test, "target": "", "trial": 0, "score": "rubric",
		"criterion": `criterion-2: It names </script><img src=x onerror=alert(1)>.`, "human": "pass", "note": "it <b>does</b> name it"}
}

// write sends a write as the page does; edit changes the request first.
func (f *labelFixture) write(t *testing.T, method string, body any, edit func(*http.Request)) (int, string) {
	t.Helper()
	var b []byte
	switch v := body.(type) {
	case string:
		b = []byte(v)
	default:
		b, _ = json.Marshal(v)
	}
	req, _ := http.NewRequest(method, f.srv.URL+"/api/labels", strings.NewReader(string(b)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", f.srv.URL)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	req.Header.Set(TokenHeader, f.s.token)
	if edit != nil {
		edit(req)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	// An error is {"error": …}: the message, as the page shows it.
	var e struct{ Error string }
	if resp.StatusCode != 200 && json.Unmarshal(out, &e) == nil && e.Error != "" {
		return resp.StatusCode, e.Error
	}
	return resp.StatusCode, string(out)
}

func (f *labelFixture) stored(t *testing.T) []store.Label {
	t.Helper()
	ls, err := f.st.RunLabels(context.Background(), labelRun)
	if err != nil {
		t.Fatal(err)
	}
	return ls
}

// TestViewLabelWrite puts a label as the page does, reads it back with
// the run's totals, and removes it.
func TestViewLabelWrite(t *testing.T) {
	f := newLabelFixture(t, &Server{})
	code, out := f.write(t, "POST", f.body(), nil)
	if code != 200 {
		t.Fatalf("put: %d %s", code, out)
	}
	var resp struct {
		Criterion struct {
			Judge string       `json:"judge"`
			Label *store.Label `json:"label"`
		} `json:"criterion"`
		Summary labelSummary `json:"summary"`
	}
	if err := json.Unmarshal([]byte(out), &resp); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if resp.Criterion.Judge != "fail" || resp.Criterion.Label == nil || resp.Criterion.Label.Human != "pass" || resp.Criterion.Label.Labeller != "Ann" {
		t.Errorf("answer: %s", out)
	}
	if want := (labelSummary{Judged: 3, Labelled: 1, Agree: 0}); resp.Summary != want {
		t.Errorf("summary %+v, want %+v", resp.Summary, want)
	}
	ls := f.stored(t)
	if len(ls) != 1 || ls[0].Note != "it <b>does</b> name it" || ls[0].Labeller != "Ann" || ls[0].Score != "rubric" || ls[0].TestID != f.test || ls[0].Time.IsZero() {
		t.Fatalf("stored: %+v", ls)
	}

	// The nested, cached judge's criterion, agreeing.
	b := f.body()
	b["score"], b["criterion"], b["human"], b["note"] = "turn-1/tone", "friendly", "pass", ""
	if code, out = f.write(t, "POST", b, nil); code != 200 || !strings.Contains(out, `"summary":{"judged":3,"labelled":2,"agree":1,"false_pass":0}`) {
		t.Fatalf("put nested: %d %s", code, out)
	}
	// A changed mind replaces the label.
	b["human"] = "fail"
	if code, out = f.write(t, "POST", b, nil); code != 200 || !strings.Contains(out, `"labelled":2,"agree":0,"false_pass":1`) {
		t.Fatalf("replace: %d %s", code, out)
	}

	// Reads: the run's totals, and a test's criteria with their labels.
	q := url.Values{"suite": {"s"}, "test": {f.test}, "target": {""}}
	code, body, _ := get(t, f.srv.URL+"/api/runs/last/labels?"+q.Encode())
	var read struct {
		RunID    string              `json:"run_id"`
		Summary  labelSummary        `json:"summary"`
		Criteria []labelledCriterion `json:"criteria"`
	}
	if err := json.Unmarshal([]byte(body), &read); code != 200 || err != nil {
		t.Fatalf("read: %d %v %s", code, err, body)
	}
	if read.RunID != labelRun || read.Summary.Labelled != 2 || len(read.Criteria) != 3 {
		t.Fatalf("read: %s", body)
	}
	if c := read.Criteria[1]; c.Label == nil || c.Judge != "fail" || c.Index != 1 || strings.Join(c.Path, "/") != "rubric" || c.Type != "rubrics" {
		t.Errorf("criterion 2: %+v", c)
	}
	if c := read.Criteria[0]; c.Label != nil {
		t.Errorf("criterion 1 is not labelled: %+v", c.Label)
	}
	if code, body, _ = get(t, f.srv.URL+"/api/runs/"+labelRun+"/labels"); code != 200 || strings.Contains(body, `"criteria"`) || !strings.Contains(body, `"judged":3`) {
		t.Errorf("totals alone: %d %s", code, body)
	}
	if code, body, _ = get(t, f.srv.URL+"/api/runs/nope/labels"); code != 404 {
		t.Errorf("unknown run: %d %s", code, body)
	}

	// Removing.
	if code, out = f.write(t, "DELETE", f.body(), nil); code != 200 || !strings.Contains(out, `"labelled":1`) {
		t.Fatalf("delete: %d %s", code, out)
	}
	if ls := f.stored(t); len(ls) != 1 || ls[0].Score != "turn-1/tone" {
		t.Errorf("after delete: %+v", ls)
	}
}

// TestViewLabelRefused: every write that does not come from the viewer's
// page in this session, or names nothing judged, is refused with a clear
// error, and changes nothing.
func TestViewLabelRefused(t *testing.T) {
	f := newLabelFixture(t, &Server{})
	u, _ := url.Parse(f.srv.URL)
	_, port := u.Hostname(), u.Port()
	with := func(k string, v any) map[string]any {
		b := f.body()
		if v == nil {
			delete(b, k)
		} else {
			b[k] = v
		}
		return b
	}
	header := func(k, v string) func(*http.Request) {
		return func(r *http.Request) {
			if v == "" {
				r.Header.Del(k)
			} else {
				r.Header.Set(k, v)
			}
		}
	}
	for _, tc := range []struct {
		name   string
		method string
		body   any
		edit   func(*http.Request)
		code   int
		want   string
	}{
		{"no token", "POST", f.body(), header(TokenHeader, ""), 403, "needs the viewer's session token in X-Agenteval-Token"},
		{"wrong token", "POST", f.body(), header(TokenHeader, "x"+f.s.token[1:]), 403, "the session token is wrong"},
		{"token of another session", "POST", f.body(), header(TokenHeader, newToken()), 403, "the session token is wrong"},
		{"token in the URL", "POST", f.body(), func(r *http.Request) {
			r.Header.Del(TokenHeader)
			r.URL.RawQuery = "token=" + f.s.token
		}, 403, "needs the viewer's session token"},
		{"cross-origin Origin", "POST", f.body(), header("Origin", "http://evil.example"), 403, `another origin ("http://evil.example" is not http://127.0.0.1:` + port + `)`},
		{"Origin of another port", "POST", f.body(), header("Origin", "http://127.0.0.1:1"), 403, "another origin"},
		{"null Origin", "POST", f.body(), header("Origin", "null"), 403, "another origin"},
		{"no Origin", "POST", f.body(), header("Origin", ""), 403, "needs the Origin header"},
		{"cross-site fetch", "POST", f.body(), header("Sec-Fetch-Site", "cross-site"), 403, `another site (Sec-Fetch-Site "cross-site")`},
		{"same-site fetch", "POST", f.body(), header("Sec-Fetch-Site", "same-site"), 403, "another site"},
		{"foreign Host", "POST", f.body(), func(r *http.Request) {
			r.Host = "evil.example:" + port
			r.Header.Set("Origin", "http://evil.example:"+port)
		}, 403, "answers only to localhost and 127.0.0.1"},
		{"loopback Host of another port", "POST", f.body(), func(r *http.Request) { r.Host = "localhost:1"; r.Header.Set("Origin", "http://localhost:1") }, 403, `Host "localhost:1" is not`},
		{"bad JSON", "POST", `{"run_id": "` + labelRun + `", `, nil, 400, "bad JSON in the label"},
		{"two objects", "POST", `{"run_id":"x"} {}`, nil, 400, "one object is expected"},
		{"unknown field", "POST", with("labeller", "Mallory"), nil, 400, `unknown field "labeller"`},
		{"not JSON", "POST", f.body(), header("Content-Type", "text/plain"), 415, "sent as JSON"},
		{"no run", "POST", with("run_id", nil), nil, 400, "names no run (run_id)"},
		{"unknown run", "POST", with("run_id", "zzzz00000000"), nil, 404, "not found"},
		{"human neither pass nor fail", "POST", with("human", "maybe"), nil, 400, `human "maybe": write pass or fail`},
		{"note too long", "POST", with("note", strings.Repeat("é", maxNote+1)), nil, 400, "the note has 4001 characters; at most 4000"},
		{"unknown test", "POST", with("test_id", "nope"), nil, 422, "no test s/nope with judged criteria"},
		{"unknown score", "POST", with("score", "rubrik"), nil, 422, `has no judged score "rubrik"`},
		{"unknown criterion", "POST", with("criterion", "criterion-3: made up"), nil, 422, `score "rubric" has no judged criterion "criterion-3: made up"`},
		{"check no judge made", "POST", func() map[string]any { b := with("score", "contains"); b["criterion"] = "says hi"; return b }(), nil, 422, `has no judged score "contains"`},
		{"trial that is not there", "POST", with("trial", 2), nil, 422, "has no judged criteria in trial 2"},
		{"PUT", "PUT", f.body(), nil, 405, "read-only but for labels"},
		{"delete with no token", "DELETE", f.body(), header(TokenHeader, ""), 403, "session token"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out := f.write(t, tc.method, tc.body, tc.edit)
			if code != tc.code || !strings.Contains(out, tc.want) {
				t.Errorf("%d %s\nwant %d with %q", code, out, tc.code, tc.want)
			}
			if strings.Contains(out, f.s.token) {
				t.Errorf("the answer shows the token")
			}
			if ls := f.stored(t); len(ls) != 0 {
				t.Errorf("a refused write stored %+v", ls)
			}
		})
	}
	// The same checks as a refused request, the right one goes through.
	if code, out := f.write(t, "POST", f.body(), nil); code != 200 {
		t.Fatalf("the good write: %d %s", code, out)
	}
	if code, out := f.write(t, "POST", f.body(), func(r *http.Request) { r.Host = "localhost:" + port; r.Header.Set("Origin", "http://localhost:"+port) }); code != 200 {
		t.Errorf("localhost names the viewer too: %d %s", code, out)
	}
}

// TestViewLabelsNotWritable: a viewer served beyond loopback, or on a
// store opened read-only, shows labels and takes none, and its pages
// carry no token.
func TestViewLabelsNotWritable(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    *Server
		want string
	}{
		{"--host", &Server{AllowAnyHost: true}, "only through a viewer on loopback"},
		{"read-only store", &Server{ReadOnly: "the store is read-only"}, "the store is read-only"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newLabelFixture(t, tc.s)
			code, out := f.write(t, "POST", f.body(), nil)
			if code != 403 || !strings.Contains(out, tc.want) {
				t.Errorf("write: %d %s", code, out)
			}
			_, page, _ := get(t, f.srv.URL+"/runs/"+labelRun)
			if strings.Contains(page, f.s.token) || strings.Contains(page, `"token"`) || !strings.Contains(page, `"read_only":"`) {
				t.Errorf("a page of a viewer that takes no labels carries a token, or does not say why")
			}
		})
	}
}

// TestViewLabelPage: a run's page carries the labelling script, allowed by
// the page's policy in its head and in the header, and the session token
// in a data element, never in a URL; the labeller's name stays text.
func TestViewLabelPage(t *testing.T) {
	f := newLabelFixture(t, &Server{Labeller: `</script><script>__pwn("as")</script>`})
	code, page, h := get(t, f.srv.URL+"/runs/"+labelRun)
	if code != 200 {
		t.Fatal(code)
	}
	csp := labelCSP()
	if h.Get("Content-Security-Policy") != csp || !strings.Contains(page, metaCSP(csp)) || strings.Contains(page, metaCSP(report.CSP())) {
		t.Errorf("the page's policy does not allow the labelling script:\nheader %s", h.Get("Content-Security-Policy"))
	}
	for _, want := range []string{cspHash(labelsJS), cspHash(labelsCSS), report.CSP()[strings.Index(report.CSP(), "'sha256"):][:20]} {
		if !strings.Contains(csp, want) {
			t.Errorf("policy %s lacks %s", csp, want)
		}
	}
	facts := regexp.MustCompile(`<script type="application/json" id="agenteval-labels">([^<]*)</script>`).FindStringSubmatch(page)
	if facts == nil {
		t.Fatalf("no labelling facts in the page")
	}
	var got map[string]string
	if err := json.Unmarshal([]byte(facts[1]), &got); err != nil {
		t.Fatal(err)
	}
	if got["token"] != f.s.token || len(got["token"]) < 40 || got["run_id"] != labelRun || got["labeller"] != f.s.Labeller {
		t.Errorf("facts %v", got)
	}
	if strings.Count(page, f.s.token) != 1 {
		t.Errorf("the token is in the page %d times", strings.Count(page, f.s.token))
	}
	if strings.Contains(page, `<script>__pwn`) {
		t.Errorf("the labeller's name became markup")
	}
	// The labelling part comes after the report's script, inside the body.
	i, j := strings.Index(page, `id="agenteval-labels"`), strings.LastIndex(page, "</body>")
	if i < 0 || j < i || !strings.HasSuffix(page, "</body>\n</html>\n") || strings.Index(page, "agenteval report: renders") > i {
		t.Errorf("the labelling part is not at the end of the body")
	}
	if strings.Contains(labelsJS, "</") || strings.Contains(labelsCSS, "</") {
		t.Errorf("the labelling script or style could end its element early")
	}
	// The token is never in a URL: not in the live events' address, not
	// in the list of runs.
	_, runs, _ := get(t, f.srv.URL+"/")
	if strings.Contains(runs, f.s.token) {
		t.Errorf("the list of runs carries the token")
	}
	// The comparison page is the report's alone.
	_, cmp, _ := get(t, f.srv.URL+"/compare?base="+labelRun+"&new="+labelRun)
	if strings.Contains(cmp, "agenteval-labels") {
		t.Errorf("the comparison page carries labelling")
	}
}

// TestViewLabelPageWriter: the page rewriter finds the policy however the
// page is cut into writes, and holds little.
func TestViewLabelPageWriter(t *testing.T) {
	var whole strings.Builder
	hw := report.NewHTML(&whole, report.HTMLOptions{Home: "/"})
	hw.Start(nil)
	hw.Write(judgedResult("a"))
	hw.Close(nil)
	page := whole.String()
	for _, size := range []int{1, 7, 100, 4096, len(page)} {
		var out strings.Builder
		lp := newLabelPage(&out)
		for i := 0; i < len(page); i += size {
			lp.Write([]byte(page[i:min(i+size, len(page))]))
		}
		if err := lp.Finish(map[string]string{"run_id": "r"}); err != nil {
			t.Fatal(err)
		}
		got := out.String()
		if !strings.Contains(got, metaCSP(labelCSP())) || !strings.Contains(got, `id="agenteval-labels">{"run_id":"r"}</script>`) || !strings.HasSuffix(got, "</body>\n</html>\n") {
			t.Errorf("writes of %d bytes: the page was not rewritten", size)
		}
		if strings.Replace(strings.Replace(got, metaCSP(labelCSP()), metaCSP(report.CSP()), 1), got[strings.Index(got, `<script type="application/json" id="agenteval-labels">`):strings.LastIndex(got, "</body>")], "", 1) != page {
			t.Errorf("writes of %d bytes: the page changed beyond the policy and the labelling part", size)
		}
	}
}

// metaCSP is the policy element as html/template writes it: the page the
// viewer widens must hold exactly what report.MetaCSP finds.
func metaCSP(policy string) string {
	var b strings.Builder
	template.Must(template.New("meta").Parse(`<meta http-equiv="Content-Security-Policy" content="{{.}}">`)).Execute(&b, policy)
	return b.String()
}

func TestMetaCSPAsTemplateWritesIt(t *testing.T) {
	for _, p := range []string{report.CSP(), labelCSP(), `a "b" & 'c' <d> +e` + "\x00"} {
		if got, want := report.MetaCSP(p), metaCSP(p); got != want {
			t.Errorf("report.MetaCSP(%q) = %q, html/template writes %q", p, got, want)
		}
	}
}
