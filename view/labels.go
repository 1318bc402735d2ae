package view

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/store"
)

// TokenHeader is the request header that carries the viewer's token on
// every write. The token is made when the viewer starts and reaches only
// the pages it serves: never a URL, a log or another origin.
const TokenHeader = "X-Agenteval-Token"

// maxNote is the longest note a label may carry, in characters.
const maxNote = 4000

// maxLabelBody is the largest write request read.
const maxLabelBody = 64 << 10

// newToken makes a session token: 32 random bytes.
func newToken() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		// crypto/rand does not fail on the systems Go supports; a viewer
		// without a token would take no writes at all.
		return ""
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// labels is the store's label keeper, or nil when it keeps none.
func (s *Server) labels() store.Labels {
	l, err := store.LabelsOf(s.Store)
	if err != nil {
		return nil
	}
	return l
}

// writable says whether labels can be written through this viewer, or
// why not.
func (s *Server) writable() (bool, string) {
	switch {
	case s.labels() == nil:
		return false, "this store keeps no labels"
	case s.ReadOnly != "":
		return false, s.ReadOnly
	case s.AllowAnyHost:
		return false, "labels are written only through a viewer on loopback (view without --host)"
	case s.token == "":
		return false, "the viewer has no session token"
	}
	return true, ""
}

// apiError answers with {"error": msg}.
func apiError(w http.ResponseWriter, code int, format string, args ...any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(map[string]string{"error": fmt.Sprintf(format, args...)})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// checkWrite refuses a write that does not come from a page this viewer
// served, in this session: the Host must be a loopback name for the port
// the request came in on (no DNS rebinding), the Origin must be the
// viewer's own (and Sec-Fetch-Site same-origin when the browser sends
// it: no other site's page), and the session token must be there. It
// answers and returns false when it refuses.
func (s *Server) checkWrite(w http.ResponseWriter, r *http.Request) bool {
	if ok, why := s.writable(); !ok {
		apiError(w, http.StatusForbidden, "labels cannot be written here: %s", why)
		return false
	}
	local, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ownHost(r.Host, local) {
		apiError(w, http.StatusForbidden, "refused: a write must be addressed to this viewer's loopback address (Host %q is not)", r.Host)
		return false
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		apiError(w, http.StatusForbidden, "refused: a write needs the Origin header of the viewer's own page")
		return false
	}
	if !strings.EqualFold(origin, "http://"+r.Host) {
		apiError(w, http.StatusForbidden, "refused: a write from another origin (%q is not http://%s)", origin, r.Host)
		return false
	}
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" {
		apiError(w, http.StatusForbidden, "refused: a write from another site (Sec-Fetch-Site %q)", site)
		return false
	}
	got := r.Header.Get(TokenHeader)
	if got == "" {
		apiError(w, http.StatusForbidden, "refused: a write needs the viewer's session token in %s; reload the page (the token changes each time the viewer starts)", TokenHeader)
		return false
	}
	if subtle.ConstantTimeCompare([]byte(got), []byte(s.token)) != 1 {
		apiError(w, http.StatusForbidden, "refused: the session token is wrong; reload the page (the token changes each time the viewer starts)")
		return false
	}
	return true
}

// ownHost reports whether a request's Host names the viewer on loopback:
// a loopback name (localhost, 127.0.0.1, ::1) with the port the request
// came in on.
func ownHost(host string, local net.Addr) bool {
	if local == nil || !loopbackHost(host) {
		return false
	}
	_, port, err := net.SplitHostPort(host)
	if err != nil {
		return false
	}
	lhost, lport, err := net.SplitHostPort(local.String())
	if err != nil {
		return false
	}
	lip := net.ParseIP(lhost)
	return port == lport && lip != nil && lip.IsLoopback()
}

// labelRequest is the body of a write: a label's key and, to put it, the
// human verdict and a note. Who labels is the viewer's to say.
type labelRequest struct {
	RunID     string `json:"run_id"`
	Suite     string `json:"suite"`
	TestID    string `json:"test_id"`
	Target    string `json:"target"`
	Trial     int    `json:"trial"`
	Score     string `json:"score"`
	Criterion string `json:"criterion"`
	Human     string `json:"human"`
	Note      string `json:"note"`
}

func (q *labelRequest) key() store.LabelKey {
	return store.LabelKey{RunID: q.RunID, Suite: q.Suite, TestID: q.TestID, Target: q.Target, Trial: q.Trial, Score: q.Score, Criterion: q.Criterion}
}

// readLabel reads and checks a write's body; it answers and returns false
// when the body is wrong.
func readLabel(w http.ResponseWriter, r *http.Request, put bool) (*labelRequest, bool) {
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		apiError(w, http.StatusUnsupportedMediaType, "a label is sent as JSON (Content-Type: application/json)")
		return nil, false
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxLabelBody))
	dec.DisallowUnknownFields()
	var q labelRequest
	if err := dec.Decode(&q); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			apiError(w, http.StatusRequestEntityTooLarge, "a label's request is at most %d bytes", maxLabelBody)
			return nil, false
		}
		apiError(w, http.StatusBadRequest, "bad JSON in the label: %v; send {run_id, suite, test_id, target, trial, score, criterion, human, note}", err)
		return nil, false
	}
	if _, err := dec.Token(); err != io.EOF {
		apiError(w, http.StatusBadRequest, "bad JSON in the label: one object is expected, and more follows it")
		return nil, false
	}
	if q.RunID == "" {
		apiError(w, http.StatusBadRequest, "the label names no run (run_id)")
		return nil, false
	}
	if !put {
		return &q, true
	}
	if n := utf8.RuneCountInString(q.Note); n > maxNote {
		apiError(w, http.StatusBadRequest, "the note has %d characters; at most %d are kept", n, maxNote)
		return nil, false
	}
	l := store.Label{LabelKey: q.key(), Human: agenteval.Verdict(q.Human), Note: q.Note}
	if err := l.Check(); err != nil {
		apiError(w, http.StatusBadRequest, "%v", err)
		return nil, false
	}
	return &q, true
}

// labelWrite reads a write to a criterion's label: the checks every
// write passes, the request, and the run's judged criterion it names.
func (s *Server) labelWrite(w http.ResponseWriter, r *http.Request, put bool) (*labelRequest, *runIndex, *criterion, bool) {
	if !s.checkWrite(w, r) {
		return nil, nil, nil, false
	}
	q, ok := readLabel(w, r, put)
	if !ok {
		return nil, nil, nil, false
	}
	idx, ok := s.runIndex(w, r.Context(), q.RunID)
	if !ok {
		return nil, nil, nil, false
	}
	c, err := idx.find(q.key())
	if err != nil {
		apiError(w, http.StatusUnprocessableEntity, "run %s: %v", q.RunID, err)
		return nil, nil, nil, false
	}
	return q, idx, c, true
}

// putLabel stores a person's verdict on a judged criterion of a run:
// POST /api/labels with a labelRequest.
func (s *Server) putLabel(w http.ResponseWriter, r *http.Request) {
	q, idx, c, ok := s.labelWrite(w, r, true)
	if !ok {
		return
	}
	ctx := r.Context()
	l := store.Label{LabelKey: c.LabelKey, Human: agenteval.Verdict(q.Human), Note: q.Note, Labeller: s.Labeller}
	l.RunID = q.RunID
	if err := s.labels().PutLabels(ctx, []store.Label{l}); err != nil {
		apiError(w, http.StatusInternalServerError, "%v", err)
		return
	}
	s.answerLabels(w, ctx, idx, c)
}

// deleteLabel removes the label of a criterion: DELETE /api/labels with
// its key.
func (s *Server) deleteLabel(w http.ResponseWriter, r *http.Request) {
	q, idx, c, ok := s.labelWrite(w, r, false)
	if !ok {
		return
	}
	ctx := r.Context()
	k := c.LabelKey
	k.RunID = q.RunID
	if err := s.labels().DeleteLabel(ctx, k); err != nil {
		apiError(w, http.StatusInternalServerError, "%v", err)
		return
	}
	s.answerLabels(w, ctx, idx, c)
}

// answerLabels answers a write with the criterion as it stands now and
// the run's totals.
func (s *Server) answerLabels(w http.ResponseWriter, ctx context.Context, idx *runIndex, c *criterion) {
	ls, err := s.labels().RunLabels(ctx, idx.id)
	if err != nil {
		apiError(w, http.StatusInternalServerError, "%v", err)
		return
	}
	byKey := labelsByKey(ls)
	writeJSON(w, map[string]any{"criterion": withLabel(c, byKey), "summary": idx.summary(byKey)})
}

// labelledCriterion is a criterion with its label, if it has one.
type labelledCriterion struct {
	criterion
	Label *store.Label `json:"label"`
}

func withLabel(c *criterion, byKey map[critKey]*store.Label) labelledCriterion {
	return labelledCriterion{criterion: *c, Label: byKey[critKeyOf(c.LabelKey)]}
}

func labelsByKey(ls []store.Label) map[critKey]*store.Label {
	m := make(map[critKey]*store.Label, len(ls))
	for i := range ls {
		m[critKeyOf(ls[i].LabelKey)] = &ls[i]
	}
	return m
}

// labelSummary is how far a run's judged criteria are labelled, and how
// often the labels agree with the judge.
type labelSummary struct {
	// Judged is how many judged criteria the run holds.
	Judged int `json:"judged"`
	// Labelled is how many of them carry a label; Agree how many labels
	// say what the judge said.
	Labelled int `json:"labelled"`
	Agree    int `json:"agree"`
	// FalsePass counts the criteria the judge passed and a person failed.
	FalsePass int `json:"false_pass"`
}

func (x *runIndex) summary(byKey map[critKey]*store.Label) labelSummary {
	var sum labelSummary
	for _, cs := range x.tests {
		for i := range cs {
			sum.Judged++
			l := byKey[critKeyOf(cs[i].LabelKey)]
			if l == nil {
				continue
			}
			sum.Labelled++
			if l.Human == cs[i].Judge {
				sum.Agree++
			} else if cs[i].Judge == agenteval.VerdictPass {
				sum.FalsePass++
			}
		}
	}
	return sum
}

// runLabels answers GET /api/runs/{ref}/labels: the run's totals
// (summary), and with ?test=ID (and suite, target) that test's judged
// criteria, each with its label.
func (s *Server) runLabels(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	if s.labels() == nil {
		apiError(w, http.StatusNotFound, "this store keeps no labels")
		return
	}
	id, err := store.Resolve(ctx, s.Store, r.PathValue("ref"))
	if err != nil {
		code := http.StatusInternalServerError
		if errors.Is(err, store.ErrNotFound) || strings.Contains(err.Error(), "ambiguous") {
			code = http.StatusNotFound
		}
		apiError(w, code, "%v", err)
		return
	}
	idx, ok := s.runIndex(w, ctx, id)
	if !ok {
		return
	}
	ls, err := s.labels().RunLabels(ctx, id)
	if err != nil {
		apiError(w, http.StatusInternalServerError, "%v", err)
		return
	}
	byKey := labelsByKey(ls)
	out := map[string]any{"run_id": id, "summary": idx.summary(byKey)}
	q := r.URL.Query()
	if q.Has("test") {
		cs := idx.tests[testKey{q.Get("suite"), q.Get("test"), q.Get("target")}]
		list := make([]labelledCriterion, 0, len(cs))
		for i := range cs {
			list = append(list, withLabel(&cs[i], byKey))
		}
		out["criteria"] = list
	}
	writeJSON(w, out)
}

// runIndex is a run's judged criteria, test by test.
type runIndex struct {
	id      string
	updated time.Time
	total   int
	tests   map[testKey][]criterion
}

// find returns the judged criterion with the key, or says what of the key
// names nothing judged.
func (x *runIndex) find(k store.LabelKey) (*criterion, error) {
	cs, ok := x.tests[keyOf(k)]
	if !ok {
		return nil, fmt.Errorf("no test %s with judged criteria", testName(k))
	}
	var trial, score bool
	for i := range cs {
		c := &cs[i]
		if c.Trial != k.Trial {
			continue
		}
		trial = true
		if c.Score != k.Score {
			continue
		}
		score = true
		if c.Criterion == k.Criterion {
			return c, nil
		}
	}
	switch {
	case !trial && k.Trial == 0:
		return nil, fmt.Errorf("test %s ran several trials: name the trial", testName(k))
	case !trial:
		return nil, fmt.Errorf("test %s has no judged criteria in trial %d", testName(k), k.Trial)
	case !score:
		return nil, fmt.Errorf("test %s has no judged score %q", testName(k), k.Score)
	}
	return nil, fmt.Errorf("test %s: score %q has no judged criterion %q", testName(k), k.Score, k.Criterion)
}

func testName(k store.LabelKey) string {
	name := k.TestID
	if k.Suite != "" {
		name = k.Suite + "/" + name
	}
	if k.Target != "" {
		name += " [" + k.Target + "]"
	}
	return name
}

// indexCache keeps the judged criteria of the runs labelled lately, so
// that each label written does not read the whole run again. An entry is
// good while its run has neither changed nor grown.
type indexCache struct {
	mu   sync.Mutex
	runs map[string]*runIndex
}

// maxCachedRuns bounds the cache; a person labels one run at a time.
const maxCachedRuns = 4

// runIndex reads a run's judged criteria (or takes them from the cache);
// it answers and returns false when the run cannot be read.
func (s *Server) runIndex(w http.ResponseWriter, ctx context.Context, id string) (*runIndex, bool) {
	run, err := s.Store.Run(ctx, id)
	if err != nil {
		code := http.StatusInternalServerError
		if errors.Is(err, store.ErrNotFound) {
			code = http.StatusNotFound
		}
		apiError(w, code, "%v", err)
		return nil, false
	}
	s.cache.mu.Lock()
	idx := s.cache.runs[id]
	s.cache.mu.Unlock()
	if idx != nil && idx.updated.Equal(run.Updated) && idx.total == run.Total {
		return idx, true
	}
	idx = &runIndex{id: id, updated: run.Updated, total: run.Total, tests: map[testKey][]criterion{}}
	err = s.Store.Results(ctx, id, 0, func(_ int64, r *agenteval.Result) error {
		k := testKey{r.Suite, r.TestID, r.Target}
		if cs := judgedCriteria(r); len(cs) > 0 {
			idx.tests[k] = cs
		} else {
			delete(idx.tests, k) // a repeated test replaces its earlier result
		}
		return nil
	})
	if err != nil {
		apiError(w, http.StatusInternalServerError, "read run %s: %v", id, err)
		return nil, false
	}
	s.cache.mu.Lock()
	if s.cache.runs == nil || len(s.cache.runs) >= maxCachedRuns {
		s.cache.runs = map[string]*runIndex{}
	}
	s.cache.runs[id] = idx
	s.cache.mu.Unlock()
	return idx, true
}
