package sqlstore

import (
	"context"
	"database/sql"
	"strconv"
	"strings"
	"unicode/utf8"
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
	// StrictText says the database's text holds only valid UTF-8 without
	// NUL (PostgreSQL), where a Go string may hold any bytes. The text
	// columns of results are then written through escapeText, so a result
	// with a NUL in its test id is kept rather than refused. Readers never
	// need them back: a result is read from its data, which is bytes.
	StrictText bool
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

// text is s as the dialect's text columns of results hold it.
func (d *Dialect) text(s string) string {
	if !d.StrictText {
		return s
	}
	return escapeText(s)
}

// textEscape starts an escape in escapeText: a control character that no
// test id, suite or target has reason to hold.
const textEscape = '\x01'

// escapeText writes s in valid UTF-8 without NUL, one to one: NUL becomes
// textEscape '0', textEscape itself textEscape '1', and a byte that is not
// UTF-8 textEscape 'x' and two hex digits. Keys stay keys: two strings
// that differ are written differently (escaping textEscape too is what
// keeps a test id holding textEscape '0' apart from one holding NUL), and
// one string is always written the same, so a result stored again
// replaces itself. Text without those bytes, all text in practice, is
// written as it is.
func escapeText(s string) string {
	if utf8.ValidString(s) && strings.IndexByte(s, 0) < 0 && strings.IndexByte(s, textEscape) < 0 {
		return s
	}
	const hex = "0123456789abcdef"
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteByte(textEscape)
			b.WriteByte('x')
			b.WriteByte(hex[s[i]>>4])
			b.WriteByte(hex[s[i]&0xf])
		case r == 0:
			b.WriteByte(textEscape)
			b.WriteByte('0')
		case r == textEscape:
			b.WriteByte(textEscape)
			b.WriteByte('1')
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
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
