package shard

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"sort"
	"strings"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/results"
)

// File is one shard's results file, as Check found it.
type File struct {
	Path    string
	Header  *results.Header
	Results int
}

// Merged is the checked shards of one run.
type Merged struct {
	// Header is the whole run's: the shards' run id, suites, target and
	// judge, the earliest start, and Shards set to their number.
	Header *results.Header
	// Files are the shards' files, in shard order.
	Files []File
	// Count is how many results the run has.
	Count int
	// Unchecked are the run's suite files (as the headers name them) that
	// Options.Suite did not give: their tests' verdicts were checked
	// without their pass marks (unless the run set --threshold), and the
	// shards were not checked to hold all of their tests.
	Unchecked []string
}

// Check reads the results files of a run's shards and checks that they
// make the whole run: each has a shard's header, all name the same run
// id, the same number of shards, the same suites (by content hash),
// target, judge and settings; every shard is there exactly once and holds
// all the results it was to write; no test's result is in two files; and
// each result's verdict is the one its scores give. The error lists every
// problem found, each naming its file.
func Check(paths []string) (*Merged, error) { return CheckWith(paths, Options{}) }

// CheckWith is Check, knowing the run's suite files when they are here
// (opt.Suite): then each verdict is made again from its scores and its
// test's pass mark, as the runner made it, and a test of those suites that
// no shard holds a result of is a problem, named. A shard that lost a
// result and had its header's count lowered to match would otherwise pass
// as whole.
func CheckWith(paths []string, opt Options) (*Merged, error) {
	if len(paths) == 0 {
		return nil, errors.New("no shard files given")
	}
	var problems []string
	bad := func(format string, a ...any) { problems = append(problems, fmt.Sprintf(format, a...)) }
	files := make([]File, 0, len(paths))
	seenPath := map[string]bool{}
	for _, p := range paths {
		if seenPath[p] {
			bad("%s is given twice", p)
			continue
		}
		seenPath[p] = true
		h, err := readHeader(p)
		switch {
		case err != nil:
			bad("%v", err)
		case h == nil:
			bad("%s has no run header: it was not written by agenteval run --shard", p)
		case h.Shard == nil:
			bad("%s holds a whole run (%s), not a shard of one: merge puts together the files of agenteval run --shard i/n", p, h.RunID)
		default:
			files = append(files, File{Path: p, Header: h})
		}
	}
	if len(problems) > 0 {
		return nil, joinProblems(problems)
	}
	first := files[0]
	// One run: the same id and the same number of shards.
	byRun := map[string][]string{}
	var runOrder []string
	for _, f := range files {
		id := f.Header.RunID
		if byRun[id] == nil {
			runOrder = append(runOrder, id)
		}
		byRun[id] = append(byRun[id], f.Path)
	}
	if len(byRun) > 1 {
		var groups []string
		for _, id := range runOrder {
			groups = append(groups, fmt.Sprintf("%s (%s)", id, strings.Join(byRun[id], ", ")))
		}
		bad("the files belong to %d runs: %s. Every shard of a run needs the same --run-id (in CI it comes from the pipeline's variables; a re-run of some jobs is another attempt, so give --run-id yourself, e.g. --run-id ${{ github.run_id }}, when you re-run only failed shards)",
			len(byRun), strings.Join(groups, "; "))
		return nil, joinProblems(problems)
	}
	n := first.Header.Shard.Count
	for _, f := range files[1:] {
		if c := f.Header.Shard.Count; c != n {
			bad("%s is shard %d/%d, but %s is shard %d/%d: a run is split one way", f.Path, f.Header.Shard.Index, c, first.Path, first.Header.Shard.Index, n)
		}
	}
	for _, f := range files[1:] {
		for _, d := range results.RunDiffs(first.Header, f.Header) {
			bad("%s and %s are not shards of one run: %s", first.Path, f.Path, d)
		}
	}
	if len(problems) > 0 {
		return nil, joinProblems(problems)
	}
	// Every shard exactly once.
	byIndex := map[int][]string{}
	for _, f := range files {
		byIndex[f.Header.Shard.Index] = append(byIndex[f.Header.Shard.Index], f.Path)
	}
	var missing []string
	for i := 1; i <= n; i++ {
		switch ps := byIndex[i]; {
		case len(ps) == 0:
			missing = append(missing, fmt.Sprintf("%d/%d", i, n))
		case len(ps) > 1:
			bad("shard %d/%d is given %d times: %s", i, n, len(ps), strings.Join(ps, ", "))
		}
	}
	if len(missing) > 0 {
		bad("shard %s of run %s %s missing: give every shard's results file", strings.Join(missing, ", "), first.Header.RunID, map[bool]string{true: "is", false: "are"}[len(missing) == 1])
	}
	if len(problems) > 0 {
		return nil, joinProblems(problems)
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Header.Shard.Index < files[j].Header.Shard.Index })
	ver, err := newVerifier(first.Header, opt)
	if err != nil {
		return nil, err
	}

	// Every result once, every verdict what its scores give, and every
	// shard whole.
	where := map[[16]byte]int{} // result key -> file index
	total := 0
	for i := range files {
		f := &files[i]
		dups, wrong := 0, 0
		err := readRows(f.Path, func(r *row) {
			f.Results++
			if msg := ver.check(f.Path, r); msg != "" {
				if wrong < 3 {
					bad("%s", msg)
				}
				wrong++
			}
			k := r.key
			h := k.hash()
			if j, ok := where[h]; ok {
				if dups < 3 {
					bad("%s is in both %s and %s: the shards did not split the tests alike (did they run the suites from different paths?)", k, files[j].Path, f.Path)
				}
				dups++
				return
			}
			where[h] = i
		})
		if err != nil {
			bad("%v", err)
			continue
		}
		if dups > 3 {
			bad("%s repeats %d more results of other shards", f.Path, dups-3)
		}
		if wrong > 3 {
			bad("%s holds %d more results whose verdicts are not what their scores give", f.Path, wrong-3)
		}
		if want := f.Header.Shard.Tests; f.Results != want {
			if f.Results < want {
				bad("%s (shard %s) holds %d of its %d results: it was cut short; finish it with agenteval run ... --shard %s --resume %s", f.Path, f.Header.Shard, f.Results, want, f.Header.Shard, f.Path)
			} else {
				bad("%s (shard %s) holds %d results, but its header says %d: it was written to by more than one run", f.Path, f.Header.Shard, f.Results, want)
			}
		}
		total += f.Results
	}
	if len(problems) == 0 {
		if miss := ver.missing(); len(miss) > 0 {
			more := ""
			if len(miss) > 5 {
				miss, more = miss[:5], fmt.Sprintf(" and %d more", len(miss)-5)
			}
			hint := ""
			if opt.Filter == "" {
				hint = "; if the shards ran with --filter, give merge the same --filter"
			}
			bad("the run's suites hold tests that no shard has a result of: %s%s. A shard's file lost them, though its header's count of results says it is whole%s",
				strings.Join(miss, ", "), more, hint)
		}
	}
	if len(problems) > 0 {
		return nil, joinProblems(problems)
	}
	h := *first.Header
	h.Shard, h.Shards, h.Record = nil, n, results.RecordRun
	for _, f := range files {
		if f.Header.Started.Before(h.Started) {
			h.Started = f.Header.Started
		}
	}
	return &Merged{Header: &h, Files: files, Count: total, Unchecked: ver.unchecked}, nil
}

func joinProblems(ps []string) error { return errors.New(strings.Join(ps, "\n")) }

func readHeader(path string) (*results.Header, error) {
	rd, closeFile, err := results.OpenResults(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	defer closeFile()
	return rd.Header(), nil
}

// key names a result within a run: a test, of a suite, against a target
// (a matrix runs a test once per target).
type key struct {
	TestID string `json:"test_id"`
	Suite  string `json:"suite"`
	Target string `json:"target"`
}

func (k key) String() string {
	s := k.Suite + "/" + k.TestID
	if k.Target != "" {
		s += " (target " + k.Target + ")"
	}
	return s
}

func (k key) hash() [16]byte {
	h := fnv.New128a()
	for _, s := range []string{k.Suite, k.TestID, k.Target} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	var out [16]byte
	h.Sum(out[:0])
	return out
}

// row is what Check reads of a result: what names it, and what its
// verdict is made from. The transcript, most of a result, is skipped.
type row struct {
	key
	Score           float64                   `json:"score"`
	Verdict         agenteval.Verdict         `json:"verdict"`
	ExecutionStatus agenteval.ExecutionStatus `json:"execution_status"`
	Scores          []agenteval.Score         `json:"scores"`
	Trials          []trialRow                `json:"trials"`
	Error           string                    `json:"error"`
}

// trialRow is what Check reads of one trial of a result.
type trialRow struct {
	Trial           int                       `json:"trial"`
	Score           float64                   `json:"score"`
	Verdict         agenteval.Verdict         `json:"verdict"`
	ExecutionStatus agenteval.ExecutionStatus `json:"execution_status"`
	Scores          []agenteval.Score         `json:"scores"`
	Error           string                    `json:"error"`
}

// readRows reads each result's row, which is much faster than decoding
// the whole result.
func readRows(path string, fn func(*row)) error {
	rd, closeFile, err := results.OpenResults(path)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	defer closeFile()
	for {
		ln, raw, err := rd.NextRow()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		var r row
		if err := json.Unmarshal(raw, &r); err != nil || r.TestID == "" {
			return fmt.Errorf("%s:%d: not a result (%s)", path, ln, firstLine(err))
		}
		fn(&r)
	}
	if cut, _ := rd.Cut(); cut {
		return fmt.Errorf("%s ends in a cut-off line: its shard was killed while writing; finish it with --resume %s", path, path)
	}
	return nil
}

func firstLine(err error) string {
	if err == nil {
		return "no test_id"
	}
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}

// Results calls fn with every result of the run, shard by shard, each
// shard's in the order it wrote them, with the result's line as written.
func (m *Merged) Results(fn func(r *agenteval.Result, line []byte) error) error {
	for _, f := range m.Files {
		if _, err := results.ReadResultLines(f.Path, fn); err != nil {
			return err
		}
	}
	return nil
}
