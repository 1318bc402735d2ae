// Package view serves the run store to a browser: the list of runs, each
// run as the HTML report agenteval report writes, two runs side by side,
// and a run in progress followed live through server-sent events. Pages
// stream from the store, so a large run costs the server little memory.
//
// The one thing it writes is labels: on a run's page a person marks each
// judged criterion agree or disagree, with a note, and the viewer stores
// it as a store.Label. A write must come from a page this viewer served
// in this session: it carries the session token, its Origin is the
// viewer's own, and its Host a loopback name for the viewer's port.
//
// It may import the root package, report, results, compare, store and
// the standard library.
package view

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/compare"
	"github.com/agenteval/agenteval/report"
	"github.com/agenteval/agenteval/results"
	"github.com/agenteval/agenteval/store"
)

// Server serves a store.
type Server struct {
	Store store.Store
	// Poll is how often a live page's events look for new results; 0
	// means half a second.
	Poll time.Duration
	// StaleAfter is how long a running run may go unheard before it is
	// taken for abandoned; 0 means store.StaleAfter.
	StaleAfter time.Duration
	// AllowAnyHost turns off the Host check that keeps other web sites
	// from reading the store through DNS rebinding; set it when serving
	// on an address other than loopback.
	AllowAnyHost bool
	// Labeller names who labels through this viewer (git config
	// user.name, or view --as); it is stored with each label.
	Labeller string
	// ReadOnly, when set, says why labels cannot be written (the store
	// was opened read-only): pages show labels and no buttons.
	ReadOnly string

	once  sync.Once
	token string
	cache indexCache
}

func (s *Server) poll() time.Duration {
	if s.Poll > 0 {
		return s.Poll
	}
	return 500 * time.Millisecond
}

func (s *Server) stale() time.Duration {
	if s.StaleAfter > 0 {
		return s.StaleAfter
	}
	return store.StaleAfter
}

// Handler serves the pages. The first call makes the session token that
// writes need.
func (s *Server) Handler() http.Handler {
	s.once.Do(func() { s.token = newToken() })
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.runsPage)
	mux.HandleFunc("GET /api/runs", s.runsJSON)
	mux.HandleFunc("GET /runs/{ref}", s.runPage)
	mux.HandleFunc("GET /runs/{ref}/events", s.events)
	mux.HandleFunc("GET /compare", s.comparePage)
	mux.HandleFunc("GET /api/runs/{ref}/labels", s.runLabels)
	mux.HandleFunc("POST /api/labels", s.putLabel)
	mux.HandleFunc("DELETE /api/labels", s.deleteLabel)
	return s.guard(mux)
}

// labelsPath is where labels are written; nothing else takes a write.
const labelsPath = "/api/labels"

// guard makes every response private and all but labels read-only: GET
// and HEAD only, but for labels (which checkWrite guards further), a Host
// check against DNS rebinding, and headers that keep pages from being
// framed, sniffed or leaking their address.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		write := r.URL.Path == labelsPath && (r.Method == http.MethodPost || r.Method == http.MethodDelete)
		if r.Method != http.MethodGet && r.Method != http.MethodHead && !write {
			allow := "GET, HEAD"
			if r.URL.Path == labelsPath {
				allow = "POST, DELETE"
			}
			w.Header().Set("Allow", allow)
			http.Error(w, "the viewer is read-only but for labels (POST or DELETE "+labelsPath+")", http.StatusMethodNotAllowed)
			return
		}
		if !s.AllowAnyHost && !loopbackHost(r.Host) {
			http.Error(w, "this viewer answers only to localhost and 127.0.0.1", http.StatusForbidden)
			return
		}
		h := w.Header()
		h.Set("Content-Security-Policy", report.CSP())
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-store")
		next.ServeHTTP(w, r)
	})
}

func loopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func (s *Server) items(ctx context.Context) ([]store.RunRow, error) {
	runs, err := s.Store.Runs(ctx, store.ListOptions{})
	if err != nil {
		return nil, err
	}
	out := make([]store.RunRow, 0, len(runs))
	now := time.Now()
	for i := range runs {
		row := runs[i].Row(now)
		if runs[i].Stale(now, s.stale()) {
			row.Status = "abandoned"
		}
		out = append(out, row)
	}
	return out, nil
}

func (s *Server) runsJSON(w http.ResponseWriter, r *http.Request) {
	items, err := s.items(r.Context())
	if err != nil {
		serverError(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(items)
}

func (s *Server) runsPage(w http.ResponseWriter, r *http.Request) {
	items, err := s.items(r.Context())
	if err != nil {
		serverError(w, err)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if err := report.WriteRunsPage(w, items); err != nil {
		serverError(w, err)
	}
}

func serverError(w http.ResponseWriter, err error) {
	http.Error(w, err.Error(), http.StatusInternalServerError)
}

// resolve finds a run by any RUN reference (id, prefix, last, tag).
func (s *Server) resolve(w http.ResponseWriter, ctx context.Context, ref string) (*store.Run, bool) {
	id, err := store.Resolve(ctx, s.Store, ref)
	if err == nil {
		var run *store.Run
		if run, err = s.Store.Run(ctx, id); err == nil {
			return run, true
		}
	}
	code := http.StatusInternalServerError
	if errors.Is(err, store.ErrNotFound) || strings.Contains(err.Error(), "ambiguous") {
		code = http.StatusNotFound
	}
	http.Error(w, err.Error(), code)
	return nil, false
}

func (s *Server) live(run *store.Run) bool {
	return run.Status == store.Running && !run.Stale(time.Now(), s.stale())
}

func (s *Server) runPage(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	run, ok := s.resolve(w, ctx, r.PathValue("ref"))
	if !ok {
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	// A store that keeps labels gets them on the page: the labelling
	// script is added to the report's.
	var out io.Writer = w
	var lp *labelPage
	if s.labels() != nil {
		lp = newLabelPage(w)
		out = lp
		w.Header().Set("Content-Security-Policy", labelCSP())
	}
	// The page carries the results stored so far; a live page then asks
	// for those after the last one it has.
	hw := report.NewHTML(out, report.HTMLOptions{Home: "/"})
	sum, last, err := writeRun(ctx, s.Store, hw, run)
	if err != nil {
		return // the client went away, or the store failed mid-page
	}
	if s.live(run) {
		hw.SetLive(fmt.Sprintf("/runs/%s/events?after=%d", run.ID, last))
	}
	if hw.Close(sum) != nil || lp == nil {
		return
	}
	lp.Finish(s.pageFacts(run.ID))
}

// pageFacts is what a run's page knows for labelling: the run, who
// labels, and the token when labels can be written here, or why not.
func (s *Server) pageFacts(runID string) map[string]any {
	facts := map[string]any{"run_id": runID, "labeller": s.Labeller}
	if ok, why := s.writable(); ok {
		facts["token"] = s.token
	} else {
		facts["read_only"] = why
	}
	return facts
}

// writeRun streams a run's results into an HTML page, and returns their
// summary and the position of the last one.
func writeRun(ctx context.Context, st store.Store, hw *report.HTMLWriter, run *store.Run) (*results.Summary, int64, error) {
	if err := hw.Start(&run.Header); err != nil {
		return nil, 0, err
	}
	var sum results.Summary
	var last int64
	err := st.Results(ctx, run.ID, 0, func(pos int64, r *agenteval.Result) error {
		last = pos
		sum.Add(r)
		return hw.Write(r)
	})
	sum.DurationMS = run.DurationMS
	return &sum, last, err
}

func (s *Server) comparePage(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	q := r.URL.Query()
	if q.Get("base") == "" || q.Get("new") == "" {
		http.Error(w, "compare needs two runs: /compare?base=RUN&new=RUN", http.StatusBadRequest)
		return
	}
	base, ok := s.resolve(w, ctx, q.Get("base"))
	if !ok {
		return
	}
	cur, ok := s.resolve(w, ctx, q.Get("new"))
	if !ok {
		return
	}
	minDelta, _ := strconv.ParseFloat(q.Get("min_delta"), 64)
	input := func(run *store.Run, label string) compare.Input {
		return compare.Input{Header: &run.Header, Label: label, Results: func(fn func(*agenteval.Result) error) error {
			return s.Store.Results(ctx, run.ID, 0, func(_ int64, r *agenteval.Result) error { return fn(r) })
		}}
	}
	c, err := compare.Compare(input(base, q.Get("base")), input(cur, q.Get("new")), compare.Options{MinDelta: minDelta})
	if err != nil {
		serverError(w, err)
		return
	}
	var js bytes.Buffer
	if err := c.WriteJSON(&js); err != nil {
		serverError(w, err)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	hw := report.NewHTML(w, report.HTMLOptions{Compare: js.Bytes(), Home: "/"})
	sum, _, err := writeRun(ctx, s.Store, hw, base)
	if err != nil {
		return
	}
	hw.EndRun(sum)
	if sum, _, err = writeRun(ctx, s.Store, hw, cur); err != nil {
		return
	}
	hw.Close(sum)
}

// events sends the results of a run in progress as they are stored
// (event "result": {"index": …, "detail": …}), and "end" with the run's
// totals when it finishes. A reconnecting browser resumes after the last
// result it got (Last-Event-ID).
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	run, ok := s.resolve(w, ctx, r.PathValue("ref"))
	if !ok {
		return
	}
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming is not supported here", http.StatusInternalServerError)
		return
	}
	after, _ := strconv.ParseInt(r.URL.Query().Get("after"), 10, 64)
	if id, err := strconv.ParseInt(r.Header.Get("Last-Event-ID"), 10, 64); err == nil && id > after {
		after = id
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	fmt.Fprint(w, "retry: 2000\n\n")
	fl.Flush()
	tick := time.NewTicker(s.poll())
	defer tick.Stop()
	idle := 0
	for {
		err := s.Store.Results(ctx, run.ID, after, func(pos int64, res *agenteval.Result) error {
			detail, err := report.DetailJSON(res)
			if err != nil {
				return err
			}
			index, err := json.Marshal(report.IndexOf(res))
			if err != nil {
				return err
			}
			fmt.Fprintf(w, "id: %d\nevent: result\ndata: {\"index\":%s,\"detail\":%s}\n\n", pos, index, detail)
			after = pos
			idle = 0
			return nil
		})
		if err != nil {
			return
		}
		fl.Flush()
		cur, err := s.Store.Run(ctx, run.ID)
		if err != nil {
			return
		}
		if !s.live(cur) {
			// Results stored just before the end were read above.
			end, _ := json.Marshal(map[string]any{"status": cur.Status, "total": cur.Total, "passed": cur.Passed, "failed": cur.Failed, "errored": cur.Errored})
			fmt.Fprintf(w, "event: end\ndata: %s\n\n", end)
			fl.Flush()
			return
		}
		if idle++; idle%30 == 0 {
			fmt.Fprint(w, ": still running\n\n") // keeps proxies from closing an idle stream
			fl.Flush()
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
