package session

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/project"
	"github.com/agenteval/agenteval/report"
	"github.com/agenteval/agenteval/results"
	"github.com/agenteval/agenteval/store"
)

// NewHeader starts the header of a run: its id, the command and agenteval
// version that wrote it, the time, and the commit of the project at root
// ("" means the working directory's).
func NewHeader(command, version, root string) *results.Header {
	if root == "" {
		root = project.Here()
	}
	h := &results.Header{Record: results.RecordRun, RunID: results.NewRunID(), AgentevalVersion: version,
		Started: time.Now().UTC().Truncate(time.Millisecond), Command: command}
	if g := project.GitState(root); g != nil {
		h.Git = &results.Git{Commit: g.Commit, Dirty: g.Dirty}
	}
	return h
}

// validRunID accepts ids that are safe in file names, URLs and
// references.
func validRunID(id string) bool {
	if len(id) == 0 || len(id) > 64 || id == "last" || strings.HasPrefix(id, "last~") {
		return false
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// SuiteFile describes one input file of a run, with the hash of its bytes.
func SuiteFile(path, name string) (results.SuiteFile, error) {
	sf := results.SuiteFile{Path: path, Name: name}
	if path == "-" {
		return sf, nil
	}
	sum, err := results.HashFile(path)
	if err != nil {
		return sf, err
	}
	sf.SHA256 = sum
	return sf, nil
}

// joinUnique joins the distinct non-empty values, in order of first use.
func joinUnique(vals []string) string {
	var out []string
	seen := map[string]bool{}
	for _, v := range vals {
		if v != "" && !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return strings.Join(out, ", ")
}

// checkResume refuses to continue a results file written for other suites
// or another target: the finished tests it holds would not be the ones
// this run would have produced.
func checkResume(path string, old, cur *results.Header) error {
	problems := resumeProblems(old, cur)
	if len(problems) == 0 {
		return nil
	}
	return fmt.Errorf("--resume %s: %s.\nContinuing would mix results of different runs. Start a new results file, or pass --force to resume anyway", path, strings.Join(problems, "; "))
}

// resumeProblems says how the run a results file holds differs from the
// run about to start: its target, or suites changed or missing.
func resumeProblems(old, cur *results.Header) []string {
	var problems []string
	if o, c := old.Shard, cur.Shard; (o == nil) != (c == nil) || (o != nil && (o.Index != c.Index || o.Count != c.Count)) {
		problems = append(problems, fmt.Sprintf("it holds %s, this run is %s", shardName(o), shardName(c)))
	}
	if old.Target != cur.Target {
		problems = append(problems, fmt.Sprintf("its target was %q, this run's is %q", old.Target, cur.Target))
	}
	// The settings that change what a result means: pass@k over trials
	// of different counts, or verdicts of different judges or pass marks,
	// would be mixed in one run.
	if old.Trials != cur.Trials {
		problems = append(problems, fmt.Sprintf("it was run with --trials %s, this run with %s", setting(old.Trials), setting(cur.Trials)))
	}
	if old.Judge != cur.Judge {
		problems = append(problems, fmt.Sprintf("its judge was %s, this run's is %s", quoted(old.Judge), quoted(cur.Judge)))
	}
	if old.Simulator != cur.Simulator {
		problems = append(problems, fmt.Sprintf("its simulated users were played by %s, this run's by %s", quoted(old.Simulator), quoted(cur.Simulator)))
	}
	if o, c := old.Threshold, cur.Threshold; (o == nil) != (c == nil) || (o != nil && *o != *c) {
		problems = append(problems, fmt.Sprintf("its --threshold was %s, this run's is %s", threshold(o), threshold(c)))
	}
	oldHash := map[string]results.SuiteFile{}
	for _, s := range old.Suites {
		oldHash[s.SHA256] = s
	}
	var changed []string
	for _, s := range cur.Suites {
		if _, ok := oldHash[s.SHA256]; !ok {
			changed = append(changed, s.Path)
		}
	}
	if len(changed) > 0 || len(old.Suites) != len(cur.Suites) {
		what := "the suites differ"
		if len(changed) > 0 {
			what = fmt.Sprintf("%s changed since it was written (or is not one of its suites)", strings.Join(changed, ", "))
		}
		problems = append(problems, what)
	}
	return problems
}

func setting(n int) string {
	if n == 0 {
		return "the suite's"
	}
	return fmt.Sprint(n)
}

func quoted(s string) string {
	if s == "" {
		return "none"
	}
	return fmt.Sprintf("%q", s)
}

func threshold(t *float64) string {
	if t == nil {
		return "the suite's"
	}
	return fmt.Sprint(*t)
}

// resumed is what a results file holds for --resume.
type resumed struct {
	header *results.Header
	done   map[string]map[string]agenteval.ExecutionStatus // doneKey(suite, target) -> test -> status
	n      int
	// For --rerun-failed and --retry-errors: the results carried over
	// into the new run, how many tests run again, and (--rerun-failed)
	// which: only these of the unfinished tests run.
	kept  []*agenteval.Result
	rerun int
	again map[string]map[string]bool
	// cut is how many bytes of a cut-off last line were removed.
	cut int64
}

// readResumed reads a results file for --resume. A last line cut off by a
// kill is removed from the file, so the results appended after it start
// on a line of their own.
func readResumed(path string) (*resumed, error) {
	r := &resumed{done: map[string]map[string]agenteval.ExecutionStatus{}}
	rd, closeFile, err := results.OpenResults(path)
	if errors.Is(err, os.ErrNotExist) {
		return r, nil
	}
	if err != nil {
		return nil, err
	}
	defer closeFile()
	for {
		res, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		r.note(res)
	}
	r.header = rd.Header()
	if cut, whole := rd.Cut(); cut {
		if st, err := os.Stat(path); err == nil {
			r.cut = st.Size() - whole
		}
		if err := os.Truncate(path, whole); err != nil {
			return nil, fmt.Errorf("remove the cut-off last line of %s: %w", path, err)
		}
	}
	return r, nil
}

// softWriter keeps a failing writer (the store) from failing the run: the
// first error is reported once, and the writer is dropped. The results
// files are the record; the store is an index over them.
type softWriter struct {
	w      report.Writer
	warn   func(error)
	mu     sync.Mutex
	failed bool
}

func (s *softWriter) fail(err error) error {
	if err != nil && !s.failed {
		s.failed = true
		s.warn(err)
	}
	return nil
}

// Start records the header in the background: the store's first write
// waits for its lock and a commit, 2 to 40 ms on a busy machine, which the
// run's first conversations need not wait for. Its failure is a warning
// either way. The writer stays locked until the header is in, so the
// results and the end of the run come after it.
func (s *softWriter) Start(h *results.Header) error {
	st, ok := s.w.(report.Starter)
	if !ok {
		return nil
	}
	s.mu.Lock()
	if s.failed {
		s.mu.Unlock()
		return nil
	}
	go func() {
		defer s.mu.Unlock()
		s.fail(st.Start(h))
	}()
	return nil
}

func (s *softWriter) Write(r *agenteval.Result) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failed {
		return nil
	}
	return s.fail(s.w.Write(r))
}

func (s *softWriter) Close(sum *results.Summary) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failed {
		return nil
	}
	return s.fail(s.w.Close(sum))
}

// storeWarning is the message for a store that failed.
func storeWarning(opt *Options, path string) func(error) {
	return func(err error) {
		opt.logf("agenteval: warning: the run store %s failed, so it does not hold this run whole: %v\n(the results files are complete; --no-store turns the store off)\n", path, err)
	}
}

// recording is a run's store, when it has one.
type recording struct {
	db  store.Store
	rec *store.Recorder
	w   *softWriter
}

// startRecording opens the store for a run. With the store off, or when
// the project's own store cannot be opened (with a warning), it returns
// nil, and every method of a nil recording does nothing. A store that was
// named (--store, AGENTEVAL_STORE, store: in agenteval.yaml) and cannot be
// opened is an error: a team that shares a store wants every run in it,
// and says --no-store when it does not.
func startRecording(opt *Options) (*recording, error) {
	if opt.NoStore {
		return nil, nil
	}
	db, w, err := openStore(opt.Store, opt.Root)
	if err != nil {
		if w.From != "" {
			return nil, configErr("the run store %s (from %s) cannot be opened: %v\n(--no-store runs without it)", w.Name(), w.From, err)
		}
		storeWarning(opt, w.Name())(err)
		return nil, nil
	}
	rec := &store.Recorder{Store: db}
	return &recording{db: db, rec: rec, w: &softWriter{w: rec, warn: storeWarning(opt, w.Name())}}, nil
}

// writer is what the run writes to, or nil.
func (r *recording) writer() report.Writer {
	if r == nil {
		return nil
	}
	return r.w
}

// needsBackfill reports whether the store lacks results of a resumed run
// (it was started with --no-store, or the store is new). A resumed shard's
// results are always stored again: the run's total counts the other
// shards' too, so it cannot tell, and storing a result twice keeps it
// once.
func (r *recording) needsBackfill(ctx context.Context, h *results.Header, n int) bool {
	if r == nil || n == 0 {
		return false
	}
	r.w.mu.Lock()
	failed := r.w.failed
	r.w.mu.Unlock()
	if failed {
		return false
	}
	if h.Shard != nil {
		return true
	}
	run, err := r.db.Run(ctx, h.RunID)
	return err != nil || run.Total < n
}

// holds reports whether the store has a finished run with n results
// already: shards that recorded into a shared store.
func (r *recording) holds(ctx context.Context, runID string, n int) bool {
	if r == nil {
		return false
	}
	run, err := r.db.Run(ctx, runID)
	return err == nil && run.Status == store.Done && run.Total == n
}

// add stores an earlier result of a resumed run.
func (r *recording) add(runID string, res *agenteval.Result) {
	r.w.mu.Lock()
	defer r.w.mu.Unlock()
	if !r.w.failed {
		r.w.fail(r.db.AddResult(runID, res))
	}
}

// finish sets how the run ended; the writers' Close records it.
func (r *recording) finish(runErr error, ctx context.Context) {
	if r == nil {
		return
	}
	switch {
	case runErr == nil:
		r.rec.Status = store.Done
	case errors.Is(runErr, context.Canceled) || ctx.Err() != nil:
		r.rec.Status = store.Interrupted
	default:
		r.rec.Status = store.Failed
	}
}

func (r *recording) close() {
	if r == nil {
		return
	}
	r.w.fail(r.db.Close())
}

// shardName says which part of a run a header's file holds.
func shardName(s *results.Shard) string {
	if s == nil {
		return "a whole run"
	}
	return "shard " + s.String()
}
