package sqlite

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/store"
)

// A v2 store, from before labels, stays readable read-only after an
// upgrade (its runs have no labels), and is updated by the first
// writable open; a v1 store still needs that update to be read.
func TestLabelsOnV2Store(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.db")
	record(t, path, "r1")
	setVersion := func(v string) {
		db, err := sql.Open("sqlite", path)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		for _, q := range []string{"DROP TABLE IF EXISTS labels", "PRAGMA user_version = " + v} {
			if _, err := db.Exec(q); err != nil {
				t.Fatal(err)
			}
		}
	}
	setVersion("2")
	ctx := context.Background()
	l := store.Label{LabelKey: store.LabelKey{RunID: "r1", TestID: "t", Score: "s", Criterion: "c"}, Human: agenteval.VerdictPass}
	ro, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("read-only open of a v2 store: %v", err)
	}
	if ls, err := ro.RunLabels(ctx, "r1"); err != nil || len(ls) != 0 {
		t.Errorf("labels of a v2 store: %v, %v", ls, err)
	}
	if err := ro.PutLabels(ctx, []store.Label{l}); err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Errorf("put on a read-only store: %v", err)
	}
	ro.Close()

	rw, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := rw.PutLabels(ctx, []store.Label{l}); err != nil {
		t.Fatal(err)
	}
	if ls, err := rw.RunLabels(ctx, "r1"); err != nil || len(ls) != 1 {
		t.Errorf("labels after the update: %v, %v", ls, err)
	}
	rw.Close()

	setVersion("1")
	if _, err := Open(path, Options{ReadOnly: true}); err == nil || !strings.Contains(err.Error(), "has schema v1; any agenteval command that records runs updates it") {
		t.Errorf("read-only open of a v1 store: %v", err)
	}
}
