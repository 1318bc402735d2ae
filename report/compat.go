package report

import (
	"io"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/results"
)

// The results file format moved to package results. These names stay
// until the last callers have switched over, so that moving the format
// and moving its callers need not happen in one change.

// RecordRun marks the header record of a results file.
//
// Deprecated: use results.RecordRun.
const RecordRun = results.RecordRun

// ErrNotResult marks a line that is JSON but no result.
//
// Deprecated: use results.ErrNotResult.
var ErrNotResult = results.ErrNotResult

type (
	// Header is the first line of a results file.
	//
	// Deprecated: use results.Header.
	Header = results.Header
	// Shard says which part of a run a results file holds.
	//
	// Deprecated: use results.Shard.
	Shard = results.Shard
	// SuiteFile is one eval file (or dataset) of a run.
	//
	// Deprecated: use results.SuiteFile.
	SuiteFile = results.SuiteFile
	// Git is the work tree a run started from.
	//
	// Deprecated: use results.Git.
	Git = results.Git
	// Reader reads a results file.
	//
	// Deprecated: use results.Reader.
	Reader = results.Reader
	// Summary aggregates results as they stream past.
	//
	// Deprecated: use results.Summary.
	Summary = results.Summary
	// MetricSummary is the statistics of one score name across tests.
	//
	// Deprecated: use results.MetricSummary.
	MetricSummary = results.MetricSummary
	// PassAtKSummary is pass@k and pass^k over many tests.
	//
	// Deprecated: use results.PassAtKSummary.
	PassAtKSummary = results.PassAtKSummary
)

// NewRunID returns a fresh run id.
//
// Deprecated: use results.NewRunID.
func NewRunID() string { return results.NewRunID() }

// HashFile returns the hex SHA-256 of a file's bytes.
//
// Deprecated: use results.HashFile.
func HashFile(path string) (string, error) { return results.HashFile(path) }

// RunDiffs says how two headers differ in what makes them one run.
//
// Deprecated: use results.RunDiffs.
func RunDiffs(a, b *results.Header) []string { return results.RunDiffs(a, b) }

// NewReader reads results from r.
//
// Deprecated: use results.NewReader.
func NewReader(r io.Reader, name string) *results.Reader { return results.NewReader(r, name) }

// OpenResults opens a results file.
//
// Deprecated: use results.OpenResults.
func OpenResults(path string) (*results.Reader, func() error, error) {
	return results.OpenResults(path)
}

// ReadResults calls fn for each result of the file at path, in order.
//
// Deprecated: use results.ReadResults.
func ReadResults(path string, fn func(*agenteval.Result) error) (*results.Header, error) {
	return results.ReadResults(path, fn)
}

// ReadResultLines is ReadResults that also hands fn each result's line.
//
// Deprecated: use results.ReadResultLines.
func ReadResultLines(path string, fn func(r *agenteval.Result, line []byte) error) (*results.Header, error) {
	return results.ReadResultLines(path, fn)
}
