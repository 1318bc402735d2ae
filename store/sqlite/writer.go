package sqlite

import (
	"bytes"
	"compress/flate"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/agenteval/agenteval"
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
	kind    opKind
	runID   string
	header  []byte
	started time.Time
	row     *resultRow
	finish  store.Finish
	tag     string
	reply   chan error
}

// resultRow is a result ready to insert: its columns, and its JSON (made
// by the caller, so that the caller may reuse the result afterwards).
type resultRow struct {
	suite, testID, verdict, status string
	score, durationMS              float64
	usage                          agenteval.Usage
	costUnknown                    bool
	json                           []byte
}

func newResultRow(r *agenteval.Result) (*resultRow, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("store: encode result %s: %w", r.TestID, err)
	}
	row := &resultRow{suite: r.Suite, testID: r.TestID, verdict: string(r.Verdict), status: string(r.ExecutionStatus),
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
		s.db.Exec(`UPDATE runs SET updated = ? WHERE id = ? AND status = 'running'`, now, id)
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

func (s *DB) apply(batch []op, live map[string]bool) {
	ctx := context.Background()
	errs := make([]error, len(batch))
	tx, err := s.db.BeginTx(ctx, nil)
	if err == nil {
		deltas := map[string]*delta{}
		now := fmtTime(time.Now())
		insert := tx.StmtContext(ctx, s.insert)
		for i, o := range batch {
			switch o.kind {
			case opStart:
				errs[i] = startRun(ctx, tx, o, now)
				live[o.runID] = true
			case opAdd:
				if errs[i] = insertResult(ctx, insert, o); errs[i] == nil {
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
				delete(live, o.runID)
				errs[i] = finishRun(ctx, tx, o, now)
			case opTag:
				errs[i] = tagRun(ctx, tx, o, now)
			case opUntag:
				errs[i] = untag(ctx, tx, o)
			}
		}
		for id, d := range deltas {
			if _, err := tx.ExecContext(ctx, `UPDATE runs SET updated = ?, total = total + ?, passed = passed + ?, failed = failed + ?,
				errored = errored + ?, skipped = skipped + ?, calls = calls + ?, cached_calls = cached_calls + ?,
				input_tokens = input_tokens + ?, output_tokens = output_tokens + ?, cost_usd = cost_usd + ?,
				cost_unknown = max(cost_unknown, ?) WHERE id = ?`,
				now, d.total, d.passed, d.failed, d.errored, d.skipped, d.calls, d.cached, d.in, d.out, d.cost, d.costUnknown, id); err != nil {
				for i, o := range batch {
					if o.runID == id && errs[i] == nil {
						errs[i] = err
					}
				}
			}
		}
		err = tx.Commit()
	}
	for i, o := range batch {
		e := errs[i]
		if err != nil {
			e = fmt.Errorf("store %s: %w", s.path, err)
		}
		if o.reply != nil {
			o.reply <- e
			continue
		}
		if e != nil {
			s.errMu.Lock()
			if s.asyncErr[o.runID] == nil {
				s.asyncErr[o.runID] = e
			}
			s.errMu.Unlock()
		}
	}
}

func startRun(ctx context.Context, tx *sql.Tx, o op, now string) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO runs (id, started, updated, status, header) VALUES (?, ?, ?, 'running', ?)
		ON CONFLICT (id) DO UPDATE SET status = 'running', updated = excluded.updated, finished = NULL`,
		o.runID, fmtTime(o.started), now, string(o.header))
	if err != nil {
		return fmt.Errorf("start run %s: %w", o.runID, err)
	}
	return nil
}

// insertSQL adds a result. REPLACE gives a repeated test a new position,
// so readers following the run see it again.
const insertSQL = `INSERT OR REPLACE INTO results (run_id, suite, test_id, verdict, status, score, calls, cached_calls,
	input_tokens, output_tokens, cost_usd, cost_unknown, duration_ms, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

func insertResult(ctx context.Context, stmt *sql.Stmt, o op) error {
	r := o.row
	_, err := stmt.ExecContext(ctx,
		o.runID, r.suite, r.testID, r.verdict, r.status, r.score, r.usage.Calls, r.usage.CachedCalls,
		r.usage.InputTokens, r.usage.OutputTokens, r.cost(), r.costUnknown, r.durationMS, deflate(r.json))
	if err != nil {
		return fmt.Errorf("store result %s: %w", r.testID, err)
	}
	return nil
}

func finishRun(ctx context.Context, tx *sql.Tx, o op, now string) error {
	res, err := tx.ExecContext(ctx, `UPDATE runs SET
		(total, passed, failed, errored, skipped, calls, cached_calls, input_tokens, output_tokens, cost_usd, cost_unknown) =
		(SELECT count(*), coalesce(sum(verdict = 'pass'), 0), coalesce(sum(verdict = 'fail'), 0), coalesce(sum(verdict = 'error'), 0),
			coalesce(sum(verdict = 'skip'), 0), coalesce(sum(calls), 0), coalesce(sum(cached_calls), 0), coalesce(sum(input_tokens), 0),
			coalesce(sum(output_tokens), 0), coalesce(sum(cost_usd), 0), coalesce(max(cost_unknown), 0)
		 FROM results WHERE run_id = ?1),
		status = ?2, finished = ?3, updated = ?3, duration_ms = duration_ms + ?4
		WHERE id = ?1`, o.runID, string(o.finish.Status), now, o.finish.DurationMS)
	if err != nil {
		return fmt.Errorf("finish run %s: %w", o.runID, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("finish run %s: %w", o.runID, store.ErrNotFound)
	}
	return nil
}

func tagRun(ctx context.Context, tx *sql.Tx, o op, now string) error {
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM runs WHERE id = ?`, o.runID).Scan(&n); err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("tag run %s: %w", o.runID, store.ErrNotFound)
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO tags (name, run_id, created) VALUES (?, ?, ?)
		ON CONFLICT (name) DO UPDATE SET run_id = excluded.run_id, created = excluded.created`, o.tag, o.runID, now)
	if err != nil {
		return fmt.Errorf("tag run %s: %w", o.runID, err)
	}
	return nil
}

func untag(ctx context.Context, tx *sql.Tx, o op) error {
	res, err := tx.ExecContext(ctx, `DELETE FROM tags WHERE name = ?`, o.tag)
	if err != nil {
		return fmt.Errorf("remove tag %s: %w", o.tag, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("tag %s: %w", o.tag, store.ErrNotFound)
	}
	return nil
}
