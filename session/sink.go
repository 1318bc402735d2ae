package session

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/report"
	"github.com/agenteval/agenteval/results"
)

// Sink is where a run's results go: the results file, JUnit and HTML, the
// run store and the caller's writers (a terminal table, an OpenTelemetry
// exporter). It keeps
// the run's summary, and records in the store how the run ended. run,
// score and merge all write through one, so the header and the store are
// wired in one place.
type Sink struct {
	opt *Options
	// writers get every result; started also get the header (all but a
	// resumed results file, which has its own); archives are the writers of
	// the whole run, which also get the results a resumed file holds.
	writers, started, archives report.Multi
	files                      []*os.File
	reports                    []pending
	rec                        *recording
	header                     *results.Header

	mu  sync.Mutex
	sum results.Summary
}

// SinkFile says how the results file is written.
type SinkFile struct {
	// Format is the writer's (report.New): "jsonl" (the default), "json",
	// "table", ...; Metrics are the score columns of a table.
	Format  string
	Metrics []string
	// Append adds to the file instead of starting it afresh (a resumed
	// run); HasHeader says it already holds results or a header, so no
	// header is written into it.
	Append, HasHeader bool
}

// NewSink opens the run store, the results file (opt.Output) and the
// report files. Nothing is written until
// Start. Problems are *ConfigError.
func NewSink(opt *Options, file SinkFile) (*Sink, error) {
	// The store first: one that was named and cannot be opened stops the
	// run before any file is started.
	rec, err := startRecording(opt)
	if err != nil {
		return nil, err
	}
	s := &Sink{opt: opt, rec: rec}
	if opt.Output != "" {
		// -o starts the file afresh; only a resumed run adds to one, so a
		// new run is never mixed into an old one's results.
		mode := os.O_CREATE | os.O_WRONLY | os.O_TRUNC
		if file.Append {
			mode = os.O_CREATE | os.O_WRONLY | os.O_APPEND
		}
		fh, err := os.OpenFile(opt.Output, mode, 0o644)
		if err != nil {
			return nil, configErr("open results file: %v", err)
		}
		s.files = append(s.files, fh)
		format := file.Format
		if format == "" {
			format = "jsonl"
		}
		w, err := report.New(format, fh, report.Options{Table: report.TableOptions{Metrics: file.Metrics}})
		if err != nil {
			s.Abort()
			return nil, configErr("%v", err)
		}
		s.writers = append(s.writers, w)
		if !file.HasHeader {
			s.started = append(s.started, w)
		}
	}
	for _, a := range []struct {
		path string
		mk   func(io.Writer) report.Writer
	}{{opt.JUnit, report.NewJUnit}, {opt.HTML, func(w io.Writer) report.Writer { return report.NewHTML(w, report.HTMLOptions{}) }}} {
		if a.path == "" {
			continue
		}
		// A report is written beside its path and renamed over it when the
		// run ends, so a killed run leaves the previous report whole
		// instead of an empty file.
		fh, err := os.CreateTemp(filepath.Dir(a.path), "."+filepath.Base(a.path)+".*.tmp")
		if err != nil {
			s.Abort()
			return nil, configErr("create %s: %v", a.path, err)
		}
		s.reports = append(s.reports, pending{fh, a.path})
		w := a.mk(fh)
		s.writers, s.started, s.archives = append(s.writers, w), append(s.started, w), append(s.archives, w)
	}
	for _, w := range opt.Writers {
		s.writers, s.started = append(s.writers, w), append(s.started, w)
	}
	if w := s.rec.writer(); w != nil {
		s.writers, s.started = append(s.writers, w), append(s.started, w)
	}
	return s, nil
}

// SkipStoreIfHolds leaves the store out when it already holds the whole
// finished run with n results (shards that recorded into a shared store).
func (s *Sink) SkipStoreIfHolds(ctx context.Context, runID string, n int) {
	if !s.rec.holds(ctx, runID, n) {
		return
	}
	w := s.rec.writer()
	drop := func(m report.Multi) report.Multi {
		out := m[:0]
		for _, x := range m {
			if x != w {
				out = append(out, x)
			}
		}
		return out
	}
	s.writers, s.started = drop(s.writers), drop(s.started)
	s.rec.close()
	s.rec = nil
}

// Start writes the header to every writer that takes one.
func (s *Sink) Start(h *results.Header) error {
	s.header = h
	if err := s.started.Start(h); err != nil {
		return configErr("%v", err)
	}
	return nil
}

// Write adds a result of this run: to the summary, the caller's
// OnResult, and every writer.
func (s *Sink) Write(r *agenteval.Result) error {
	s.count(r, false)
	return s.writers.Write(r)
}

// count adds a result to the summary and tells the caller of it. Its
// secrets are already hidden: the runner redacts each result as it is
// made, and what comes from an earlier file was redacted when the
// results writer wrote it. A walk here would repeat that (about 11 µs for
// a four-turn result, on every result of every run with a key set).
func (s *Sink) count(r *agenteval.Result, carried bool) {
	s.mu.Lock()
	s.sum.Add(r)
	s.mu.Unlock()
	if s.opt.OnResult != nil {
		s.opt.OnResult(r, carried)
	}
}

// carry adds a result an earlier file holds that this run takes over
// (--rerun-failed): every writer gets it.
func (s *Sink) carry(r *agenteval.Result) error {
	s.count(r, true)
	return s.writers.Write(r)
}

// archive adds a result a resumed file already holds: to the summary, the
// writers of the whole run (HTML, JUnit), and the store when it lacks it.
func (s *Sink) archive(r *agenteval.Result, toStore bool) error {
	s.count(r, true)
	if toStore {
		s.rec.add(s.header.RunID, r)
	}
	return s.archives.Write(r)
}

// recorded says the store holds the run: it was opened and never failed.
func (s *Sink) recorded() bool {
	return s.rec != nil && !s.rec.w.failed
}

// Summary is the run's summary so far.
func (s *Sink) Summary() results.Summary {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sum
}

// Close records how the run ended (runErr, or ctx cancelled), gives the
// summary, which lasted durationMS, to every writer, and closes the
// files. Results already written are kept whatever happens.
func (s *Sink) Close(ctx context.Context, runErr error, durationMS float64) (results.Summary, error) {
	s.mu.Lock()
	s.sum.DurationMS = durationMS
	sum := s.sum
	s.mu.Unlock()
	s.rec.finish(runErr, ctx)
	err := s.writers.Close(&sum)
	s.rec.close()
	for _, fh := range s.files {
		if cerr := fh.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("close %s: %w", fh.Name(), cerr)
		}
	}
	s.files = nil
	for _, r := range s.reports {
		if cerr := r.finish(); cerr != nil && err == nil {
			err = cerr
		}
	}
	s.reports = nil
	return sum, err
}

// pending is a report being written to a temporary file until the run
// ends.
type pending struct {
	tmp  *os.File
	path string
}

func (p pending) finish() error {
	if err := p.tmp.Close(); err != nil {
		os.Remove(p.tmp.Name())
		return fmt.Errorf("write %s: %w", p.path, err)
	}
	// CreateTemp makes the file 0600; a report is as readable as any file
	// the user writes.
	os.Chmod(p.tmp.Name(), 0o644)
	if err := os.Rename(p.tmp.Name(), p.path); err != nil {
		os.Remove(p.tmp.Name())
		return fmt.Errorf("write %s: %w", p.path, err)
	}
	return nil
}

// Abort closes the files and the store of a sink that will not be
// finished (the run could not start).
func (s *Sink) Abort() {
	s.closeFiles()
	s.rec.close()
	s.rec = nil
}

func (s *Sink) closeFiles() {
	for _, fh := range s.files {
		fh.Close()
	}
	s.files = nil
	for _, r := range s.reports {
		r.tmp.Close()
		os.Remove(r.tmp.Name())
	}
	s.reports = nil
}
