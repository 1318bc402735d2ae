// Package store is the run history: each run's header, its results as they
// finish, and the names (tags) given to runs, kept so that runs can be
// listed, shown, compared and viewed later. It defines the Store interface
// that backends implement (store/sqlite; store/storetest holds the
// contract tests every backend passes), and what is common to all of them:
// resolving a RUN reference and recording a run through report.Writer.
//
// It may import the root package, results and the standard library.
package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/results"
)

// Status is where a run stands.
type Status string

// The statuses of a run. A run whose process died stays running; Stale
// tells such runs apart.
const (
	Running     Status = "running"
	Done        Status = "done"
	Interrupted Status = "interrupted"
	// Failed is a run stopped by an error of its own (bad credentials, a
	// results file that could not be written).
	Failed Status = "failed"
)

// Run is a run as the store knows it: its header, where it stands, and its
// totals so far.
type Run struct {
	ID       string
	Header   results.Header
	Status   Status
	Started  time.Time
	Updated  time.Time
	Finished time.Time // zero until the run ends
	Total    int
	Passed   int
	Failed   int
	Errored  int
	Skipped  int
	// Usage sums the results' usage; CostUSD is nil when some result used
	// tokens at an unknown price.
	Usage      agenteval.Usage
	DurationMS float64
	Tags       []string
	// Shards is the number of shards of a run split with --shard (0 for
	// a run in one piece), and ShardsDone how many have finished.
	Shards, ShardsDone int
}

// Stale reports whether a running run has not been heard from for longer
// than d: its process was most likely killed.
func (r *Run) Stale(now time.Time, d time.Duration) bool {
	return r.Status == Running && now.Sub(r.Updated) > d
}

// Finish is how a run, or one shard of it, ended.
type Finish struct {
	Status     Status
	DurationMS float64
	// Shard is the shard that ended (results.Shard.Index), or 0 for a run
	// in one piece. A sharded run ends when all its shards have.
	Shard int
}

// ListOptions select runs, newest first.
type ListOptions struct {
	Limit  int // 0: no limit
	Offset int
	// IDPrefix keeps runs whose id starts with it.
	IDPrefix string
	// SkipEmptyFailed leaves out runs that failed before any result was
	// stored (a rejected key, a broken configuration): they hold nothing
	// to show or compare, so last and last~N pass over them.
	SkipEmptyFailed bool
}

// Store keeps runs. Implementations are safe for concurrent use.
//
// Writes may be queued: AddResult returns before the result is stored,
// and a write that fails is reported by the next FinishRun (or Close).
// Results of one run are kept in the order they were stored; a result with
// the suite, test id and target of one already stored replaces it (a
// resumed run that repeats a test, a shard run again), so writing a result
// twice stores it once.
//
// The shards of a run (headers with Shard set) record into one run, from
// as many processes and machines at once as there are shards: the first
// to start creates it, the others join it (their suites, target, judge and
// number of shards must match), and it is running until every shard has
// finished.
type Store interface {
	// StartRun records a new run, or reopens the run with the header's id
	// (a resumed run): its results are kept and it is running again. A
	// header with a Shard starts that shard of the run; the run is stored
	// with the header of the whole run (Shard nil, Shards n). A
	// shard's header joins its run, or starts it.
	StartRun(ctx context.Context, h *results.Header) error
	// AddResult adds a finished test's result to a started run. r must not
	// change after the call.
	AddResult(runID string, r *agenteval.Result) error
	// FinishRun waits until every result added so far is stored, then
	// records how the run ended.
	FinishRun(ctx context.Context, runID string, f Finish) error
	// Tag names a run. A name names one run: tagging another run moves it.
	Tag(ctx context.Context, runID, name string) error
	// Untag removes a name.
	Untag(ctx context.Context, name string) error

	// Runs lists runs, newest first.
	Runs(ctx context.Context, opt ListOptions) ([]Run, error)
	// Run returns one run by its full id, or an error wrapping ErrNotFound.
	Run(ctx context.Context, id string) (*Run, error)
	// Tagged returns the id of the run a tag names, or ErrNotFound.
	Tagged(ctx context.Context, name string) (string, error)
	// Results calls fn with each result of a run stored after position
	// after (0: from the start), in order, with its position. Following a
	// live run means calling it again with the last position seen.
	Results(ctx context.Context, runID string, after int64, fn func(pos int64, r *agenteval.Result) error) error
	// Close stores what is queued and releases the store.
	Close() error
}

// ErrNotFound is returned for an unknown run or tag.
var ErrNotFound = errors.New("not found")

// CheckTag says what is wrong with a tag name, or returns nil. Names that
// could be read as another kind of RUN reference are refused.
func CheckTag(name string) error {
	switch {
	case name == "":
		return errors.New("a tag needs a name")
	case name == "last" || strings.HasPrefix(name, "last~"):
		return fmt.Errorf("%q is reserved: RUN %s means the newest runs", name, name)
	case strings.ContainsAny(name, " \t\n/\\"):
		return fmt.Errorf("tag %q: use letters, digits, '-', '_' or '.', without spaces or slashes", name)
	case len(name) > 100:
		return fmt.Errorf("tag %q is longer than 100 characters", name[:20]+"…")
	}
	return nil
}

// Resolve turns a RUN reference into a run id: last (the newest run),
// last~N (N runs before it), a full id, a tag, or an unambiguous prefix
// of an id. last and last~N count only runs that have something to read:
// a run that failed before its first result is reached by its id or a
// tag, never by last, so that "compare last~1 last" after a run that
// stopped on a wrong key still compares two real runs.
func Resolve(ctx context.Context, s Store, ref string) (string, error) {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return "", errors.New("no run given; use an id, a prefix of one, last, last~N, a tag or a results file")
	}
	if ref == "last" || strings.HasPrefix(ref, "last~") {
		n := 0
		if ref != "last" {
			var err error
			if n, err = strconv.Atoi(ref[len("last~"):]); err != nil || n < 0 {
				return "", fmt.Errorf("%q: write last~N with N a whole number, e.g. last~1 for the run before the last", ref)
			}
		}
		runs, err := s.Runs(ctx, ListOptions{Limit: 1, Offset: n, SkipEmptyFailed: true})
		if err != nil {
			return "", err
		}
		if len(runs) == 0 {
			skipped := ""
			if all, err := s.Runs(ctx, ListOptions{Limit: 1, Offset: n}); err == nil && len(all) > 0 {
				skipped = " (not counting runs that failed before their first test; agenteval runs lists them)"
			}
			if n == 0 {
				if skipped != "" {
					return "", fmt.Errorf("%s: %w: no run with results is stored yet%s", ref, ErrNotFound, skipped)
				}
				return "", fmt.Errorf("%s: %w: no runs are stored yet; agenteval run records each run", ref, ErrNotFound)
			}
			return "", fmt.Errorf("%s: %w: fewer than %d runs are stored%s", ref, ErrNotFound, n+1, skipped)
		}
		return runs[0].ID, nil
	}
	if r, err := s.Run(ctx, ref); err == nil {
		return r.ID, nil
	} else if !errors.Is(err, ErrNotFound) {
		return "", err
	}
	if id, err := s.Tagged(ctx, ref); err == nil {
		return id, nil
	} else if !errors.Is(err, ErrNotFound) {
		return "", err
	}
	runs, err := s.Runs(ctx, ListOptions{IDPrefix: ref, Limit: 6})
	if err != nil {
		return "", err
	}
	switch len(runs) {
	case 0:
		return "", fmt.Errorf("run %q: %w: no run id starts with it and no tag has that name (agenteval runs lists them)", ref, ErrNotFound)
	case 1:
		return runs[0].ID, nil
	}
	ids := make([]string, 0, len(runs))
	for _, r := range runs[:min(len(runs), 5)] {
		ids = append(ids, r.ID)
	}
	more := ""
	if len(runs) > 5 {
		more = ", …"
	}
	return "", fmt.Errorf("run %q is ambiguous: it starts %s%s; give more of the id", ref, strings.Join(ids, ", "), more)
}

// Recorder records a run into a store as a report.Writer: Start records
// the header, Write each result, Close how the run ended (set Status
// before closing; the default is Done).
type Recorder struct {
	Store  Store
	Status Status
	// Context bounds the synchronous writes; nil means Background.
	Context context.Context
	runID   string
	shard   int
}

func (r *Recorder) ctx() context.Context {
	if r.Context != nil {
		return r.Context
	}
	return context.Background()
}

// Start records the run's header.
func (r *Recorder) Start(h *results.Header) error {
	r.runID = h.RunID
	if h.Shard != nil {
		r.shard = h.Shard.Index
	}
	return r.Store.StartRun(r.ctx(), h)
}

// Write queues a result.
func (r *Recorder) Write(res *agenteval.Result) error {
	if r.runID == "" {
		return errors.New("store: a result came before the run started")
	}
	return r.Store.AddResult(r.runID, res)
}

// Close waits for the results to be stored and records the end.
func (r *Recorder) Close(sum *results.Summary) error {
	if r.runID == "" {
		return nil
	}
	st := r.Status
	if st == "" {
		st = Done
	}
	f := Finish{Status: st, Shard: r.shard}
	if sum != nil {
		f.DurationMS = sum.DurationMS
	}
	return r.Store.FinishRun(r.ctx(), r.runID, f)
}

// StaleAfter is how long a running run may go unheard before lists show it
// as abandoned: the stores refresh running runs every 10 seconds.
const StaleAfter = time.Minute

// RunRow is a run as lists show it (agenteval runs --format json, and the
// viewer's list): one flat JSON object.
type RunRow struct {
	ID      string    `json:"id"`
	Started time.Time `json:"started"`
	// Status is running, done, interrupted, failed, or abandoned for a
	// running run not heard from for StaleAfter.
	Status  string   `json:"status"`
	Command string   `json:"command,omitempty"`
	Suites  string   `json:"suites"`
	Target  string   `json:"target,omitempty"`
	Judge   string   `json:"judge,omitempty"`
	Total   int      `json:"total"`
	Passed  int      `json:"passed"`
	Failed  int      `json:"failed"`
	Errored int      `json:"errored"`
	Skipped int      `json:"skipped"`
	Tokens  int64    `json:"tokens"`
	Cost    *float64 `json:"cost"`
	// Used says whether any model was called: without, cost means nothing.
	Used       bool     `json:"used"`
	DurationMS float64  `json:"duration_ms"`
	Tags       []string `json:"tags,omitempty"`
	Commit     string   `json:"commit,omitempty"`
	// Shards and ShardsDone: see Run.
	Shards     int `json:"shards,omitempty"`
	ShardsDone int `json:"shards_done,omitempty"`
}

// Row flattens a run for a list, as of now.
func (r *Run) Row(now time.Time) RunRow {
	status := string(r.Status)
	if r.Stale(now, StaleAfter) {
		status = "abandoned"
	}
	row := RunRow{ID: r.ID, Started: r.Started, Status: status, Command: r.Header.Command, Suites: strings.Join(r.Header.SuiteNames(), ", "),
		Target: r.Header.Target, Judge: r.Header.Judge, Total: r.Total, Passed: r.Passed, Failed: r.Failed, Errored: r.Errored,
		Skipped: r.Skipped, Tokens: r.Usage.InputTokens + r.Usage.OutputTokens, Cost: r.Usage.CostUSD,
		Used: r.Usage.Calls > 0 || r.Usage.InputTokens+r.Usage.OutputTokens > 0, DurationMS: r.DurationMS, Tags: r.Tags,
		Shards: r.Shards, ShardsDone: r.ShardsDone}
	if r.Header.Git != nil {
		row.Commit = r.Header.Git.Commit
	}
	return row
}
