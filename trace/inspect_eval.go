package trace

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"strings"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/internal/bytesize"
)

// Inspect's .eval log, its default format: a zip holding
//
//   - header.json: the log without its samples ({version, status, eval,
//     plan, results, stats, error}), written when the run ends;
//   - _journal/start.json: {version, eval, plan}, written when it starts
//     (all there is of a run still going or killed);
//   - samples/<id>_epoch_<epoch>.json: one EvalSample each, as in the JSON
//     log's samples list, with long content moved to its attachments
//     ("attachment://<hash>");
//   - summaries.json and _journal/summaries/<n>.json: one summary per
//     sample, in the order Inspect lists them;
//   - reductions.json: scores reduced over epochs.
//
// Each sample is mapped as the JSON log's are (inspectSample). Problems
// name the entry they are in; the entries hold one-line JSON, so a line
// and column would say nothing more.
//
// Source: UKGovernmentBEIS/inspect_ai, src/inspect_ai/log/_recorders/
// eval.py (the entry names and what each holds) and log/_condense.py
// (attachments).

// zipMagic starts every zip file (the local header of its first entry).
var zipMagic = []byte("PK\x03\x04")

func isZip(head []byte) bool { return bytes.HasPrefix(head, zipMagic) }

// Bounds on what a .eval file may unpack to, so that a zip bomb (or a
// file that is not a log) is refused instead of filling memory. Inspect
// writes one entry per sample and a few more; a sample with images and a
// long agent transcript is a few megabytes.
const (
	maxEvalEntries    = 1_000_000
	maxEvalEntryBytes = 256 << 20
	maxEvalTotalBytes = 64 << 30
)

func openInspectEval(in *input) (convReader, error) {
	r, err := in.reader()
	if err != nil {
		return nil, err
	}
	f, ok := r.(*os.File)
	if !ok {
		return nil, fmt.Errorf("%s: a .eval log must be a file", in.name)
	}
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", in.name, err)
	}
	zr, err := zip.NewReader(f, st.Size())
	if err != nil {
		return failed(fmt.Sprintf("a zip archive that cannot be read (%v); an Inspect .eval log is a whole zip file, as Inspect wrote it", err)), nil
	}
	cr, err := newEvalReader(in.name, zr)
	if err != nil {
		return failed(strings.TrimPrefix(err.Error(), in.name+": ")), nil
	}
	return cr, nil
}

// failed is a reader whose file cannot be read at all: reading it stops
// at once with msg, about the file as a whole.
func failed(msg string) convReader {
	return &errReader{err: &agenteval.PosError{Msg: msg}}
}

type errReader struct{ err error }

func (e *errReader) next() (*conv, error) {
	if e.err == nil {
		return nil, io.EOF
	}
	err := e.err
	e.err = nil
	return nil, err
}
func (e *errReader) warnings() []problem { return nil }
func (e *errReader) close() error        { return nil }

func newEvalReader(name string, zr *zip.Reader) (convReader, error) {
	if n := len(zr.File); n > maxEvalEntries {
		return nil, fmt.Errorf("%s: the zip holds %d entries, more than the %d an Inspect log may; it is not read", name, n, maxEvalEntries)
	}
	e := &evalReader{name: name, entries: map[string]*zip.File{}}
	var total uint64
	for _, f := range zr.File {
		total += f.UncompressedSize64
		e.entries[f.Name] = f
		if strings.HasPrefix(f.Name, "samples/") && strings.HasSuffix(f.Name, ".json") {
			e.samples = append(e.samples, f.Name)
		}
	}
	if total > maxEvalTotalBytes {
		return nil, fmt.Errorf("%s: the zip says it unpacks to %s, more than the %s an Inspect log may (a zip bomb?); it is not read", name, bytesize.Format(int64(min(total, 1<<62))), bytesize.Format(maxEvalTotalBytes))
	}
	header := "header.json"
	if e.entries[header] == nil {
		header = "_journal/start.json"
	}
	if e.entries[header] == nil {
		return nil, fmt.Errorf("%s: a zip archive, but not an Inspect .eval log: it has neither header.json nor _journal/start.json", name)
	}
	raw, err := e.read(header)
	if err != nil {
		return nil, err
	}
	var h map[string]json.RawMessage
	if err := json.Unmarshal(raw, &h); err != nil {
		return nil, fmt.Errorf("%s: %s is not a JSON object: %v", name, header, err)
	}
	e.parent = map[string]json.RawMessage{"eval": h["eval"]}
	if header != "header.json" {
		e.warn = append(e.warn, warnAt(Pos{}, "the log has no header.json (the run had not finished when it was copied); read from _journal/start.json and the samples written so far"))
	}
	e.order()
	if len(e.samples) == 0 {
		msg := "this Inspect log holds no samples"
		var status string
		if json.Unmarshal(h["status"], &status) == nil && status != "" {
			msg += fmt.Sprintf(" (status %q)", status)
		}
		return nil, fmt.Errorf("%s: %s; nothing to score", name, msg)
	}
	return e, nil
}

type evalReader struct {
	name    string
	entries map[string]*zip.File
	samples []string
	parent  map[string]json.RawMessage
	next_   int
	warn    []problem
}

// order puts the samples in the order Inspect lists them: its summaries',
// then by id and epoch for any the summaries miss.
func (e *evalReader) order() {
	rank := map[string]int{}
	// summaries.json when the run ended; else the journal's pieces, in
	// the order they were written.
	lists := []string{"summaries.json"}
	if e.entries["summaries.json"] == nil {
		lists = lists[:0]
		for n := 1; e.entries[fmt.Sprintf("_journal/summaries/%d.json", n)] != nil; n++ {
			lists = append(lists, fmt.Sprintf("_journal/summaries/%d.json", n))
		}
	}
	for _, s := range lists {
		raw, err := e.read(s)
		if err != nil {
			e.warn = append(e.warn, warnAt(Pos{}, strings.TrimPrefix(err.Error(), e.name+": ")))
			continue
		}
		var sums []struct {
			ID    json.RawMessage `json:"id"`
			Epoch json.RawMessage `json:"epoch"`
		}
		if json.Unmarshal(raw, &sums) != nil {
			e.warn = append(e.warn, warnAt(Pos{}, s+" is not a list of sample summaries; its samples are read in the zip's order"))
			continue
		}
		for _, sm := range sums {
			var id any
			json.Unmarshal(sm.ID, &id)
			k := fmt.Sprintf("samples/%v_epoch_%s.json", id, sm.Epoch)
			if rank[k] == 0 {
				rank[k] = len(rank) + 1
			}
		}
	}
	sort.SliceStable(e.samples, func(i, j int) bool {
		ri, rj := rank[e.samples[i]], rank[e.samples[j]]
		if ri == 0 {
			ri = len(rank) + 1
		}
		if rj == 0 {
			rj = len(rank) + 1
		}
		return ri < rj
	})
}

// read unpacks one entry, within the bounds.
func (e *evalReader) read(name string) ([]byte, error) {
	f := e.entries[name]
	if f == nil {
		return nil, fmt.Errorf("%s: no %s in the zip", e.name, name)
	}
	if f.UncompressedSize64 > maxEvalEntryBytes {
		return nil, fmt.Errorf("%s: %s would unpack to %s, more than the %s an entry of an Inspect log may (a zip bomb?); it is not read", e.name, name, bytesize.Format(int64(min(f.UncompressedSize64, 1<<62))), bytesize.Format(maxEvalEntryBytes))
	}
	rc, err := f.Open()
	if err != nil {
		return nil, fmt.Errorf("%s: open %s in the zip: %w", e.name, name, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, int64(f.UncompressedSize64)+1))
	if errors.Is(err, zip.ErrFormat) || errors.Is(err, zip.ErrChecksum) {
		// archive/zip checks what it unpacks against the sizes and
		// checksum the zip declares.
		return nil, fmt.Errorf("%s: %s unpacks to more than the zip says it holds, or is damaged (a zip bomb?); it is not read", e.name, name)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: unpack %s: %w", e.name, name, err)
	}
	if uint64(len(b)) > f.UncompressedSize64 {
		return nil, fmt.Errorf("%s: %s unpacks to more than the zip says it holds (a zip bomb?); it is not read", e.name, name)
	}
	return b, nil
}

func (e *evalReader) next() (*conv, error) {
	if e.next_ >= len(e.samples) {
		return nil, io.EOF
	}
	name := e.samples[e.next_]
	e.next_++
	raw, err := e.read(name)
	if err != nil {
		// One entry that cannot be read costs its sample only.
		return &conv{problems: []problem{errAt(Pos{}, strings.TrimPrefix(err.Error(), e.name+": "))}}, nil
	}
	c := inspectSample(raw, e.parent, Pos{})
	entry := path.Clean(name)
	for i := range c.problems {
		c.problems[i].msg = entry + ": " + c.problems[i].msg
	}
	return c, nil
}

func (e *evalReader) warnings() []problem { return e.warn }

func (e *evalReader) close() error { return nil }
