package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
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
runs before it), a tag (agenteval tag), a results JSONL file, or an AgentV
run folder or its index.jsonl.`

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
// that does not exist yet is an error that says how runs get there, for
// tag too: a tag names a stored run, so a store made for it would only
// leave an empty file behind in whatever folder tag was run.
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
	if !h.readOnly && storeMissing(w) {
		h.err = noStoreYet(w)
		return nil, h.err
	}
	h.db, h.err = w.Open(h.readOnly)
	return h.db, h.err
}

// storeMissing reports whether a store does not exist yet: no SQLite file,
// or a database without agenteval's schema. It opens it read-only to ask,
// so nothing is created; a store that exists but cannot be read that way
// (an older schema, which a writable open upgrades) is not missing.
func storeMissing(w session.StoreRef) bool {
	db, err := w.Open(true)
	if err != nil {
		return errors.Is(err, store.ErrNotFound)
	}
	db.Close()
	return false
}

// noStoreYet is the error of a command that needs runs from a store that
// does not exist yet: it says how runs get there.
func noStoreYet(w session.StoreRef) error {
	run := "agenteval run"
	if w.From == "--store" {
		run += " --store " + w.Name()
	}
	return fmt.Errorf("no runs are stored in %s yet: %s records every run there", w.Name(), run)
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
	// An AgentV run folder stands for its index.jsonl.
	if p, err := results.FindRunIndex(ref); err == nil {
		ref = p
	} else if looksLikePath(ref) || !errors.Is(err, results.ErrNoRun) {
		return nil, err
	}
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
// at the end. The run is read back, not watched: the writers list its
// results in the suite's order, on a terminal too, so that show and
// report print two runs of a suite alike however their tests finished.
func summarize(ctx context.Context, s *source, w report.Writer) (*results.Summary, error) {
	var sum results.Summary
	report.InOrder(w)
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

// headerlessTargets lists the targets of a run read from a results file
// without a header line, where the table cannot learn them from the
// header; nil when the header is there.
func headerlessTargets(ctx context.Context, s *source) []string {
	if s.header != nil {
		return nil
	}
	var ts []string
	s.results(ctx)(func(r *agenteval.Result) error {
		ts = append(ts, r.Target)
		return nil
	})
	return uniq(ts)
}

// findTest picks one test of a run: by id, by suite/id, or by a prefix
// that names one test; and, in a run of several targets, on the target
// given (any when target is ""). A test that ran on several targets is
// ambiguous without one: the error lists them.
func findTest(ctx context.Context, s *source, name, target string) (*agenteval.Result, error) {
	var exact, prefixed picked
	// The targets each matching test ran on, whatever --target says:
	// those named exactly, and those named by a prefix.
	exactOn, prefixOn := map[string][]string{}, map[string][]string{}
	err := s.results(ctx)(func(r *agenteval.Result) error {
		full := r.Suite + "/" + r.TestID
		match := r.TestID == name || full == name
		switch {
		case match:
			exactOn[full] = append(exactOn[full], r.Target)
		case strings.HasPrefix(r.TestID, name) || strings.HasPrefix(full, name):
			prefixOn[full] = append(prefixOn[full], r.Target)
		default:
			return nil
		}
		switch {
		case target != "" && r.Target != target:
		case match:
			exact.add(r)
		default:
			prefixed.add(r)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	// A test named exactly is never traded for another that its name
	// begins, even when it did not run on the target asked for.
	pick, ranOn := exact.rs, exactOn
	if len(exactOn) == 0 {
		pick, ranOn = prefixed.rs, prefixOn
	}
	var names []string
	seen := map[string]bool{}
	for _, r := range pick {
		if n := r.Suite + "/" + r.TestID; !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	switch {
	case len(pick) == 0 && target != "" && len(ranOn) > 0:
		var tests []string
		for full, ts := range ranOn {
			tests = append(tests, fmt.Sprintf("%s on %s", full, strings.Join(uniq(ts), ", ")))
		}
		sort.Strings(tests)
		return nil, fmt.Errorf("run %s has no test %q on target %s; it ran %s", s.label, name, target, strings.Join(tests[:min(len(tests), 6)], "; "))
	case len(pick) == 0:
		return nil, fmt.Errorf("run %s has no test %q (agenteval show %s lists its tests)", s.label, name, s.label)
	case len(pick) == 1:
		return pick[0], nil
	case len(names) == 1:
		var targets []string
		for _, r := range pick {
			targets = append(targets, r.Target)
		}
		return nil, fmt.Errorf("%s ran on %d targets in run %s: %s; pick one with --target NAME", names[0], len(pick), s.label, strings.Join(targets, ", "))
	}
	more := ""
	if len(names) > 6 {
		names, more = names[:6], ", …"
	}
	return nil, fmt.Errorf("%q names %d tests of run %s: %s%s; give suite/test", name, len(seen), s.label, strings.Join(names, ", "), more)
}

// picked gathers results, one per test and target: a file may repeat a
// test it ran again, and the later result counts.
type picked struct {
	rs []*agenteval.Result
	at map[[3]string]int
}

func (p *picked) add(r *agenteval.Result) {
	k := [3]string{r.Suite, r.TestID, r.Target}
	if i, ok := p.at[k]; ok {
		p.rs[i] = r
		return
	}
	if p.at == nil {
		p.at = map[[3]string]int{}
	}
	p.at[k] = len(p.rs)
	p.rs = append(p.rs, r)
}

func uniq(ss []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range ss {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
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
