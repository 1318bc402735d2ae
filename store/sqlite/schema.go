package sqlite

import (
	"context"
	"database/sql"
	"fmt"
)

// migrations build the schema step by step: migrations[i] takes the schema
// from version i to version i+1 (PRAGMA user_version). Released steps are
// never edited; a change is a new step at the end.
var migrations = []string{
	// v1: runs, their results and tags.
	`CREATE TABLE runs (
		id           TEXT PRIMARY KEY,
		started      TEXT NOT NULL,  -- RFC 3339 UTC with fixed width, so text order is time order
		updated      TEXT NOT NULL,
		finished     TEXT,
		status       TEXT NOT NULL,
		header       TEXT NOT NULL,  -- report.Header as JSON
		total        INTEGER NOT NULL DEFAULT 0,
		passed       INTEGER NOT NULL DEFAULT 0,
		failed       INTEGER NOT NULL DEFAULT 0,
		errored      INTEGER NOT NULL DEFAULT 0,
		skipped      INTEGER NOT NULL DEFAULT 0,
		calls        INTEGER NOT NULL DEFAULT 0,
		cached_calls INTEGER NOT NULL DEFAULT 0,
		input_tokens INTEGER NOT NULL DEFAULT 0,
		output_tokens INTEGER NOT NULL DEFAULT 0,
		cost_usd     REAL NOT NULL DEFAULT 0,
		cost_unknown INTEGER NOT NULL DEFAULT 0,
		duration_ms  REAL NOT NULL DEFAULT 0
	);
	CREATE INDEX runs_by_start ON runs(started);
	CREATE TABLE results (
		seq          INTEGER PRIMARY KEY AUTOINCREMENT,  -- never reused: live readers follow it
		run_id       TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
		suite        TEXT NOT NULL,
		test_id      TEXT NOT NULL,
		verdict      TEXT NOT NULL,
		status       TEXT NOT NULL,
		score        REAL NOT NULL,
		calls        INTEGER NOT NULL,
		cached_calls INTEGER NOT NULL,
		input_tokens INTEGER NOT NULL,
		output_tokens INTEGER NOT NULL,
		cost_usd     REAL NOT NULL,
		cost_unknown INTEGER NOT NULL,
		duration_ms  REAL NOT NULL,
		data         BLOB NOT NULL,  -- the result as JSON; when it starts with 'z', deflated
		UNIQUE (run_id, suite, test_id)
	);
	CREATE TABLE tags (
		name    TEXT PRIMARY KEY,
		run_id  TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
		created TEXT NOT NULL
	);
	CREATE INDEX tags_by_run ON tags(run_id);`,
}

// SchemaVersion is the schema this package writes.
var SchemaVersion = len(migrations)

func userVersion(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}) (int, error) {
	var v int
	if err := q.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	return v, nil
}

// migrate brings the schema up to date. It holds the write lock from the
// check to the last step, so two processes opening a new store at once do
// not both build it.
func migrate(ctx context.Context, db *sql.DB, path string) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	v, err := userVersion(ctx, conn)
	if err != nil {
		return err
	}
	if v == SchemaVersion {
		return nil
	}
	if v > SchemaVersion {
		return newerSchema(path, v)
	}
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		return fmt.Errorf("lock %s to update its schema: %w", path, err)
	}
	rollback := func(err error) error {
		conn.ExecContext(context.Background(), "ROLLBACK")
		return err
	}
	if v, err = userVersion(ctx, conn); err != nil {
		return rollback(err)
	}
	if v > SchemaVersion {
		return rollback(newerSchema(path, v))
	}
	for i := v; i < SchemaVersion; i++ {
		if _, err := conn.ExecContext(ctx, migrations[i]); err != nil {
			return rollback(fmt.Errorf("update %s to schema v%d: %w", path, i+1, err))
		}
	}
	// PRAGMA takes no parameters; the number is ours.
	if _, err := conn.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", SchemaVersion)); err != nil {
		return rollback(err)
	}
	if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
		return rollback(fmt.Errorf("update %s: %w", path, err))
	}
	return nil
}

func newerSchema(path string, v int) error {
	return fmt.Errorf("%s has schema v%d, written by a newer agenteval (this one knows v%d): upgrade agenteval, or use --no-store", path, v, SchemaVersion)
}
