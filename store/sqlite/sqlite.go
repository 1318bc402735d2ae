// Package sqlite keeps the run store in one SQLite file (pure Go, through
// modernc.org/sqlite): WAL mode, so readers such as agenteval view never
// block the run that writes; a versioned schema with migrations; and one
// writer goroutine that batches results into transactions, so recording a
// run costs the runner nothing it can measure.
//
// It may import the root package, report, store and the standard library.
package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/report"
	"github.com/agenteval/agenteval/store"
	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// Options configure Open.
type Options struct {
	// ReadOnly opens an existing store for reading only; writes fail.
	ReadOnly bool
}

// DB is a store in one SQLite file.
type DB struct {
	db       *sql.DB
	path     string
	readOnly bool

	insert *sql.Stmt // prepared once: most writes are results

	mu      sync.RWMutex // guards closed against sends on ops
	closed  bool
	ops     chan op
	stopped chan struct{}

	errMu    sync.Mutex
	asyncErr map[string]error // first failed queued write, per run
}

var _ store.Store = (*DB)(nil)

// Open opens (creating it when missing, unless read-only) the store at
// path and brings its schema up to date.
func Open(path string, opt Options) (*DB, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	if opt.ReadOnly {
		if _, err := os.Stat(abs); err != nil {
			return nil, fmt.Errorf("open store: %w", err)
		}
	} else if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	q := url.Values{}
	q.Add("_busy_timeout", "10000")
	q.Add("_foreign_keys", "on")
	if opt.ReadOnly {
		q.Add("mode", "ro")
	} else {
		q.Add("_journal_mode", "WAL")
		// In WAL mode NORMAL loses no committed data on a crash of the
		// process, only on a power cut, and syncs far less.
		q.Add("_synchronous", "NORMAL")
	}
	dsn := "file:" + (&url.URL{Path: abs}).EscapedPath() + "?" + q.Encode()
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	ctx := context.Background()
	if opt.ReadOnly {
		v, err := userVersion(ctx, db)
		if err == nil && v != SchemaVersion {
			if v > SchemaVersion {
				err = newerSchema(path, v)
			} else {
				err = fmt.Errorf("%s has schema v%d; any agenteval command that records runs updates it to v%d", path, v, SchemaVersion)
			}
		}
		if err != nil {
			db.Close()
			return nil, fmt.Errorf("open store: %w", err)
		}
	} else if err := migrate(ctx, db, path); err != nil {
		db.Close()
		return nil, fmt.Errorf("open store: %w", err)
	}
	s := &DB{db: db, path: path, readOnly: opt.ReadOnly, asyncErr: map[string]error{}}
	if !opt.ReadOnly {
		if s.insert, err = db.PrepareContext(ctx, insertSQL); err != nil {
			db.Close()
			return nil, fmt.Errorf("open store: %w", err)
		}
		s.ops = make(chan op, 256)
		s.stopped = make(chan struct{})
		go s.writer()
	}
	return s, nil
}

// Path is the store's file.
func (s *DB) Path() string { return s.path }

// Close stores what is queued and closes the file.
func (s *DB) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	if s.ops != nil {
		close(s.ops)
	}
	s.mu.Unlock()
	if s.stopped != nil {
		<-s.stopped
	}
	var errs []error
	s.errMu.Lock()
	for id, err := range s.asyncErr {
		errs = append(errs, fmt.Errorf("run %s: %w", id, err))
	}
	s.errMu.Unlock()
	if s.insert != nil {
		s.insert.Close()
	}
	if err := s.db.Close(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// timeText formats times with a fixed width, so that text order is time
// order.
const timeText = "2006-01-02T15:04:05.000000000Z"

func fmtTime(t time.Time) string { return t.UTC().Format(timeText) }

func parseTime(s string) time.Time {
	t, _ := time.Parse(timeText, s)
	return t
}

// send queues a write; sync writes wait for it to be committed.
func (s *DB) send(o op) error {
	if s.readOnly {
		return errors.New("store: opened read-only")
	}
	s.mu.RLock()
	if s.closed {
		s.mu.RUnlock()
		return errors.New("store: closed")
	}
	s.ops <- o
	s.mu.RUnlock()
	if o.reply == nil {
		return nil
	}
	return <-o.reply
}

func syncOp(o op) op {
	o.reply = make(chan error, 1)
	return o
}

// StartRun records a run, or reopens one (a resumed run).
func (s *DB) StartRun(ctx context.Context, h *report.Header) error {
	if h.RunID == "" {
		return errors.New("store: the run has no id")
	}
	hdr := *h
	hdr.Record = report.RecordRun
	b, err := json.Marshal(&hdr)
	if err != nil {
		return fmt.Errorf("store: encode header: %w", err)
	}
	started := h.Started
	if started.IsZero() {
		started = time.Now()
	}
	return s.send(syncOp(op{kind: opStart, runID: h.RunID, header: b, started: started}))
}

// AddResult queues a result.
func (s *DB) AddResult(runID string, r *agenteval.Result) error {
	row, err := newResultRow(r)
	if err != nil {
		return err
	}
	return s.send(op{kind: opAdd, runID: runID, row: row})
}

// FinishRun waits for the run's queued results and records its end.
func (s *DB) FinishRun(ctx context.Context, runID string, f store.Finish) error {
	err := s.send(syncOp(op{kind: opFinish, runID: runID, finish: f}))
	s.errMu.Lock()
	aerr := s.asyncErr[runID]
	delete(s.asyncErr, runID)
	s.errMu.Unlock()
	return errors.Join(aerr, err)
}

// Tag names a run.
func (s *DB) Tag(ctx context.Context, runID, name string) error {
	if err := store.CheckTag(name); err != nil {
		return err
	}
	return s.send(syncOp(op{kind: opTag, runID: runID, tag: name}))
}

// Untag removes a name.
func (s *DB) Untag(ctx context.Context, name string) error {
	return s.send(syncOp(op{kind: opUntag, tag: name}))
}

const runColumns = `id, header, status, started, updated, coalesce(finished, ''),
	total, passed, failed, errored, skipped, calls, cached_calls, input_tokens, output_tokens,
	cost_usd, cost_unknown, duration_ms,
	coalesce((SELECT group_concat(name, ' ') FROM (SELECT name FROM tags WHERE run_id = runs.id ORDER BY name)), '')`

func scanRun(sc interface{ Scan(...any) error }) (*store.Run, error) {
	var r store.Run
	var header, status, started, updated, finished, tags string
	var cost float64
	var costUnknown bool
	err := sc.Scan(&r.ID, &header, &status, &started, &updated, &finished,
		&r.Total, &r.Passed, &r.Failed, &r.Errored, &r.Skipped,
		&r.Usage.Calls, &r.Usage.CachedCalls, &r.Usage.InputTokens, &r.Usage.OutputTokens,
		&cost, &costUnknown, &r.DurationMS, &tags)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(header), &r.Header); err != nil {
		return nil, fmt.Errorf("run %s: stored header: %w", r.ID, err)
	}
	r.Status = store.Status(status)
	r.Started, r.Updated = parseTime(started), parseTime(updated)
	if finished != "" {
		r.Finished = parseTime(finished)
	}
	if !costUnknown && (r.Usage.Calls > 0 || r.Usage.InputTokens > 0 || r.Usage.OutputTokens > 0) {
		r.Usage.CostUSD = &cost
	}
	if tags != "" {
		r.Tags = strings.Fields(tags)
	}
	return &r, nil
}

// Runs lists runs, newest first.
func (s *DB) Runs(ctx context.Context, opt store.ListOptions) ([]store.Run, error) {
	limit := opt.Limit
	if limit <= 0 {
		limit = -1
	}
	rows, err := s.db.QueryContext(ctx, `SELECT `+runColumns+` FROM runs
		WHERE ?1 = '' OR substr(id, 1, length(?1)) = ?1
		ORDER BY started DESC, id DESC LIMIT ?2 OFFSET ?3`, opt.IDPrefix, limit, opt.Offset)
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	defer rows.Close()
	var out []store.Run
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, fmt.Errorf("list runs: %w", err)
		}
		out = append(out, *r)
	}
	return out, rows.Err()
}

// Run returns one run by id.
func (s *DB) Run(ctx context.Context, id string) (*store.Run, error) {
	r, err := scanRun(s.db.QueryRowContext(ctx, `SELECT `+runColumns+` FROM runs WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("run %s: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", id, err)
	}
	return r, nil
}

// Tagged returns the run a tag names.
func (s *DB) Tagged(ctx context.Context, name string) (string, error) {
	var id string
	err := s.db.QueryRowContext(ctx, `SELECT run_id FROM tags WHERE name = ?`, name).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("tag %s: %w", name, store.ErrNotFound)
	}
	if err != nil {
		return "", fmt.Errorf("tag %s: %w", name, err)
	}
	return id, nil
}

// Results calls fn with the run's results stored after position after.
// Rows are read in pages, so a run of any size streams in flat memory and
// no read transaction stays open while fn works.
func (s *DB) Results(ctx context.Context, runID string, after int64, fn func(int64, *agenteval.Result) error) error {
	const page = 256
	for {
		rows, err := s.db.QueryContext(ctx, `SELECT seq, data FROM results WHERE run_id = ? AND seq > ? ORDER BY seq LIMIT ?`, runID, after, page)
		if err != nil {
			return fmt.Errorf("results of run %s: %w", runID, err)
		}
		type item struct {
			seq  int64
			data []byte
		}
		var items []item
		for rows.Next() {
			var it item
			if err := rows.Scan(&it.seq, &it.data); err != nil {
				rows.Close()
				return fmt.Errorf("results of run %s: %w", runID, err)
			}
			items = append(items, it)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("results of run %s: %w", runID, err)
		}
		for _, it := range items {
			r, err := decodeResult(it.data)
			if err != nil {
				return fmt.Errorf("run %s result %d: %w", runID, it.seq, err)
			}
			if err := fn(it.seq, r); err != nil {
				return err
			}
			after = it.seq
		}
		if len(items) < page {
			return nil
		}
	}
}
