package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/agenteval/agenteval"
)

// Writer receives results one at a time and a summary at the end.
type Writer interface {
	Write(r *agenteval.Result) error
	// Close writes whatever follows the last result and flushes.
	Close(sum *Summary) error
}

// Formats names the machine-readable and human formats a Writer can be made
// for.
var Formats = []string{"table", "jsonl", "json"}

type jsonlWriter struct {
	bw *bufio.Writer
}

// NewJSONL writes one JSON object per line and flushes after each, so a
// killed run keeps every finished test.
func NewJSONL(w io.Writer) Writer { return &jsonlWriter{bw: bufio.NewWriterSize(w, 32<<10)} }

// marshal encodes v as compact JSON without HTML escaping: results are
// read by people and tools, not embedded in pages, and "&" or "<" in a
// transcript should read as themselves.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

func (w *jsonlWriter) Write(r *agenteval.Result) error {
	b, err := marshal(r)
	if err != nil {
		return fmt.Errorf("encode result %s: %w", r.TestID, err)
	}
	b = append(b, '\n')
	if _, err := w.bw.Write(b); err != nil {
		return fmt.Errorf("write result: %w", err)
	}
	return w.bw.Flush()
}

func (w *jsonlWriter) Close(*Summary) error { return w.bw.Flush() }

// Start writes the header line; a file that is resumed has one already,
// so its writer is not started.
func (w *jsonlWriter) Start(h *Header) error {
	h.Record = RecordRun
	b, err := marshal(h)
	if err != nil {
		return fmt.Errorf("encode run header: %w", err)
	}
	w.bw.Write(b)
	w.bw.WriteByte('\n')
	if err := w.bw.Flush(); err != nil {
		return fmt.Errorf("write run header: %w", err)
	}
	return nil
}

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
	b, err := marshal(r)
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
func (w *jsonWriter) Start(h *Header) error {
	h.Record = RecordRun
	b, err := marshal(h)
	if err != nil {
		return fmt.Errorf("encode run header: %w", err)
	}
	fmt.Fprintf(w.bw, "{\"run\": %s,\n", b)
	w.started = true
	return nil
}

func (w *jsonWriter) Close(sum *Summary) error {
	if w.n == 0 {
		w.bw.WriteString(w.open())
	}
	b, err := marshal(sum)
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

// Close closes every writer and returns the first error.
func (m Multi) Close(sum *Summary) error {
	var first error
	for _, w := range m {
		if err := w.Close(sum); err != nil && first == nil {
			first = err
		}
	}
	return first
}
