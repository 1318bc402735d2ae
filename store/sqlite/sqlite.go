// Package sqlite keeps the run store in one SQLite file (pure Go, through
// modernc.org/sqlite), in WAL mode, so readers such as agenteval view never
// block the run that writes. The schema, queries and batching writer are
// store/sqlstore's; this package opens the file and supplies SQLite's
// dialect (the schema version in PRAGMA user_version).
//
// It may import the root package, results, store, store/sqlstore, the
// standard library and modernc.org/sqlite.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"

	"github.com/agenteval/agenteval/store"
	"github.com/agenteval/agenteval/store/sqlstore"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Options configure Open.
type Options struct {
	// ReadOnly opens an existing store for reading only; writes fail.
	ReadOnly bool
}

// DB is a store in one SQLite file.
type DB struct {
	*sqlstore.DB
	path string
}

var _ store.Store = (*DB)(nil)

// Dialect is SQLite's: the schema version is PRAGMA user_version, and the
// schema is updated under BEGIN IMMEDIATE, SQLite's write lock.
var Dialect = &sqlstore.Dialect{
	Name: "SQLite",
	Types: map[string]string{
		"int": "INTEGER", "real": "REAL", "blob": "BLOB",
		"seq": "INTEGER PRIMARY KEY AUTOINCREMENT", "reseq": "",
	},
	TagList: `(SELECT group_concat(name, ' ') FROM (SELECT name FROM tags WHERE run_id = runs.id ORDER BY name))`,
	// REPLACE deletes the old row and inserts a new one, with a new seq.
	UpsertResult: `INSERT OR REPLACE INTO results (run_id, suite, test_id, target, verdict, status, score, calls, cached_calls,
	input_tokens, output_tokens, cost_usd, cost_unknown, duration_ms, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
	Version: func(ctx context.Context, c *sql.Conn) (int, error) {
		var v int
		if err := c.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
			return 0, fmt.Errorf("read schema version: %w", err)
		}
		return v, nil
	},
	Begin: func(ctx context.Context, c *sql.Conn) error {
		_, err := c.ExecContext(ctx, "BEGIN IMMEDIATE")
		return err
	},
	SetVersion: func(ctx context.Context, c *sql.Conn, v int) error {
		// PRAGMA takes no parameters; the number is ours.
		_, err := c.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", v))
		return err
	},
	Retryable: func(err error) bool {
		// The busy timeout has waited 10 s for the lock already; a
		// transaction that read before it wrote may still be refused.
		var se *sqlite.Error
		return errors.As(err, &se) && (se.Code()&0xff == sqlite3.SQLITE_BUSY || se.Code()&0xff == sqlite3.SQLITE_LOCKED)
	},
}

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
	} else {
		if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
			return nil, fmt.Errorf("open store: %w", err)
		}
		// The store holds transcripts: readable by its owner only, like
		// the cache. Made here so SQLite's own files (-wal, -shm) follow
		// its mode; an older store made 0644 is narrowed too.
		f, err := os.OpenFile(abs, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return nil, fmt.Errorf("open store: %w", err)
		}
		f.Close()
		if err := os.Chmod(abs, 0o600); err != nil {
			return nil, fmt.Errorf("open store: %w", err)
		}
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
	s, err := sqlstore.New(context.Background(), db, Dialect, sqlstore.Options{Name: path, ReadOnly: opt.ReadOnly})
	if err != nil {
		if errors.Is(err, sqlstore.ErrNoSchema) {
			err = fmt.Errorf("%s holds no runs yet: any agenteval command that records runs creates its schema", path)
		}
		return nil, fmt.Errorf("open store: %w", err)
	}
	return &DB{DB: s, path: path}, nil
}

// Path is the store's file.
func (s *DB) Path() string { return s.path }
