package trace

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/dataset"
)

// Format is one input format Open understands.
type Format struct {
	// Name is what --input-format takes.
	Name    string
	Aliases []string
	// Title names the format in messages.
	Title string
	// open starts reading a file of this format; nil means a dataset
	// format, read by package dataset.
	open func(in *input) (convReader, error)
}

// Formats lists every format, in the order --help shows them.
var Formats = []*Format{
	{Name: "ragas", Aliases: []string{"jsonl", "openai", "dataset"}, Title: "Ragas or OpenAI-messages JSONL"},
	{Name: "otlp", Aliases: []string{"otel", "opentelemetry", "openinference", "phoenix", "spans", "vercel", "adk", "mastra", "langfuse"}, Title: "OTLP JSON and span dumps (GenAI, OpenLLMetry, OpenInference, Vercel AI SDK, ADK, Mastra, Phoenix, Langfuse)", open: openOTLP},
	{Name: "openai-agents", Aliases: []string{"agents", "openai-agents-sdk"}, Title: "OpenAI Agents SDK trace export", open: openAgents},
	{Name: "langchain", Aliases: []string{"langgraph"}, Title: "LangChain/LangGraph messages", open: openLangChain},
	{Name: "inspect", Aliases: []string{"inspect-ai"}, Title: "Inspect eval log (.eval or JSON)", open: openInspect},
	{Name: "atif", Title: "ATIF trajectory", open: openATIF},
	{Name: "claude", Aliases: []string{"claude-code"}, Title: "Claude Code session log", open: openClaude},
	{Name: "codex", Title: "Codex rollout log", open: openCodex},
	{Name: "copilot", Aliases: []string{"copilot-cli"}, Title: "Copilot CLI session events", open: openCopilot},
	{Name: "gemini", Aliases: []string{"gemini-cli"}, Title: "Gemini CLI session", open: openGemini},
	{Name: "langsmith", Aliases: []string{"langsmith-runs"}, Title: "LangSmith run export", open: openLangSmith},
}

// FormatNames lists the names --input-format accepts.
func FormatNames() []string {
	names := make([]string, len(Formats))
	for i, f := range Formats {
		names[i] = f.Name
	}
	return names
}

// LookupFormat finds a format by name or alias, case-insensitively.
func LookupFormat(name string) (*Format, bool) {
	name = strings.ToLower(strings.TrimSpace(name))
	for _, f := range Formats {
		if f.Name == name {
			return f, true
		}
		for _, a := range f.Aliases {
			if a == name {
				return f, true
			}
		}
	}
	return nil, false
}

// Options configures Open. The zero value detects the format.
type Options struct {
	// Format forces a format by name; empty detects it from the content.
	Format string
	// References are joined onto the conversations by sample id.
	References dataset.References
}

// Source yields one dataset row per conversation of a file, in any format
// of Formats. It satisfies run.RowSource.
type Source struct {
	// MaxRowBytes bounds one row of a dataset file, as
	// dataset.Reader.MaxRowBytes does; trace formats are streamed span by
	// span instead.
	MaxRowBytes int64

	name     string
	format   *Format
	ds       *dataset.Reader
	cr       convReader
	closers  []func() error
	refs     dataset.References
	used     map[string]bool
	rows     int
	warnings []*agenteval.PosError
}

// conv is one conversation a reader built, with what it found on the way.
type conv struct {
	sample   *agenteval.Sample
	pos      Pos
	problems []problem
}

// convReader yields conversations in file order; io.EOF ends them. An
// error of type *agenteval.PosError stops the file at that place.
type convReader interface {
	next() (*conv, error)
	// warnings are problems that belong to no conversation, known once
	// next has returned io.EOF.
	warnings() []problem
	close() error
}

// Open opens a file for reading; "-" reads standard input. The format is
// detected from the content unless opt.Format names one.
func Open(path string, opt Options) (*Source, error) {
	in, err := openInput(path)
	if err != nil {
		return nil, err
	}
	s := &Source{name: in.name, refs: opt.References, used: map[string]bool{}, closers: []func() error{in.close}}
	if opt.Format != "" {
		f, ok := LookupFormat(opt.Format)
		if !ok {
			in.close()
			return nil, fmt.Errorf("unknown input format %q; use one of %s", opt.Format, strings.Join(FormatNames(), ", "))
		}
		s.format = f
	} else {
		s.format = detect(in.head())
		if s.format.open == nil {
			if pe, err := checkDocument(in); err != nil {
				s.Close()
				return nil, err
			} else if pe != nil {
				// Said when the file is read, as any problem of its
				// content is.
				s.cr = &errReader{err: pe}
				return s, nil
			}
		}
	}
	if s.format.open == nil {
		r, err := in.stream()
		if err != nil {
			s.Close()
			return nil, err
		}
		s.ds = dataset.NewReader(r, in.name)
		return s, nil
	}
	s.cr, err = s.format.open(in)
	if err != nil {
		s.Close()
		return nil, err
	}
	s.closers = append(s.closers, s.cr.close)
	return s, nil
}

// Name is the file name used in messages.
func (s *Source) Name() string { return s.name }

// Format is the format being read.
func (s *Source) Format() *Format { return s.format }

// FormatName describes what the file holds, for messages.
func (s *Source) FormatName() string {
	if s.ds != nil {
		return s.ds.FormatName()
	}
	return s.format.Title
}

// Close releases the file.
func (s *Source) Close() error {
	var errs []error
	for i := len(s.closers) - 1; i >= 0; i-- {
		errs = append(errs, s.closers[i]())
	}
	s.closers = nil
	return errors.Join(errs...)
}

// Next reads the next row, decoded; io.EOF follows the last one.
func (s *Source) Next() (*dataset.Row, error) {
	raw, err := s.NextRaw()
	if err != nil {
		return nil, err
	}
	return raw.Decode(), nil
}

// NextRaw reads the next row. Rows of trace formats come decoded; rows of
// dataset files are decoded by RawRow.Decode, so callers can do that in
// parallel.
func (s *Source) NextRaw() (dataset.RawRow, error) {
	if s.ds != nil {
		s.ds.MaxRowBytes = s.MaxRowBytes
		raw, err := s.ds.NextRaw()
		if err != nil || len(s.refs) == 0 {
			return raw, err
		}
		row := raw.Decode()
		if row.Sample != nil && s.refs.Apply(row.Sample) {
			s.used[row.Sample.ID] = true
		}
		raw.Decoded = row
		return raw, nil
	}
	c, err := s.cr.next()
	if err != nil {
		var pe *agenteval.PosError
		if errors.As(err, &pe) && pe.File == "" {
			pe.File = s.name
		}
		if err == io.EOF {
			for _, p := range s.cr.warnings() {
				s.warnings = append(s.warnings, s.posErr(p))
			}
		}
		return dataset.RawRow{}, err
	}
	s.rows++
	raw := dataset.RawRow{File: s.name, N: s.rows, Line: c.pos.Line, Col: c.pos.Col}
	row := &dataset.Row{RawRow: raw, Sample: c.sample}
	for _, p := range c.problems {
		if p.warning {
			row.Warnings = append(row.Warnings, s.posErr(p))
		} else {
			row.Errors = append(row.Errors, s.posErr(p))
		}
	}
	if c.sample != nil {
		if s.refs.Apply(c.sample) {
			s.used[c.sample.ID] = true
		}
		for _, me := range agenteval.MessageErrors(c.sample.UserInput.Validate()) {
			msg := fmt.Sprintf("message %d of the conversation: %s", me.Index, me.Msg)
			row.Errors = append(row.Errors, s.posErr(errAt(c.pos, msg)))
		}
	}
	raw.Decoded = row
	return raw, nil
}

func (s *Source) posErr(p problem) *agenteval.PosError {
	return &agenteval.PosError{File: s.name, Line: p.pos.Line, Col: p.pos.Col, Msg: p.msg}
}

// Warnings are the problems that belong to no row, such as traces with no
// GenAI data, and reference rows that matched no conversation. They are
// complete once NextRaw has returned io.EOF.
func (s *Source) Warnings() []*agenteval.PosError {
	out := append([]*agenteval.PosError(nil), s.warnings...)
	var unused []string
	for id := range s.refs {
		if !s.used[id] {
			unused = append(unused, id)
		}
	}
	sort.Strings(unused)
	for _, id := range unused {
		out = append(out, &agenteval.PosError{File: s.name, Msg: fmt.Sprintf("the reference for %q matches no conversation in this file", id)})
	}
	return out
}

// input is an opened file that readers can read more than once.
type input struct {
	name string
	// f is the file, or standard input once copied to a temporary file.
	f *os.File
	// stdin is standard input before it is copied.
	stdin *bufio.Reader
	close func() error
}

const headSize = 64 << 10

func openInput(path string) (*input, error) {
	if path == "-" {
		in := &input{name: "<stdin>", stdin: bufio.NewReaderSize(os.Stdin, headSize)}
		in.close = func() error {
			if in.f != nil {
				return in.f.Close()
			}
			return nil
		}
		return in, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open dataset: %w", err)
	}
	if st, err := f.Stat(); err == nil && st.IsDir() {
		f.Close()
		return nil, fmt.Errorf("open dataset %s: it is a directory; give a file (agenteval import collects session logs from a folder)", path)
	}
	return &input{name: path, f: f, close: f.Close}, nil
}

// head returns the start of the file, for detection: up to 64 KiB, but
// from standard input only what has arrived once a line is complete, so
// a slow producer is not waited for.
func (in *input) head() []byte {
	if in.stdin != nil {
		for {
			b, err := in.stdin.Peek(in.stdin.Buffered() + 1)
			if err != nil || len(b) >= headSize || firstLineDone(b) {
				if len(b) > headSize {
					b = b[:headSize]
				}
				return b
			}
		}
	}
	b := make([]byte, headSize)
	n, _ := in.f.ReadAt(b, 0)
	return b[:n]
}

// firstLineDone reports whether b holds a first line that is a whole JSON
// value (JSON lines), or a whole JSON document: enough to detect the
// format from. A pretty-printed document's first line ("{") is not.
func firstLineDone(b []byte) bool {
	t := bytes.TrimLeft(bytes.TrimPrefix(b, []byte{0xEF, 0xBB, 0xBF}), " \t\r\n")
	i := bytes.IndexByte(t, '\n')
	if i < 0 {
		return false
	}
	if json.Valid(bytes.TrimSpace(t[:i])) || json.Valid(t) {
		return true
	}
	// Not JSON at all: there is nothing more to wait for.
	return len(t) > 0 && t[0] != '{' && t[0] != '['
}

// stream returns the file from its start, without copying standard input.
func (in *input) stream() (io.Reader, error) {
	if in.stdin != nil {
		return in.stdin, nil
	}
	return in.reader()
}

// reader returns the file from its start; it may be called again to read
// the file once more. Standard input is copied to a temporary file on the
// first call.
func (in *input) reader() (io.Reader, error) {
	if in.stdin != nil {
		tmp, err := os.CreateTemp("", "agenteval-stdin-*")
		if err != nil {
			return nil, fmt.Errorf("buffer standard input: %w", err)
		}
		os.Remove(tmp.Name())
		in.f = tmp
		if _, err := io.Copy(tmp, in.stdin); err != nil {
			return nil, fmt.Errorf("read standard input: %w", err)
		}
		in.stdin = nil
	}
	if _, err := in.f.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("read %s: %w", in.name, err)
	}
	return in.f, nil
}
