package sqlstore

import (
	"bytes"
	"compress/flate"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"sync"
	"time"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/results"
	"github.com/agenteval/agenteval/store"
)

type opKind int

const (
	opStart opKind = iota
	opAdd
	opFinish
	opTag
	opUntag
)

// op is one write for the writer goroutine. Sync ops carry a reply.
type op struct {
	kind                 opKind
	runID                string
	header               []byte
	started              time.Time
	shard, shards, tests int // a shard's start
	joining              *results.Header
	row                  *resultRow
	finish               store.Finish
	tag                  string
	reply                chan error
}

// resultRow is a result ready to insert: its columns, and its JSON (made
// by the caller, so that the caller may reuse the result afterwards).
type resultRow struct {
	suite, testID, target, verdict, status string
	score, durationMS                      float64
	usage                                  agenteval.Usage
	costUnknown                            bool
	json                                   []byte
}

func newResultRow(r *agenteval.Result) (*resultRow, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("store: encode result %s: %w", r.TestID, err)
	}
	row := &resultRow{suite: r.Suite, testID: r.TestID, target: r.Target, verdict: string(r.Verdict), status: string(r.ExecutionStatus),
		score: r.Score, durationMS: r.DurationMS, json: b}
	if r.Usage != nil {
		row.usage = *r.Usage
		used := r.Usage.Calls > 0 || r.Usage.InputTokens > 0 || r.Usage.OutputTokens > 0
		row.costUnknown = used && r.Usage.CostUSD == nil
	}
	return row, nil
}

func (r *resultRow) cost() float64 {
	if r.usage.CostUSD == nil {
		return 0
	}
	return *r.usage.CostUSD
}

// flag is a boolean as the schema keeps it: an integer, the one type both
// databases take for it.
func flag(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// Results of conversations are kept deflated: transcripts are repetitive
// text and shrink several times over, and the store keeps every run. A
// small result is kept as it is: setting up a compressor would cost more
// than it saves. The first byte tells them apart ('{' starts JSON).
const deflateAbove = 4 << 10

const deflated = 'z'

var deflaters = sync.Pool{New: func() any {
	w, _ := flate.NewWriter(nil, flate.BestSpeed)
	return w
}}

func deflate(b []byte) []byte {
	if len(b) <= deflateAbove {
		return b
	}
	var buf bytes.Buffer
	buf.Grow(len(b) / 3)
	buf.WriteByte(deflated)
	w := deflaters.Get().(*flate.Writer)
	w.Reset(&buf)
	w.Write(b)
	w.Close()
	deflaters.Put(w)
	return buf.Bytes()
}

func decodeResult(data []byte) (*agenteval.Result, error) {
	b := data
	if len(data) > 0 && data[0] == deflated {
		var err error
		if b, err = io.ReadAll(flate.NewReader(bytes.NewReader(data[1:]))); err != nil {
			return nil, fmt.Errorf("stored result: %w", err)
		}
	}
	var r agenteval.Result
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("stored result: %w", err)
	}
	return &r, nil
}

// lingerFor is how long the writer gathers results before committing
// them: short enough that a live viewer sees each result at once, long
// enough that a run writes a few transactions a second, not one per test.
const lingerFor = 50 * time.Millisecond

// heartbeat is how often a running run's updated time is refreshed while
// no result arrives, so readers can tell a slow run from a dead one.
const heartbeat = 10 * time.Second

// writer applies queued writes, as many as are waiting in one transaction,
// until ops is closed.
func (s *DB) writer() {
	defer close(s.stopped)
	live := map[string]bool{} // runs started here and not finished
	tick := time.NewTicker(heartbeat)
	defer tick.Stop()
	batch := make([]op, 0, 512)
	for {
		var first op
		var ok bool
		select {
		case first, ok = <-s.ops:
		case <-tick.C:
			s.touch(live)
			continue
		}
		if !ok {
			return
		}
		batch = append(batch[:0], first)
		// Results that trickle in are committed together: one transaction
		// per linger, not per result. A write someone waits for (start,
		// finish, tag) ends the wait at once.
		linger := time.NewTimer(lingerFor)
	drain:
		for len(batch) < cap(batch) && batch[len(batch)-1].reply == nil {
			select {
			case o, ok := <-s.ops:
				if !ok {
					break drain
				}
				batch = append(batch, o)
			case <-linger.C:
				break drain
			}
		}
		linger.Stop()
		s.apply(batch, live)
	}
}

// touch refreshes the updated time of runs in progress.
func (s *DB) touch(live map[string]bool) {
	now := fmtTime(time.Now())
	for id := range live {
		s.db.Exec(s.d.rebind(`UPDATE runs SET updated = ? WHERE id = ? AND status = 'running'`), now, id)
	}
}

// delta is what a batch adds to a run's totals.
type delta struct {
	total, passed, failed, errored, skipped int
	calls, cached                           int
	in, out                                 int64
	cost                                    float64
	costUnknown                             bool
}

func (d *delta) add(r *resultRow) {
	d.total++
	switch agenteval.Verdict(r.verdict) {
	case agenteval.VerdictPass:
		d.passed++
	case agenteval.VerdictFail:
		d.failed++
	case agenteval.VerdictError:
		d.errored++
	case agenteval.VerdictSkip:
		d.skipped++
	}
	d.calls += r.usage.Calls
	d.cached += r.usage.CachedCalls
	d.in += r.usage.InputTokens
	d.out += r.usage.OutputTokens
	d.cost += r.cost()
	d.costUnknown = d.costUnknown || r.costUnknown
}

// errOpFailed ends a transaction in which one of the writes failed: the
// others are applied again one by one, so that one bad write (a result
// for a run that does not exist) loses no other. PostgreSQL cannot go on
// in a transaction after a failed statement, so this is how both
// databases keep writes apart.
var errOpFailed = errors.New("a write failed")

// attempts bounds how often a transaction that failed for a reason that
// passes (a deadlock, a serialization failure) is tried.
const attempts = 5

// apply commits a batch: all of it in one transaction, or, when a write
// fails, each write in its own.
func (s *DB) apply(batch []op, live map[string]bool) {
	errs, err := s.retry(batch, live)
	if errors.Is(err, errOpFailed) {
		for i := range batch {
			var one []error
			one, err = s.retry(batch[i:i+1], live)
			errs[i] = one[0]
			if err != nil && !errors.Is(err, errOpFailed) {
				errs[i] = err
			}
			// Noted at once: a finish later in this batch must see
			// that its run lost a result.
			if batch[i].reply == nil && errs[i] != nil {
				s.noteAsync(batch[i].runID, errs[i])
			}
		}
		err = nil
	}
	for i, o := range batch {
		e := errs[i]
		if err != nil {
			e = err
		}
		if o.reply != nil {
			o.reply <- e
			continue
		}
		if e != nil {
			s.noteAsync(o.runID, e)
		}
	}
}

// noteAsync keeps the first failed queued write of a run, for FinishRun
// to report.
func (s *DB) noteAsync(runID string, err error) {
	s.errMu.Lock()
	if s.asyncErr[runID] == nil {
		s.asyncErr[runID] = err
	}
	s.errMu.Unlock()
}

// lost reports whether a queued write of the run failed.
func (s *DB) lost(runID string) bool {
	s.errMu.Lock()
	defer s.errMu.Unlock()
	return s.asyncErr[runID] != nil
}

// retry runs applyTx until it succeeds, fails for good, or runs out of
// attempts.
func (s *DB) retry(batch []op, live map[string]bool) ([]error, error) {
	var errs []error
	var err error
	for try := range attempts {
		if try > 0 {
			time.Sleep(time.Duration(try*try) * 20 * time.Millisecond)
		}
		errs, err = s.applyTx(batch, live)
		if err == nil || errors.Is(err, errOpFailed) || !s.d.Retryable(err) {
			break
		}
	}
	if err != nil && !errors.Is(err, errOpFailed) {
		err = fmt.Errorf("store %s: %w", s.name, err)
	}
	return errs, err
}

// applyTx applies a batch in one transaction. Its first statements lock
// the rows of the runs it writes, in id order (so two writers never wait
// on each other in a circle): results are numbered after the lock, so
// each run's results are numbered in the order they are committed.
func (s *DB) applyTx(batch []op, live map[string]bool) ([]error, error) {
	ctx := context.Background()
	errs := make([]error, len(batch))
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return errs, err
	}
	now := fmtTime(time.Now())
	ids := map[string]bool{}
	for _, o := range batch {
		if o.runID != "" && o.kind != opTag {
			ids[o.runID] = true
		}
	}
	for _, id := range sortedIDs(ids) {
		if _, err := tx.ExecContext(ctx, s.d.rebind(`UPDATE runs SET updated = ? WHERE id = ?`), now, id); err != nil {
			tx.Rollback()
			return errs, err
		}
	}
	w := &txWriter{s: s, tx: tx, ctx: ctx, now: now}
	deltas := map[string]*delta{}
	started, finished := map[string]bool{}, map[string]bool{}
	failed := false
	for i, o := range batch {
		switch o.kind {
		case opStart:
			errs[i] = w.startRun(o)
			started[o.runID] = true
		case opAdd:
			if errs[i] = w.insertResult(o); errs[i] == nil {
				d := deltas[o.runID]
				if d == nil {
					d = &delta{}
					deltas[o.runID] = d
				}
				d.add(o.row)
			}
		case opFinish:
			// The finish recounts the run from its results, so what
			// this batch added to it is counted there.
			delete(deltas, o.runID)
			finished[o.runID] = true
			if s.lost(o.runID) {
				// A run that lost a result is not done in the store,
				// whatever the runner says: readers would take what
				// is stored for the whole run.
				o.finish.Status = store.Failed
			}
			errs[i] = w.finishRun(o)
		case opTag:
			errs[i] = w.tagRun(o)
		case opUntag:
			errs[i] = w.untag(o)
		}
		if errs[i] != nil {
			failed = true
			break
		}
	}
	if failed {
		tx.Rollback()
		return errs, errOpFailed
	}
	for _, id := range sortedIDs(deltas) {
		d := deltas[id]
		if _, err := tx.ExecContext(ctx, s.d.rebind(`UPDATE runs SET total = total + ?, passed = passed + ?, failed = failed + ?,
			errored = errored + ?, skipped = skipped + ?, calls = calls + ?, cached_calls = cached_calls + ?,
			input_tokens = input_tokens + ?, output_tokens = output_tokens + ?, cost_usd = cost_usd + ?,
			cost_unknown = CASE WHEN ? = 1 THEN 1 ELSE cost_unknown END WHERE id = ?`),
			d.total, d.passed, d.failed, d.errored, d.skipped, d.calls, d.cached, d.in, d.out, d.cost, flag(d.costUnknown), id); err != nil {
			tx.Rollback()
			return errs, err
		}
	}
	if err := tx.Commit(); err != nil {
		return errs, err
	}
	for id := range started {
		live[id] = true
	}
	for id := range finished {
		delete(live, id)
	}
	return errs, nil
}

func sortedIDs[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// txWriter runs the writes of one transaction.
type txWriter struct {
	s   *DB
	tx  *sql.Tx
	ctx context.Context
	now string
}

func (w *txWriter) exec(q string, args ...any) (sql.Result, error) {
	return w.tx.ExecContext(w.ctx, w.s.d.rebind(q), args...)
}

func (w *txWriter) startRun(o op) error {
	var have int64
	var header string
	err := w.tx.QueryRowContext(w.ctx, w.s.d.rebind(`SELECT shards, header FROM runs WHERE id = ?`), o.runID).Scan(&have, &header)
	exists := err == nil
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("start run %s: %w", o.runID, err)
	}
	if exists && o.shard > 0 {
		var stored results.Header
		if err := json.Unmarshal([]byte(header), &stored); err != nil {
			return fmt.Errorf("start run %s: stored header: %w", o.runID, err)
		}
		if err := store.CheckJoin(&stored, o.joining); err != nil {
			return err
		}
	}
	if exists && o.shard == 0 && int(have) != o.shards {
		if have == 0 {
			return fmt.Errorf("start run %s: the store holds it as a whole run, not split into shards; give this run another --run-id", o.runID)
		}
		return fmt.Errorf("start run %s: the store holds it split into %d shards; run it with --shard i/%d, or give it another --run-id", o.runID, have, have)
	}
	_, err = w.exec(`INSERT INTO runs (id, started, updated, status, header, shards) VALUES (?, ?, ?, 'running', ?, ?)
		ON CONFLICT (id) DO UPDATE SET status = 'running', updated = excluded.updated, finished = NULL`,
		o.runID, fmtTime(o.started), w.now, string(o.header), o.shards)
	if err != nil {
		return fmt.Errorf("start run %s: %w", o.runID, err)
	}
	if o.shard == 0 {
		return nil
	}
	_, err = w.exec(`INSERT INTO run_shards (run_id, shard, shards, status, tests, started, updated) VALUES (?, ?, ?, 'running', ?, ?, ?)
		ON CONFLICT (run_id, shard) DO UPDATE SET status = 'running', tests = excluded.tests, updated = excluded.updated, finished = NULL`,
		o.runID, o.shard, o.shards, o.tests, w.now, w.now)
	if err != nil {
		return fmt.Errorf("start shard %d/%d of run %s: %w", o.shard, o.shards, o.runID, err)
	}
	return nil
}

func (w *txWriter) insertResult(o op) error {
	r := o.row
	_, err := w.tx.StmtContext(w.ctx, w.s.insert).ExecContext(w.ctx,
		o.runID, w.s.d.text(r.suite), w.s.d.text(r.testID), w.s.d.text(r.target), w.s.d.text(r.verdict), w.s.d.text(r.status), r.score, r.usage.Calls, r.usage.CachedCalls,
		r.usage.InputTokens, r.usage.OutputTokens, r.cost(), flag(r.costUnknown), r.durationMS, deflate(r.json))
	if err != nil {
		return fmt.Errorf("store result %s: %w", r.testID, err)
	}
	return nil
}

// finishRun recounts the run from its results and records how it ended.
// A shard's end is recorded for the shard; the run ends with its last
// shard, as the worst of them (failed, interrupted, done), and its
// duration is the longest shard's, since shards run side by side.
func (w *txWriter) finishRun(o op) error {
	status, duration := string(o.finish.Status), o.finish.DurationMS
	res, err := w.exec(`UPDATE runs SET
		(total, passed, failed, errored, skipped, calls, cached_calls, input_tokens, output_tokens, cost_usd, cost_unknown) =
		(SELECT count(*),
			coalesce(sum(CASE WHEN verdict = 'pass' THEN 1 ELSE 0 END), 0), coalesce(sum(CASE WHEN verdict = 'fail' THEN 1 ELSE 0 END), 0),
			coalesce(sum(CASE WHEN verdict = 'error' THEN 1 ELSE 0 END), 0), coalesce(sum(CASE WHEN verdict = 'skip' THEN 1 ELSE 0 END), 0),
			coalesce(sum(calls), 0), coalesce(sum(cached_calls), 0), coalesce(sum(input_tokens), 0),
			coalesce(sum(output_tokens), 0), coalesce(sum(cost_usd), 0), coalesce(max(cost_unknown), 0)
		 FROM results WHERE run_id = ?)
		WHERE id = ?`, o.runID, o.runID)
	if err != nil {
		return fmt.Errorf("finish run %s: %w", o.runID, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("finish run %s: %w", o.runID, store.ErrNotFound)
	}
	if sh := o.finish.Shard; sh > 0 {
		res, err := w.exec(`UPDATE run_shards SET status = ?, finished = ?, updated = ?, duration_ms = duration_ms + ? WHERE run_id = ? AND shard = ?`,
			status, w.now, w.now, duration, o.runID, sh)
		if err != nil {
			return fmt.Errorf("finish shard %d of run %s: %w", sh, o.runID, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("finish shard %d of run %s: %w (it was not started)", sh, o.runID, store.ErrNotFound)
		}
		if status, duration, err = w.shardsEnd(o.runID); err != nil {
			return err
		}
		if status == string(store.Running) {
			_, err := w.exec(`UPDATE runs SET status = 'running', finished = NULL, duration_ms = ? WHERE id = ?`, duration, o.runID)
			return err
		}
		_, err = w.exec(`UPDATE runs SET status = ?, finished = ?, duration_ms = ? WHERE id = ?`, status, w.now, duration, o.runID)
		return err
	}
	_, err = w.exec(`UPDATE runs SET status = ?, finished = ?, duration_ms = duration_ms + ? WHERE id = ?`, status, w.now, duration, o.runID)
	if err != nil {
		return fmt.Errorf("finish run %s: %w", o.runID, err)
	}
	return nil
}

// shardsEnd is where a sharded run stands after one of its shards ended
// (store.ShardStatus), and its duration so far: the longest shard's.
func (w *txWriter) shardsEnd(runID string) (string, float64, error) {
	var n int
	if err := w.tx.QueryRowContext(w.ctx, w.s.d.rebind(`SELECT shards FROM runs WHERE id = ?`), runID).Scan(&n); err != nil {
		return "", 0, fmt.Errorf("finish run %s: %w", runID, err)
	}
	rows, err := w.tx.QueryContext(w.ctx, w.s.d.rebind(`SELECT status, duration_ms FROM run_shards WHERE run_id = ?`), runID)
	if err != nil {
		return "", 0, fmt.Errorf("finish run %s: %w", runID, err)
	}
	defer rows.Close()
	var statuses []store.Status
	var longest float64
	for rows.Next() {
		var st string
		var ms float64
		if err := rows.Scan(&st, &ms); err != nil {
			return "", 0, fmt.Errorf("finish run %s: %w", runID, err)
		}
		statuses = append(statuses, store.Status(st))
		longest = max(longest, ms)
	}
	if err := rows.Err(); err != nil {
		return "", 0, fmt.Errorf("finish run %s: %w", runID, err)
	}
	return string(store.ShardStatus(n, statuses)), longest, nil
}

func (w *txWriter) tagRun(o op) error {
	var n int
	if err := w.tx.QueryRowContext(w.ctx, w.s.d.rebind(`SELECT count(*) FROM runs WHERE id = ?`), o.runID).Scan(&n); err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("tag run %s: %w", o.runID, store.ErrNotFound)
	}
	_, err := w.exec(`INSERT INTO tags (name, run_id, created) VALUES (?, ?, ?)
		ON CONFLICT (name) DO UPDATE SET run_id = excluded.run_id, created = excluded.created`, o.tag, o.runID, w.now)
	if err != nil {
		return fmt.Errorf("tag run %s: %w", o.runID, err)
	}
	return nil
}

func (w *txWriter) untag(o op) error {
	res, err := w.exec(`DELETE FROM tags WHERE name = ?`, o.tag)
	if err != nil {
		return fmt.Errorf("remove tag %s: %w", o.tag, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("tag %s: %w", o.tag, store.ErrNotFound)
	}
	return nil
}
