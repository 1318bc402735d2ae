// Package sqlstore is the run store written once for every SQL database:
// the schema and its migrations, the queries, and one writer goroutine that
// batches results into transactions, so that recording a run costs the
// runner nothing it can measure. A Dialect says what differs between
// databases; store/sqlite and store/postgres are this package with theirs.
//
// Writers of one run take turns: each transaction first locks the rows of
// the runs it writes, so results are numbered in the order they are
// committed, and a reader following a run (Results after the last position
// it saw) misses none, even while several processes (the shards of a run)
// write it at once.
//
// It may import the root package, results, store and the standard library.
package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/results"
	"github.com/agenteval/agenteval/store"
)

// Options configure New.
type Options struct {
	// Name names the store in messages: a path, or a URL without its
	// password.
	Name string
	// ReadOnly opens an existing store for reading only; writes fail, and
	// the schema is checked, not updated.
	ReadOnly bool
}

// DB is a store in a SQL database.
type DB struct {
	db       *sql.DB
	d        *Dialect
	name     string
	readOnly bool
	// version is the schema's: older than SchemaVersion only for a store
	// opened read-only (see ReadableFrom).
	version int

	insert *sql.Stmt // prepared once: most writes are results

	mu      sync.RWMutex // guards closed against sends on ops
	closed  bool
	ops     chan op
	stopped chan struct{}

	errMu    sync.Mutex
	asyncErr map[string]error // first failed queued write, per run
}

var _ store.Store = (*DB)(nil)

// ErrNoSchema is returned by a read-only New on a database that holds no
// store yet.
var ErrNoSchema = errors.New("no store")

// New opens the store in db, bringing its schema up to date unless
// read-only. The DB owns db from then on, and closes it.
func New(ctx context.Context, db *sql.DB, d *Dialect, opt Options) (*DB, error) {
	fail := func(err error) (*DB, error) {
		db.Close()
		return nil, err
	}
	version := SchemaVersion
	if opt.ReadOnly {
		conn, err := db.Conn(ctx)
		if err != nil {
			return fail(err)
		}
		v, err := d.Version(ctx, conn)
		conn.Close()
		switch {
		case err != nil:
			return fail(err)
		case v == 0:
			return fail(fmt.Errorf("%s: %w", opt.Name, ErrNoSchema))
		case v > SchemaVersion:
			return fail(newerSchema(opt.Name, v))
		case v < ReadableFrom:
			return fail(fmt.Errorf("%s has schema v%d; any agenteval command that records runs updates it to v%d", opt.Name, v, SchemaVersion))
		}
		version = v
	} else if err := migrate(ctx, db, d, opt.Name); err != nil {
		return fail(err)
	}
	s := &DB{db: db, d: d, name: opt.Name, readOnly: opt.ReadOnly, asyncErr: map[string]error{}, version: version}
	if !opt.ReadOnly {
		var err error
		if s.insert, err = db.PrepareContext(ctx, d.rebind(d.UpsertResult)); err != nil {
			return fail(err)
		}
		s.ops = make(chan op, 256)
		s.stopped = make(chan struct{})
		go s.writer()
	}
	return s, nil
}

// Name is the store's name in messages.
func (s *DB) Name() string { return s.name }

// SQL is the database, for the tests of the packages built on this one.
func (s *DB) SQL() *sql.DB { return s.db }

// Close stores what is queued and closes the database.
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

// query, queryRow and exec run a query written with ? placeholders.
func (s *DB) query(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	return s.db.QueryContext(ctx, s.d.rebind(q), args...)
}

func (s *DB) queryRow(ctx context.Context, q string, args ...any) *sql.Row {
	return s.db.QueryRowContext(ctx, s.d.rebind(q), args...)
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

// StartRun records a run, or reopens one (a resumed run, or another shard
// of it). A shard's header is stored as the whole run's (store.RunHeader),
// and a shard joins a stored run only when it is part of it
// (store.CheckJoin).
func (s *DB) StartRun(ctx context.Context, h *results.Header) error {
	if h.RunID == "" {
		return errors.New("store: the run has no id")
	}
	hdr := store.RunHeader(h)
	o := op{kind: opStart, runID: h.RunID, shards: hdr.Shards, joining: h}
	if sh := h.Shard; sh != nil {
		if sh.Index < 1 || sh.Index > sh.Count {
			return fmt.Errorf("store: run %s: shard %d of %d", h.RunID, sh.Index, sh.Count)
		}
		o.shard, o.tests = sh.Index, sh.Tests
	}
	b, err := json.Marshal(&hdr)
	if err != nil {
		return fmt.Errorf("store: encode header: %w", err)
	}
	o.header = b
	o.started = h.Started
	if o.started.IsZero() {
		o.started = time.Now()
	}
	return s.send(syncOp(o))
}

// AddResult queues a result, with its secrets hidden first
// (results.Redact, which changes r): every path into the store passes
// here, a resumed run's earlier results too.
func (s *DB) AddResult(runID string, r *agenteval.Result) error {
	results.Redact(r)
	row, err := newResultRow(r)
	if err != nil {
		return err
	}
	return s.send(op{kind: opAdd, runID: runID, row: row})
}

// FinishRun waits for the run's queued results and records its end (or
// its shard's). When a result could not be written, the run (or shard) is
// recorded as failed, and the error says the store holds it incomplete.
func (s *DB) FinishRun(ctx context.Context, runID string, f store.Finish) error {
	err := s.send(syncOp(op{kind: opFinish, runID: runID, finish: f}))
	s.errMu.Lock()
	aerr := s.asyncErr[runID]
	delete(s.asyncErr, runID)
	s.errMu.Unlock()
	switch {
	case aerr != nil && err == nil:
		return fmt.Errorf("run %s is not complete in the store, and is marked %s there: %w", runID, store.Failed, aerr)
	case aerr != nil:
		return fmt.Errorf("run %s is not complete in the store: %w", runID, errors.Join(aerr, err))
	}
	return err
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

// runColumns is what scanRun reads; the dialect lists the tags.
func (s *DB) runColumns() string {
	return `id, header, status, started, updated, coalesce(finished, ''),
	total, passed, failed, errored, skipped, calls, cached_calls, input_tokens, output_tokens,
	cost_usd, cost_unknown, duration_ms, coalesce(` + s.d.TagList + `, ''), shards,
	(SELECT count(*) FROM run_shards WHERE run_shards.run_id = runs.id AND run_shards.status <> 'running')`
}

func scanRun(sc interface{ Scan(...any) error }) (*store.Run, error) {
	var r store.Run
	var header, status, started, updated, finished, tags string
	var cost float64
	var costUnknown int64
	err := sc.Scan(&r.ID, &header, &status, &started, &updated, &finished,
		&r.Total, &r.Passed, &r.Failed, &r.Errored, &r.Skipped,
		&r.Usage.Calls, &r.Usage.CachedCalls, &r.Usage.InputTokens, &r.Usage.OutputTokens,
		&cost, &costUnknown, &r.DurationMS, &tags, &r.Shards, &r.ShardsDone)
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
	if costUnknown == 0 && (r.Usage.Calls > 0 || r.Usage.InputTokens > 0 || r.Usage.OutputTokens > 0) {
		r.Usage.CostUSD = &cost
	}
	if tags != "" {
		r.Tags = strings.Fields(tags)
	}
	return &r, nil
}

// noLimit stands for no LIMIT: both databases want one before OFFSET.
const noLimit = int64(1<<63 - 1)

// Runs lists runs, newest first.
func (s *DB) Runs(ctx context.Context, opt store.ListOptions) ([]store.Run, error) {
	limit := int64(opt.Limit)
	if limit <= 0 {
		limit = noLimit
	}
	n := utf8.RuneCountInString(opt.IDPrefix)
	skip := 0
	if opt.SkipEmptyFailed {
		skip = 1
	}
	rows, err := s.query(ctx, `SELECT `+s.runColumns()+` FROM runs
		WHERE (? = 0 OR substr(id, 1, ?) = ?)
		AND (? = 0 OR status <> ? OR total > 0)
		ORDER BY started DESC, id DESC LIMIT ? OFFSET ?`, n, n, opt.IDPrefix, skip, string(store.Failed), limit, opt.Offset)
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
	r, err := scanRun(s.queryRow(ctx, `SELECT `+s.runColumns()+` FROM runs WHERE id = ?`, id))
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
	err := s.queryRow(ctx, `SELECT run_id FROM tags WHERE name = ?`, name).Scan(&id)
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
		rows, err := s.query(ctx, `SELECT seq, data FROM results WHERE run_id = ? AND seq > ? ORDER BY seq LIMIT ?`, runID, after, page)
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
