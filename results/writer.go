package results

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/agenteval/agenteval"
)

// Writer writes a results file: the header line, when started, then one
// line per result, flushed after each so that a killed run keeps every
// finished test. Close takes the run's Summary only so that a Writer can
// stand among report's writers; the file does not hold it.
type Writer struct {
	bw *bufio.Writer
}

// NewWriter writes results to w.
func NewWriter(w io.Writer) *Writer { return &Writer{bw: bufio.NewWriterSize(w, 32<<10)} }

// Marshal encodes a record as the format writes it: compact JSON, without
// a trailing newline and without HTML escaping. Results are read by people
// and tools, not embedded in pages, and "&" or "<" in a transcript should
// read as themselves.
func Marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// Write writes r as one line, with its secrets hidden (Redact, which
// changes r).
func (w *Writer) Write(r *agenteval.Result) error {
	Redact(r)
	b, err := Marshal(r)
	if err != nil {
		return fmt.Errorf("encode result %s: %w", r.TestID, err)
	}
	b = append(b, '\n')
	if _, err := w.bw.Write(b); err != nil {
		return fmt.Errorf("write result: %w", err)
	}
	return w.bw.Flush()
}

// Close flushes what is left; the summary is not written.
func (w *Writer) Close(*Summary) error { return w.bw.Flush() }

// Start writes the header line, setting its Record. A file that is
// resumed has one already, so its writer is not started.
func (w *Writer) Start(h *Header) error {
	h.Record = RecordRun
	b, err := Marshal(h)
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
