package sqlstore

import (
	"context"
	"database/sql"
	"strconv"
	"strings"
)

// Dialect is what differs between the databases a store runs on. The
// schema, its migrations and the queries are written once, in SQL both
// databases speak, with ? placeholders and {{name}} slots for column types;
// a dialect fills those in and says how the schema's version is kept.
type Dialect struct {
	// Name names the database in messages: "SQLite", "PostgreSQL".
	Name string
	// Types fill the schema's slots: {{int}} (64-bit integers), {{real}}
	// (doubles), {{blob}} (bytes), {{seq}} (a primary key that numbers rows
	// in the order they are written and never reuses a number), and
	// {{reseq}} (a statement that moves {{seq}}'s counter of the results
	// table past its largest value, after rows were copied in with their
	// numbers; empty where the database does that itself).
	Types map[string]string
	// Numbered placeholders: ? becomes $1, $2, ... (PostgreSQL).
	Numbered bool
	// TagList is an expression in a query of runs: the names of runs.id's
	// tags, sorted, separated by single spaces; NULL when there are none.
	TagList string
	// UpsertResult stores a result, replacing the one with its key (run,
	// suite, test, target) and giving it a new, higher seq, so readers
	// following the run see it again. Its arguments are resultColumns, in
	// order.
	UpsertResult string
	// Version reads the schema version: 0 for a database without one.
	Version func(ctx context.Context, c *sql.Conn) (int, error)
	// Begin starts the transaction that updates the schema, holding a lock
	// that keeps other processes from updating it at the same time. It is
	// ended with COMMIT or ROLLBACK on the same connection.
	Begin func(ctx context.Context, c *sql.Conn) error
	// SetVersion records the schema version, inside that transaction.
	SetVersion func(ctx context.Context, c *sql.Conn, v int) error
	// Retryable says whether a transaction that failed with err may succeed
	// if run again: a deadlock, a serialization failure, a busy database.
	Retryable func(err error) bool
}

// resultColumns are the columns UpsertResult sets, in the order of its
// arguments.
const resultColumns = `run_id, suite, test_id, target, verdict, status, score, calls, cached_calls,
	input_tokens, output_tokens, cost_usd, cost_unknown, duration_ms, data`

// rebind turns ? placeholders into the dialect's. The queries of this
// package hold no ? inside string literals.
func (d *Dialect) rebind(q string) string {
	if !d.Numbered || !strings.Contains(q, "?") {
		return q
	}
	var b strings.Builder
	b.Grow(len(q) + 16)
	n := 0
	for _, c := range q {
		if c == '?' {
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteRune(c)
	}
	return b.String()
}

// render fills a migration's type slots.
func (d *Dialect) render(step string) string {
	pairs := make([]string, 0, 2*len(d.Types))
	for k, v := range d.Types {
		pairs = append(pairs, "{{"+k+"}}", v)
	}
	return strings.NewReplacer(pairs...).Replace(step)
}
