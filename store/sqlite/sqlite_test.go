package sqlite

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/results"
	"github.com/agenteval/agenteval/store"
	"github.com/agenteval/agenteval/store/sqlstore"
	"github.com/agenteval/agenteval/store/storetest"
)

func TestContract(t *testing.T) {
	storetest.Run(t, storetest.Backend{
		Open: func(t *testing.T) store.Store {
			// A path that needs escaping in the SQLite URI, in a folder that
			// does not exist yet.
			s, err := Open(filepath.Join(t.TempDir(), "sub dir?#", "a.db"), Options{})
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
		Again: func(t *testing.T, s store.Store) store.Store {
			again, err := Open(s.(*DB).Path(), Options{})
			if err != nil {
				t.Fatal(err)
			}
			return again
		},
		Reject: func(t *testing.T, s store.Store, testID string) {
			_, err := s.(*DB).SQL().Exec(`CREATE TRIGGER reject BEFORE INSERT ON results WHEN NEW.test_id = '` + testID + `'
				BEGIN SELECT RAISE(ABORT, 'refused by the test'); END`)
			if err != nil {
				t.Fatal(err)
			}
		},
	})
}

func record(t *testing.T, path, id string) {
	t.Helper()
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := s.StartRun(ctx, &results.Header{RunID: id, Started: time.Now()}); err != nil {
		t.Fatal(err)
	}
	s.AddResult(id, &agenteval.Result{TestID: "t", Verdict: agenteval.VerdictPass, Score: 1})
	if err := s.FinishRun(ctx, id, store.Finish{Status: store.Done}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// The file is in WAL mode at the current schema version, and keeps runs
// across opens.
func TestFileSchemaAndReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.db")
	record(t, path, "r1")
	record(t, path, "r2")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var mode string
	var v int
	db.QueryRow("PRAGMA journal_mode").Scan(&mode)
	db.QueryRow("PRAGMA user_version").Scan(&v)
	if mode != "wal" || v != sqlstore.SchemaVersion {
		t.Errorf("journal_mode %s, user_version %d; want wal, %d", mode, v, sqlstore.SchemaVersion)
	}
	s, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	runs, err := s.Runs(context.Background(), store.ListOptions{})
	if err != nil || len(runs) != 2 {
		t.Fatalf("runs = %v, %v", runs, err)
	}
}

// A read-only store reads, refuses writes, and does not create a file.
func TestReadOnly(t *testing.T) {
	dir := t.TempDir()
	if _, err := Open(filepath.Join(dir, "none.db"), Options{ReadOnly: true}); err == nil {
		t.Fatal("opened a missing store read-only")
	}
	path := filepath.Join(dir, "a.db")
	record(t, path, "r1")
	s, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Tag(context.Background(), "r1", "x"); err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Errorf("tag on a read-only store: %v", err)
	}
	if _, err := s.Run(context.Background(), "r1"); err != nil {
		t.Error(err)
	}
}

// A store written by a newer version is refused with a clear message, and
// is left as it was.
func TestNewerSchemaRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.db")
	record(t, path, "r1")
	db, _ := sql.Open("sqlite", path)
	db.Exec("PRAGMA user_version = 99")
	db.Close()
	for _, ro := range []bool{false, true} {
		_, err := Open(path, Options{ReadOnly: ro})
		if err == nil || !strings.Contains(err.Error(), "schema v99, written by a newer agenteval") {
			t.Errorf("read-only %v: %v", ro, err)
		}
	}
}

// Migrations run from any older version: an empty file gets the whole
// schema; a store at the current version is left alone.
func TestMigrateFromEmpty(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.db")
	db, _ := sql.Open("sqlite", path)
	db.Exec("CREATE TABLE other (x)") // someone else's table survives
	db.Close()
	record(t, path, "r1")
	db, _ = sql.Open("sqlite", path)
	defer db.Close()
	var n int
	if err := db.QueryRow("SELECT count(*) FROM other").Scan(&n); err != nil {
		t.Errorf("the other table: %v", err)
	}
	if err := db.QueryRow("SELECT count(*) FROM results").Scan(&n); err != nil || n != 1 {
		t.Errorf("results: %d, %v", n, err)
	}
}

// Two processes (here, two handles) write one store at once.
func TestTwoWriters(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.db")
	a, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i, s := range []*DB{a, b} {
		id := []string{"ra", "rb"}[i]
		if err := s.StartRun(ctx, &results.Header{RunID: id, Started: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 200 {
		a.AddResult("ra", &agenteval.Result{TestID: "a" + string(rune('a'+i%26)) + string(rune('a'+i/26)), Verdict: agenteval.VerdictPass})
		b.AddResult("rb", &agenteval.Result{TestID: "b" + string(rune('a'+i%26)) + string(rune('a'+i/26)), Verdict: agenteval.VerdictFail})
	}
	for i, s := range []*DB{a, b} {
		id := []string{"ra", "rb"}[i]
		if err := s.FinishRun(ctx, id, store.Finish{Status: store.Done}); err != nil {
			t.Fatal(err)
		}
	}
	a.Close()
	defer b.Close()
	ra, _ := b.Run(ctx, "ra")
	rb, _ := b.Run(ctx, "rb")
	if ra.Passed != 200 || rb.Failed != 200 {
		t.Errorf("ra passed %d, rb failed %d; want 200 each", ra.Passed, rb.Failed)
	}
}

// The released v1 step, filled in with SQLite's types, is the text that
// built the stores v1 made: written once for every database, it has not
// changed for SQLite.
func TestV1Unchanged(t *testing.T) {
	want, err := os.ReadFile("testdata/v1.sql")
	if err != nil {
		t.Fatal(err)
	}
	got := strings.NewReplacer("{{int}}", "INTEGER", "{{real}}", "REAL", "{{blob}}", "BLOB", "{{seq}}", Dialect.Types["seq"]).Replace(sqlstore.Migrations[0])
	if got+"\n" != string(want) {
		t.Errorf("v1 for SQLite differs from the released step:\n%s", got)
	}
	for slot, typ := range map[string]string{"int": "INTEGER", "real": "REAL", "blob": "BLOB"} {
		if Dialect.Types[slot] != typ {
			t.Errorf("{{%s}} is %q, want %q", slot, Dialect.Types[slot], typ)
		}
	}
}

// A v1 store (results keyed without their target) is updated to the
// current schema with its runs and results, which keep their positions;
// new results come after them, and a matrix's targets no longer replace
// each other.
func TestMigrateFromV1(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	v1, _ := os.ReadFile("testdata/v1.sql")
	for _, q := range []string{string(v1), "PRAGMA user_version = 1",
		`INSERT INTO runs (id, started, updated, status, header, total, passed) VALUES ('old', '2026-01-01T00:00:00.000000000Z', '2026-01-01T00:00:00.000000000Z', 'done', '{"run_id":"old"}', 2, 2)`,
		`INSERT INTO results (run_id, suite, test_id, verdict, status, score, calls, cached_calls, input_tokens, output_tokens, cost_usd, cost_unknown, duration_ms, data)
			VALUES ('old', 's', 'a', 'pass', 'ok', 1, 0, 0, 0, 0, 0, 0, 1, '{"test_id":"a","verdict":"pass"}'),
			('old', 's', 'b', 'pass', 'ok', 1, 0, 0, 0, 0, 0, 0, 1, '{"test_id":"b","verdict":"pass"}')`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	r, err := s.Run(ctx, "old")
	if err != nil || r.Total != 2 || r.Shards != 0 {
		t.Fatalf("old run after the update: %+v, %v", r, err)
	}
	var old []int64
	s.Results(ctx, "old", 0, func(pos int64, r *agenteval.Result) error { old = append(old, pos); return nil })
	if len(old) != 2 {
		t.Fatalf("old results: %v", old)
	}
	s.StartRun(ctx, &results.Header{RunID: "new", Started: time.Now()})
	for _, target := range []string{"a", "b"} {
		s.AddResult("new", &agenteval.Result{TestID: "t", Suite: "s", Target: target, Verdict: agenteval.VerdictPass})
	}
	if err := s.FinishRun(ctx, "new", store.Finish{Status: store.Done}); err != nil {
		t.Fatal(err)
	}
	var pos []int64
	s.Results(ctx, "new", 0, func(p int64, r *agenteval.Result) error { pos = append(pos, p); return nil })
	if len(pos) != 2 || pos[0] <= old[1] {
		t.Errorf("new results at %v, after the old ones at %v; want 2, numbered after", pos, old)
	}
}
