package sqlstore

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/store"
)

var _ store.Labels = (*DB)(nil)

// labelKey is the labels table's key of k within its run: a hash, since
// a criterion's text may be longer than an index entry can hold. The
// fields are length-prefixed, so no two keys run together.
func labelKey(k store.LabelKey) string {
	h := sha256.New()
	for _, f := range []string{k.Suite, k.TestID, k.Target, strconv.Itoa(k.Trial), k.Score, k.Criterion} {
		h.Write([]byte(strconv.Itoa(len(f)) + ":" + f))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// PutLabels stores labels, each replacing the label with its key, in one
// transaction. Labels are written apart from the queue of results: they
// come from people, a few at a time, and each caller waits for its own.
func (s *DB) PutLabels(ctx context.Context, ls []store.Label) error {
	if s.readOnly {
		return errors.New("store: opened read-only")
	}
	now := time.Now()
	for i := range ls {
		if err := ls[i].Check(); err != nil {
			return fmt.Errorf("label %s: %w", ls[i].LabelKey, err)
		}
		if ls[i].Time.IsZero() {
			ls[i].Time = now
		}
	}
	if len(ls) == 0 {
		return nil
	}
	var err error
	for try := range attempts {
		if try > 0 {
			time.Sleep(time.Duration(try*try) * 20 * time.Millisecond)
		}
		if err = s.putLabels(ctx, ls); err == nil || !s.d.Retryable(err) || ctx.Err() != nil {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("store %s: put labels: %w", s.name, err)
	}
	return nil
}

func (s *DB) putLabels(ctx context.Context, ls []store.Label) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	runs := map[string]bool{}
	for _, l := range ls {
		if runs[l.RunID] {
			continue
		}
		var one int
		err := tx.QueryRowContext(ctx, s.d.rebind(`SELECT 1 FROM runs WHERE id = ?`), l.RunID).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("run %s: %w", l.RunID, store.ErrNotFound)
		}
		if err != nil {
			return err
		}
		runs[l.RunID] = true
	}
	q := s.d.rebind(`INSERT INTO labels (run_id, label_key, suite, test_id, target, trial, score, criterion, human, note, labeller, updated)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (run_id, label_key) DO UPDATE SET human = excluded.human, note = excluded.note,
		labeller = excluded.labeller, updated = excluded.updated`)
	for _, l := range ls {
		t := s.d.text
		if _, err := tx.ExecContext(ctx, q, l.RunID, labelKey(l.LabelKey), t(l.Suite), t(l.TestID), t(l.Target), l.Trial,
			t(l.Score), t(l.Criterion), string(l.Human), t(l.Note), t(l.Labeller), fmtTime(l.Time)); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// RunLabels lists a run's labels.
func (s *DB) RunLabels(ctx context.Context, runID string) ([]store.Label, error) {
	if s.version < labelsFrom {
		return nil, nil // an older store opened read-only: no labels yet
	}
	rows, err := s.query(ctx, `SELECT suite, test_id, target, trial, score, criterion, human, note, labeller, updated
		FROM labels WHERE run_id = ?`, runID)
	if err != nil {
		return nil, fmt.Errorf("labels of run %s: %w", runID, err)
	}
	defer rows.Close()
	var out []store.Label
	for rows.Next() {
		l := store.Label{LabelKey: store.LabelKey{RunID: runID}}
		var human, updated string
		if err := rows.Scan(&l.Suite, &l.TestID, &l.Target, &l.Trial, &l.Score, &l.Criterion, &human, &l.Note, &l.Labeller, &updated); err != nil {
			return nil, fmt.Errorf("labels of run %s: %w", runID, err)
		}
		if s.d.StrictText {
			for _, f := range []*string{&l.Suite, &l.TestID, &l.Target, &l.Score, &l.Criterion, &l.Note, &l.Labeller} {
				*f = unescapeText(*f)
			}
		}
		l.Human = agenteval.Verdict(human)
		l.Time = parseTime(updated)
		out = append(out, l)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("labels of run %s: %w", runID, err)
	}
	// Sorted here rather than by the database, whose text order depends
	// on its collation.
	sort.Slice(out, func(i, j int) bool { return lessKey(out[i].LabelKey, out[j].LabelKey) })
	return out, nil
}

func lessKey(a, b store.LabelKey) bool {
	if c := strings.Compare(a.Suite, b.Suite); c != 0 {
		return c < 0
	}
	if c := strings.Compare(a.TestID, b.TestID); c != 0 {
		return c < 0
	}
	if c := strings.Compare(a.Target, b.Target); c != 0 {
		return c < 0
	}
	if a.Trial != b.Trial {
		return a.Trial < b.Trial
	}
	if c := strings.Compare(a.Score, b.Score); c != 0 {
		return c < 0
	}
	return a.Criterion < b.Criterion
}

// DeleteLabel removes one label.
func (s *DB) DeleteLabel(ctx context.Context, k store.LabelKey) error {
	if s.readOnly {
		return errors.New("store: opened read-only")
	}
	if _, err := s.db.ExecContext(ctx, s.d.rebind(`DELETE FROM labels WHERE run_id = ? AND label_key = ?`), k.RunID, labelKey(k)); err != nil {
		return fmt.Errorf("store %s: delete label %s: %w", s.name, k, err)
	}
	return nil
}

// unescapeText undoes escapeText; text it did not change comes back as
// it is.
func unescapeText(s string) string {
	if strings.IndexByte(s, textEscape) < 0 {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != textEscape || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch s[i+1] {
		case '0':
			b.WriteByte(0)
			i++
		case '1':
			b.WriteByte(textEscape)
			i++
		case 'x':
			if i+3 < len(s) {
				if v, err := strconv.ParseUint(s[i+2:i+4], 16, 8); err == nil {
					b.WriteByte(byte(v))
					i += 3
					continue
				}
			}
			b.WriteByte(s[i])
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}
