CREATE TABLE runs (
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
	CREATE INDEX tags_by_run ON tags(run_id);
