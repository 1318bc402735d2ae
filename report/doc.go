// Package report renders results for people and for other tools. Writers:
// JSONL (the results file of package results, a run header and then one
// line per test, flushed as each test finishes), a streamed JSON document,
// the terminal table, JUnit XML, Markdown, and the self-contained HTML
// report (one run, or two side by side); New makes one by its format's
// name. WriteTranscript prints one test's conversation for a terminal.
//
// The results format itself (the header and result records, the reader,
// and the Summary every writer is closed with) is package results. The
// names of it that this package still declares are aliases kept while
// callers switch over.
//
// Writers hold at most a small index of each test (HTML), the failures
// (Markdown), or one result, so memory stays flat however many tests a run
// has.
//
// It may import the root package, results and the standard library.
package report
