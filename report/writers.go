package report

import (
	"bufio"
	"fmt"
	"io"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/results"
)

// Writer receives results one at a time and a summary at the end.
type Writer interface {
	Write(r *agenteval.Result) error
	// Close writes whatever follows the last result and flushes.
	Close(sum *results.Summary) error
}

// Starter is a Writer that wants the run's header before the first result:
// the JSONL writer writes it as the first line, the HTML report shows it.
type Starter interface {
	Start(h *results.Header) error
}

// Formats names the formats that results can be streamed in as a run goes,
// for agenteval score's --format; New makes these and the report formats.
var Formats = []string{"table", "jsonl", "json"}

// NewJSONL writes the results file format (see package results): the
// header line, when started, then one JSON object per line, flushed after
// each so that a killed run keeps every finished test.
func NewJSONL(w io.Writer) Writer { return results.NewWriter(w) }

// jsonWriter streams {"run": {...}, "results": [...], "summary": {...}}.
type jsonWriter struct {
	bw      *bufio.Writer
	n       int
	started bool
}

// NewJSON writes one JSON document holding every result and the summary.
// Results are streamed into it, not held.
func NewJSON(w io.Writer) Writer { return &jsonWriter{bw: bufio.NewWriterSize(w, 32<<10)} }

func (w *jsonWriter) Write(r *agenteval.Result) error {
	b, err := results.Marshal(r)
	if err != nil {
		return fmt.Errorf("encode result %s: %w", r.TestID, err)
	}
	sep := ",\n  "
	if w.n == 0 {
		sep = w.open() + "\n  "
	}
	w.n++
	if _, err := w.bw.WriteString(sep); err != nil {
		return fmt.Errorf("write result: %w", err)
	}
	if _, err := w.bw.Write(b); err != nil {
		return fmt.Errorf("write result: %w", err)
	}
	return w.bw.Flush()
}

// open is what comes before the first result.
func (w *jsonWriter) open() string {
	if w.started {
		return "\"results\": ["
	}
	return "{\"results\": ["
}

// Start writes the run's header first in the document.
func (w *jsonWriter) Start(h *results.Header) error {
	h.Record = results.RecordRun
	b, err := results.Marshal(h)
	if err != nil {
		return fmt.Errorf("encode run header: %w", err)
	}
	fmt.Fprintf(w.bw, "{\"run\": %s,\n", b)
	w.started = true
	return nil
}

func (w *jsonWriter) Close(sum *results.Summary) error {
	if w.n == 0 {
		w.bw.WriteString(w.open())
	}
	b, err := results.Marshal(sum)
	if err != nil {
		return fmt.Errorf("encode summary: %w", err)
	}
	fmt.Fprintf(w.bw, "\n],\n\"summary\": %s}\n", b)
	return w.bw.Flush()
}

// Multi sends every result to several writers.
type Multi []Writer

// Write writes r to each writer, stopping at the first error.
func (m Multi) Write(r *agenteval.Result) error {
	for _, w := range m {
		if err := w.Write(r); err != nil {
			return err
		}
	}
	return nil
}

// Start gives the header to every writer that takes one.
func (m Multi) Start(h *results.Header) error {
	for _, w := range m {
		if s, ok := w.(Starter); ok {
			if err := s.Start(h); err != nil {
				return err
			}
		}
	}
	return nil
}

// Close closes every writer and returns the first error.
func (m Multi) Close(sum *results.Summary) error {
	var first error
	for _, w := range m {
		if err := w.Close(sum); err != nil && first == nil {
			first = err
		}
	}
	return first
}
