// Package report writes and reads results. Writers: JSONL (a run header,
// then one line per test, flushed as each test finishes), a streamed JSON
// document, the terminal table, JUnit XML, Markdown, and the
// self-contained HTML report (one run, or two side by side). Reader (and
// ReadResults) is the one reader of results files, behind --resume,
// replay, compare, show and report. WriteTranscript prints one test's
// conversation for a terminal.
//
// Writers hold at most a small index of each test (HTML), the failures
// (Markdown), or one result, so memory stays flat however many tests a run
// has.
//
// It may import the root package and the standard library.
package report
