// Package results owns the results file format, the JSON lines that
// agenteval run and score write and that --resume, replay, merge, compare,
// show, report and the run store read back. The first line is the run's
// Header, a record {"record": "run", ...}; each line after it is one
// agenteval.Result, written as its test finishes. Lines whose "record" a
// reader does not know are skipped, so newer files still read.
//
// The package holds the records (Header and what it is made of), the
// Writer that writes them, the Reader and ReadResults that read them back,
// and Summary, the totals that every consumer of a run computes from its
// results. The Reader reads AgentV's results too (its index.jsonl, and the
// per-test files its rows name): each row becomes the result it means
// here, with its verdict derived as AgentV derives it, and what cannot be
// carried over with AgentV's meaning is listed, at its line, by
// AgentVDifferences. Renderers for people (the table, HTML, JUnit, Markdown) are in
// package report, which builds on this one.
//
// It may import the root package, internal/redact, internal/jsonvalue and
// the standard library.
package results
