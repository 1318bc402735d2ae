package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
)

// Migrations build the schema step by step: Migrations[i] takes it from
// version i to version i+1. Every database runs the same steps, with the
// dialect's column types in the {{...}} slots. Released steps are never
// edited; a change is a new step at the end.
var Migrations = []string{
	// v1: runs, their results and tags.
	`CREATE TABLE runs (
		id           TEXT PRIMARY KEY,
		started      TEXT NOT NULL,  -- RFC 3339 UTC with fixed width, so text order is time order
		updated      TEXT NOT NULL,
		finished     TEXT,
		status       TEXT NOT NULL,
		header       TEXT NOT NULL,  -- report.Header as JSON
		total        {{int}} NOT NULL DEFAULT 0,
		passed       {{int}} NOT NULL DEFAULT 0,
		failed       {{int}} NOT NULL DEFAULT 0,
		errored      {{int}} NOT NULL DEFAULT 0,
		skipped      {{int}} NOT NULL DEFAULT 0,
		calls        {{int}} NOT NULL DEFAULT 0,
		cached_calls {{int}} NOT NULL DEFAULT 0,
		input_tokens {{int}} NOT NULL DEFAULT 0,
		output_tokens {{int}} NOT NULL DEFAULT 0,
		cost_usd     {{real}} NOT NULL DEFAULT 0,
		cost_unknown {{int}} NOT NULL DEFAULT 0,
		duration_ms  {{real}} NOT NULL DEFAULT 0
	);
	CREATE INDEX runs_by_start ON runs(started);
	CREATE TABLE results (
		seq          {{seq}},  -- never reused: live readers follow it
		run_id       TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
		suite        TEXT NOT NULL,
		test_id      TEXT NOT NULL,
		verdict      TEXT NOT NULL,
		status       TEXT NOT NULL,
		score        {{real}} NOT NULL,
		calls        {{int}} NOT NULL,
		cached_calls {{int}} NOT NULL,
		input_tokens {{int}} NOT NULL,
		output_tokens {{int}} NOT NULL,
		cost_usd     {{real}} NOT NULL,
		cost_unknown {{int}} NOT NULL,
		duration_ms  {{real}} NOT NULL,
		data         {{blob}} NOT NULL,  -- the result as JSON; when it starts with 'z', deflated
		UNIQUE (run_id, suite, test_id)
	);
	CREATE TABLE tags (
		name    TEXT PRIMARY KEY,
		run_id  TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
		created TEXT NOT NULL
	);
	CREATE INDEX tags_by_run ON tags(run_id);`,

	// v2: a result is keyed by its target too, since a matrix runs a test
	// once per target (v1 kept one of them); runs split into shards (run
	// --shard i/n) record each shard, so a run is done when all are.
	`CREATE TABLE results_v2 (
		seq          {{seq}},
		run_id       TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
		suite        TEXT NOT NULL,
		test_id      TEXT NOT NULL,
		target       TEXT NOT NULL DEFAULT '',
		verdict      TEXT NOT NULL,
		status       TEXT NOT NULL,
		score        {{real}} NOT NULL,
		calls        {{int}} NOT NULL,
		cached_calls {{int}} NOT NULL,
		input_tokens {{int}} NOT NULL,
		output_tokens {{int}} NOT NULL,
		cost_usd     {{real}} NOT NULL,
		cost_unknown {{int}} NOT NULL,
		duration_ms  {{real}} NOT NULL,
		data         {{blob}} NOT NULL,
		UNIQUE (run_id, suite, test_id, target)
	);
	INSERT INTO results_v2 (seq, run_id, suite, test_id, verdict, status, score, calls, cached_calls,
		input_tokens, output_tokens, cost_usd, cost_unknown, duration_ms, data)
		SELECT seq, run_id, suite, test_id, verdict, status, score, calls, cached_calls,
		input_tokens, output_tokens, cost_usd, cost_unknown, duration_ms, data FROM results ORDER BY seq;
	DROP TABLE results;
	ALTER TABLE results_v2 RENAME TO results;
	{{reseq}}
	ALTER TABLE runs ADD COLUMN shards {{int}} NOT NULL DEFAULT 0;  -- n of run --shard i/n; 0 for a whole run
	CREATE TABLE run_shards (
		run_id      TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
		shard       {{int}} NOT NULL,  -- 1..shards
		shards      {{int}} NOT NULL,
		status      TEXT NOT NULL,
		tests       {{int}} NOT NULL DEFAULT 0,  -- results the shard is to write
		started     TEXT NOT NULL,
		updated     TEXT NOT NULL,
		finished    TEXT,
		duration_ms {{real}} NOT NULL DEFAULT 0,
		PRIMARY KEY (run_id, shard)
	);`,

	// v3: human labels of judged criteria (store.Label). A label is keyed
	// by a hash of its key's fields, since a criterion's text may be
	// longer than an index entry can hold; the fields are kept readable
	// beside it.
	`CREATE TABLE labels (
		run_id    TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
		label_key TEXT NOT NULL,  -- hex SHA-256 of suite, test_id, target, trial, score, criterion
		suite     TEXT NOT NULL,
		test_id   TEXT NOT NULL,
		target    TEXT NOT NULL,
		trial     {{int}} NOT NULL,  -- 0: a result without trials
		score     TEXT NOT NULL,
		criterion TEXT NOT NULL,
		human     TEXT NOT NULL,  -- pass or fail
		note      TEXT NOT NULL,
		labeller  TEXT NOT NULL,
		updated   TEXT NOT NULL,
		PRIMARY KEY (run_id, label_key)
	);`,
}

// SchemaVersion is the schema this package writes.
var SchemaVersion = len(Migrations)

// ReadableFrom is the oldest schema a read-only store reads without an
// update: the steps after it only added tables that a reader finds empty
// (v3's labels), so runs stay readable after agenteval is upgraded until
// a command that records runs updates the store.
const ReadableFrom = 2

// labelsFrom is the first schema with the labels table.
const labelsFrom = 3

// migrate brings the schema up to date. The dialect's lock is held from
// the second look at the version to the last step, so two processes
// opening a new store at once do not both build it.
func migrate(ctx context.Context, db *sql.DB, d *Dialect, name string) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	v, err := d.Version(ctx, conn)
	if err != nil {
		return err
	}
	if v == SchemaVersion {
		return nil
	}
	if v > SchemaVersion {
		return newerSchema(name, v)
	}
	if err := d.Begin(ctx, conn); err != nil {
		return fmt.Errorf("lock %s to update its schema: %w", name, err)
	}
	rollback := func(err error) error {
		conn.ExecContext(context.Background(), "ROLLBACK")
		return err
	}
	if v, err = d.Version(ctx, conn); err != nil {
		return rollback(err)
	}
	if v > SchemaVersion {
		return rollback(newerSchema(name, v))
	}
	for i := v; i < SchemaVersion; i++ {
		if _, err := conn.ExecContext(ctx, d.render(Migrations[i])); err != nil {
			return rollback(fmt.Errorf("update %s to schema v%d: %w", name, i+1, err))
		}
	}
	if err := d.SetVersion(ctx, conn, SchemaVersion); err != nil {
		return rollback(fmt.Errorf("update %s: %w", name, err))
	}
	if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
		return rollback(fmt.Errorf("update %s: %w", name, err))
	}
	return nil
}

func newerSchema(name string, v int) error {
	return fmt.Errorf("%s has schema v%d, written by a newer agenteval (this one knows v%d): upgrade agenteval, or use --no-store", name, v, SchemaVersion)
}
