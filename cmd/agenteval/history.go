package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/compare"
	"github.com/agenteval/agenteval/report"
	"github.com/agenteval/agenteval/results"
	"github.com/agenteval/agenteval/session"
	"github.com/agenteval/agenteval/store"
)

// storeHelp says where runs are recorded, for the commands' help.
const storeHelp = `Runs are recorded in the project's store: --store, else $AGENTEVAL_STORE,
else store: in agenteval.yaml, else .agenteval/agenteval.db in the project's
root (the folder of agenteval.yaml, else the git root, else the working
directory). A store is a SQLite file's path or a postgres:// URL, which
several machines share (the shards of a run, a team's CI and laptops).`

// runRefHelp says what a RUN argument may be.
const runRefHelp = `A RUN is a run id or a prefix of one, last (the newest run), last~N (N
runs before it), a tag (agenteval tag), or a results JSONL file.`

// history is the project's store (see session.ChooseStore), opened when a command
// first needs it.
type history struct {
	e        *env
	readOnly bool
	db       store.Store
	err      error
	opened   bool
}

// newHistory is the store of a command that reads runs (readOnly), or
// tags them.
func newHistory(e *env, readOnly bool) *history { return &history{e: e, readOnly: readOnly} }

// open opens the store: read-only for commands that only read. A store
// that does not exist yet is an error that says how runs get there.
func (h *history) open() (store.Store, error) {
	if h.opened {
		return h.db, h.err
	}
	h.opened = true
	w, err := session.ChooseStore(h.e.storeFlag, "")
	if err != nil {
		h.err = err
		return nil, err
	}
	h.db, h.err = w.Open(h.readOnly)
	return h.db, h.err
}

func (h *history) close() {
	if h.db != nil {
		h.db.Close()
	}
}

// source is one run to read: from the store, or from a results file.
type source struct {
	label  string
	header *results.Header
	run    *store.Run // from the store
	path   string     // a results file
	db     store.Store
}

// results reads the run's results in order.
func (s *source) results(ctx context.Context) func(fn func(*agenteval.Result) error) error {
	return func(fn func(*agenteval.Result) error) error {
		if s.path != "" {
			_, err := results.ReadResults(s.path, fn)
			return err
		}
		return s.db.Results(ctx, s.run.ID, 0, func(_ int64, r *agenteval.Result) error { return fn(r) })
	}
}

func (s *source) input(ctx context.Context) compare.Input {
	return compare.Input{Header: s.header, Label: s.label, Results: s.results(ctx)}
}

// looksLikePath tells a file name from a run reference.
func looksLikePath(ref string) bool {
	return strings.ContainsAny(ref, `/\`) || strings.HasSuffix(ref, ".jsonl") || strings.HasSuffix(ref, ".json")
}

// resolve finds a RUN: an existing file is read as results, anything else
// is looked up in the store.
func (h *history) resolve(ctx context.Context, ref string) (*source, error) {
	if st, err := os.Stat(ref); err == nil && st.Mode().IsRegular() {
		rd, closeFile, err := results.OpenResults(ref)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", ref, err)
		}
		closeFile()
		s := &source{label: ref, path: ref, header: rd.Header()}
		return s, nil
	}
	if looksLikePath(ref) {
		return nil, fmt.Errorf("%s: no such results file", ref)
	}
	db, err := h.open()
	if err != nil {
		return nil, err
	}
	id, err := store.Resolve(ctx, db, ref)
	if err != nil {
		return nil, err
	}
	run, err := db.Run(ctx, id)
	if err != nil {
		return nil, err
	}
	label := run.ID
	if ref != run.ID && !strings.HasPrefix(run.ID, ref) {
		label = ref // a tag, or last~N: the name the user chose
	}
	return &source{label: label, header: &run.Header, run: run, db: db}, nil
}

// summarize reads a run whole into a summary, for writers that want one
// at the end.
func summarize(ctx context.Context, s *source, w report.Writer) (*results.Summary, error) {
	var sum results.Summary
	if st, ok := w.(report.Starter); ok && s.header != nil {
		if err := st.Start(s.header); err != nil {
			return nil, err
		}
	}
	err := s.results(ctx)(func(r *agenteval.Result) error {
		sum.Add(r)
		return w.Write(r)
	})
	if err != nil {
		return nil, err
	}
	if s.run != nil {
		sum.DurationMS = s.run.DurationMS
	}
	return &sum, nil
}

// findTest picks one test of a run: by id, by suite/id, or by a prefix
// that names one test.
func findTest(ctx context.Context, s *source, name string) (*agenteval.Result, error) {
	var exact, prefixed []*agenteval.Result
	err := s.results(ctx)(func(r *agenteval.Result) error {
		full := r.Suite + "/" + r.TestID
		switch {
		case r.TestID == name || full == name:
			exact = append(exact, r)
		case strings.HasPrefix(r.TestID, name) || strings.HasPrefix(full, name):
			prefixed = append(prefixed, r)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	pick := exact
	if len(pick) == 0 {
		pick = prefixed
	}
	switch len(pick) {
	case 0:
		return nil, fmt.Errorf("run %s has no test %q (agenteval show %s lists its tests)", s.label, name, s.label)
	case 1:
		return pick[0], nil
	}
	var names []string
	for _, r := range pick[:min(len(pick), 6)] {
		names = append(names, r.Suite+"/"+r.TestID)
	}
	return nil, fmt.Errorf("%q names %d tests of run %s: %s; give suite/test", name, len(pick), s.label, strings.Join(names, ", "))
}

// writeTo opens -o FILE, or stdout.
func writeTo(e *env, path string) (io.Writer, func() error, error) {
	if path == "" || path == "-" {
		return e.stdout, func() error { return nil }, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, nil, usageErr("%v", err)
	}
	return f, f.Close, nil
}
