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
}

// Check reads the results files of a run's shards and checks that they
// make the whole run: each has a shard's header, all name the same run
// id, the same number of shards, the same suites (by content hash),
// target, judge and settings; every shard is there exactly once and holds
// all the results it was to write; and no test's result is in two files.
// The error lists every problem found, each naming its file.
func Check(paths []string) (*Merged, error) {
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

	// Every result once, and every shard whole.
	where := map[[16]byte]int{} // result key -> file index
	total := 0
	for i := range files {
		f := &files[i]
		dups := 0
		err := readKeys(f.Path, func(k key) {
			f.Results++
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
		if want := f.Header.Shard.Tests; f.Results != want {
			if f.Results < want {
				bad("%s (shard %s) holds %d of its %d results: it was cut short; finish it with agenteval run ... --shard %s --resume %s", f.Path, f.Header.Shard, f.Results, want, f.Header.Shard, f.Path)
			} else {
				bad("%s (shard %s) holds %d results, but its header says %d: it was written to by more than one run", f.Path, f.Header.Shard, f.Results, want)
			}
		}
		total += f.Results
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
	return &Merged{Header: &h, Files: files, Count: total}, nil
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

// readKeys reads only what names each result, which is much faster than
// decoding them.
func readKeys(path string, fn func(key)) error {
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
		var k key
		if err := json.Unmarshal(raw, &k); err != nil || k.TestID == "" {
			return fmt.Errorf("%s:%d: not a result (%s)", path, ln, firstLine(err))
		}
		fn(k)
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
