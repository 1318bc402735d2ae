package results

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync"

	"github.com/agenteval/agenteval"
)

// Reader reads a results JSONL file: the run header, when there is one,
// then one result per line. It is the one reader behind --resume, replay,
// compare, show and report. Records of kinds it does not know are skipped,
// so files from newer versions still read. A last line cut off by a killed
// run is left out, and Cut says where the whole lines end.
//
// It reads AgentV's results too (its index.jsonl), each row into the
// result it means here (see agentv.go); what cannot be carried over with
// AgentV's meaning is listed by Differences.
type Reader struct {
	name string
	// dir is the folder of the run's other files, which AgentV's rows
	// name; empty when the results came from a stream.
	dir    string
	notes  notes
	br     *bufio.Reader
	line   int
	off    int64 // bytes consumed
	whole  int64 // bytes up to the end of the last whole line
	header *Header
	peeked *row // first row, read while looking for the header
	cut    bool
	err    error
}

// row is one line that is not a header or another known record.
type row struct {
	line int
	raw  []byte
}

// ErrNotResult marks a line that is JSON but no result (it lacks test_id).
var ErrNotResult = errors.New("not a result")

// NewReader reads results from r; name is used in errors. It reads as far
// as the first record, so that Header is known at once.
func NewReader(r io.Reader, name string) *Reader {
	rd := &Reader{name: name, br: bufio.NewReaderSize(r, 64<<10)}
	rd.notes.file = name
	ln, raw, err := rd.nextRow()
	switch {
	case err == nil:
		rd.peeked = &row{line: ln, raw: raw}
	case err != io.EOF:
		rd.err = err
	}
	return rd
}

// OpenResults opens a results file, or the index.jsonl of an AgentV run
// folder (FindRunIndex). Close the file with the returned function.
func OpenResults(path string) (*Reader, func() error, error) {
	path, err := FindRunIndex(path)
	if err != nil {
		return nil, nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	rd := NewReader(f, path)
	// AgentV's rows name their files relative to the run's folder: the
	// index's own (v4), or the one above .internal (v5).
	rd.dir = filepath.Dir(path)
	if filepath.Base(rd.dir) == ".internal" {
		rd.dir = filepath.Dir(rd.dir)
	}
	if rd.err != nil {
		f.Close()
		return nil, nil, rd.err
	}
	return rd, f.Close, nil
}

// ReadResults calls fn for each result of the file at path, in order,
// and returns its header (nil for a file written before headers existed).
// Lines are decoded on every core while fn works, since decoding is most
// of the cost of reading a large file.
func ReadResults(path string, fn func(*agenteval.Result) error) (*Header, error) {
	return ReadResultLines(path, func(r *agenteval.Result, _ []byte) error { return fn(r) })
}

// ReadResultLines is ReadResults that also hands fn each result's line as
// it is in the file, for writers that copy it rather than encode it again.
// A row of AgentV's is handed over as agenteval writes its result, which
// is what such writers expect.
func ReadResultLines(path string, fn func(r *agenteval.Result, line []byte) error) (*Header, error) {
	rd, closeFile, err := OpenResults(path)
	if err != nil {
		return nil, err
	}
	defer closeFile()
	type job struct {
		line int
		raw  []byte
		res  *agenteval.Result
		err  error
		done chan struct{}
	}
	workers := max(1, runtime.GOMAXPROCS(0))
	todo := make(chan *job, 4*workers)
	order := make(chan *job, 4*workers)
	stop := make(chan struct{})
	var readErr error
	go func() { // reads lines in order
		defer close(todo)
		defer close(order)
		for {
			ln, raw, err := rd.NextRow()
			if err != nil {
				if err != io.EOF {
					readErr = err
				}
				return
			}
			j := &job{line: ln, raw: raw, done: make(chan struct{})}
			select {
			case order <- j:
			case <-stop:
				return
			}
			select {
			case todo <- j:
			case <-stop:
				return
			}
		}
	}()
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range todo {
				j.res, j.raw, j.err = rd.decodeLine(j.line, j.raw)
				close(j.done)
			}
		}()
	}
	defer wg.Wait()
	for j := range order {
		<-j.done
		err := j.err
		if err == nil {
			err = fn(j.res, j.raw)
		}
		if err != nil {
			close(stop)
			for range order { // let the reader and the workers finish
			}
			return rd.Header(), err
		}
	}
	return rd.Header(), readErr
}

// Header is the run's header, or nil when the file has none.
func (rd *Reader) Header() *Header { return rd.header }

// Cut reports whether the last line was cut off, and how many bytes of the
// file are whole lines. Call it after Next has returned io.EOF.
func (rd *Reader) Cut() (bool, int64) { return rd.cut, rd.whole }

// Line is the line number of the last row returned.
func (rd *Reader) Line() int { return rd.line }

// Next returns the next result, or io.EOF after the last one. A line that
// is JSON but not a result is an error wrapping ErrNotResult, naming the
// line.
func (rd *Reader) Next() (*agenteval.Result, error) {
	ln, raw, err := rd.NextRow()
	if err != nil {
		return nil, err
	}
	return rd.decode(ln, raw)
}

// decode turns a row into a result; it is safe to call from several
// goroutines.
func (rd *Reader) decode(ln int, raw []byte) (*agenteval.Result, error) {
	r, _, err := rd.decodeLine(ln, raw)
	return r, err
}

// decodeLine is decode that also returns the result's line as agenteval
// writes it: raw itself, or, for a row of AgentV's, the result encoded.
func (rd *Reader) decodeLine(ln int, raw []byte) (*agenteval.Result, []byte, error) {
	var r agenteval.Result
	err := json.Unmarshal(raw, &r)
	if err != nil || r.Verdict == "" {
		// Every result agenteval writes has a verdict; a row without
		// one may be AgentV's (whose output may be text, which does
		// not decode as a conversation).
		if top, ok := agentvShape(raw); ok {
			res, err := rd.decodeAgentV(ln, top)
			if err != nil {
				return nil, nil, err
			}
			line, err := Marshal(res)
			if err != nil {
				return nil, nil, fmt.Errorf("%s:%d: encode result: %w", rd.name, ln, err)
			}
			return res, line, nil
		}
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%s:%d: not a result: %v", rd.name, ln, err)
	}
	if r.TestID == "" {
		return nil, nil, fmt.Errorf("%s:%d: %w: the line has no test_id; is this a dataset? (agenteval score reads datasets)", rd.name, ln, ErrNotResult)
	}
	return &r, raw, nil
}

// NextRow returns the next line that is not a header or a record of
// another kind, undecoded, with its line number: for readers of files that
// hold results or rows of their own (replay reads recordings both ways).
func (rd *Reader) NextRow() (int, []byte, error) {
	if rd.peeked != nil {
		p := rd.peeked
		rd.peeked = nil
		return p.line, p.raw, nil
	}
	if rd.err != nil {
		return 0, nil, rd.err
	}
	return rd.nextRow()
}

func (rd *Reader) nextRow() (int, []byte, error) {
	for {
		raw, err := rd.br.ReadBytes('\n')
		if len(raw) == 0 && err == io.EOF {
			return 0, nil, io.EOF
		}
		if err != nil && err != io.EOF {
			return 0, nil, fmt.Errorf("read %s: %w", rd.name, err)
		}
		rd.line++
		rd.off += int64(len(raw))
		last := err == io.EOF
		text := bytes.TrimSpace(raw)
		if len(text) == 0 {
			rd.whole = rd.off
			continue
		}
		if last && !json.Valid(text) {
			// A line without its newline that does not parse was cut off
			// by a kill: the test it held runs again on --resume.
			rd.cut = true
			return 0, nil, io.EOF
		}
		rd.whole = rd.off
		if !bytes.Contains(text, []byte(`"record"`)) {
			// Most lines: a result, with no record key anywhere.
			return rd.line, text, nil
		}
		var rec struct {
			Record string `json:"record"`
		}
		if jerr := json.Unmarshal(text, &rec); jerr != nil {
			return 0, nil, fmt.Errorf("%s:%d: not a JSON object: %v", rd.name, rd.line, jerr)
		}
		switch rec.Record {
		case "", "result":
			return rd.line, text, nil
		case RecordRun:
			if rd.header == nil {
				var h Header
				if err := json.Unmarshal(text, &h); err != nil {
					return 0, nil, fmt.Errorf("%s:%d: run header: %v", rd.name, rd.line, err)
				}
				rd.header = &h
			}
			// Later headers (files joined end to end) add nothing.
		}
		// Records of other kinds are for other readers.
	}
}
