package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/agenteval/agenteval/internal/fakellm"
)

// Test is one test of one eval file, as tests.tsv lists it.
type Test struct {
	N         int    // its line in tests.tsv, from 1: the runs' tags are av.N and ae.N
	FileIndex int    // its file's line in files.txt, from 1
	File      string // the eval file, under the exported tree
	ID        string
}

// Result is one result line of either tool, reduced to what is compared.
type Result struct {
	TestID string   `json:"test_id"`
	Score  *float64 `json:"score"`
	Status string   `json:"execution_status"`
	// Verdict is agenteval's (AgentV derives its own from the score).
	Verdict string         `json:"verdict"`
	Error   string         `json:"error"`
	Scores  []GraderResult `json:"scores"`
}

// GraderResult is one grader's score in a result.
type GraderResult struct {
	Name    string   `json:"name"`
	Type    string   `json:"type"`
	Score   *float64 `json:"score"`
	Verdict string   `json:"verdict"`
	Reason  string   `json:"reason"`
	// Assertions hold AgentV's reasons (a failed command's message).
	Assertions []struct {
		Text   string `json:"text"`
		Passed bool   `json:"passed"`
	} `json:"assertions"`
}

// readLines reads a JSONL file into values of T, skipping lines that do
// not decode (a run header, a truncated last line). A missing file is no
// lines.
func readLines[T any](path string, keep func(*T) bool) ([]T, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	defer f.Close()
	var out []T
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 256<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var v T
		if json.Unmarshal(line, &v) != nil {
			continue
		}
		if keep == nil || keep(&v) {
			out = append(out, v)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return out, nil
}

func hasTestID(r *Result) bool { return r.TestID != "" }

// agentvResults reads the results of an AgentV run: OUT/index.jsonl, or
// OUT/.internal/index.jsonl where AgentV 5 writes it.
func agentvResults(out string) ([]Result, error) {
	rs, err := readLines(filepath.Join(out, "index.jsonl"), hasTestID)
	if err != nil || rs != nil {
		return rs, err
	}
	return readLines(filepath.Join(out, ".internal", "index.jsonl"), hasTestID)
}

// agentevalResults reads the results of an agenteval run.
func agentevalResults(out string) ([]Result, error) {
	return readLines(out, hasTestID)
}

// readFiles reads files.txt.
func readFiles(dir string) ([]string, error) {
	b, err := os.ReadFile(filepath.Join(dir, "files.txt"))
	if err != nil {
		return nil, fmt.Errorf("the eval files: %w", err)
	}
	return strings.Fields(string(b)), nil
}

// listTests is every (file, test id) that either tool ran when it ran the
// file whole, in file order, AgentV's order first.
func listTests(dir string) ([]Test, error) {
	files, err := readFiles(dir)
	if err != nil {
		return nil, err
	}
	var tests []Test
	for i, f := range files {
		n := i + 1
		av, err := agentvResults(filepath.Join(dir, "list", fmt.Sprintf("av.%d", n)))
		if err != nil {
			return nil, err
		}
		ae, err := agentevalResults(filepath.Join(dir, "list", fmt.Sprintf("ae.%d.jsonl", n)))
		if err != nil {
			return nil, err
		}
		seen := map[string]bool{}
		for _, r := range append(av, ae...) {
			if seen[r.TestID] {
				continue
			}
			seen[r.TestID] = true
			tests = append(tests, Test{N: len(tests) + 1, FileIndex: n, File: f, ID: r.TestID})
		}
	}
	return tests, nil
}

// readTests reads tests.tsv.
func readTests(dir string) ([]Test, error) {
	b, err := os.ReadFile(filepath.Join(dir, "tests.tsv"))
	if err != nil {
		return nil, fmt.Errorf("the tests: %w", err)
	}
	var tests []Test
	for i, line := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		if line == "" {
			continue
		}
		parts := strings.SplitN(line, "\t", 3)
		if len(parts) != 3 {
			return nil, fmt.Errorf("tests.tsv:%d: want FILE-INDEX, FILE and ID separated by tabs", i+1)
		}
		fi, err := strconv.Atoi(parts[0])
		if err != nil {
			return nil, fmt.Errorf("tests.tsv:%d: file index %q: %w", i+1, parts[0], err)
		}
		tests = append(tests, Test{N: i + 1, FileIndex: fi, File: parts[1], ID: parts[2]})
	}
	return tests, nil
}

// readRequests reads fakellm's log, by tag.
func readRequests(path string) (map[string][]fakellm.LogEntry, error) {
	entries, err := readLines[fakellm.LogEntry](path, nil)
	if err != nil {
		return nil, err
	}
	byTag := map[string][]fakellm.LogEntry{}
	for _, e := range entries {
		byTag[e.Tag] = append(byTag[e.Tag], e)
	}
	return byTag, nil
}

var ansi = regexp.MustCompile(`\x1b\[[0-9;]*m`)

// firstError is the first line of a tool's output that reads as an error,
// for a run that left no result: a line that says error, else the first
// line that is not the script's own note of the exit status or AgentV's
// banner.
func firstError(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	var first string
	for _, line := range strings.Split(ansi.ReplaceAllString(string(b), ""), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || exitNote.MatchString(line) || strings.HasPrefix(line, "Artifact directory:") || notice.MatchString(line) {
			continue
		}
		if strings.Contains(strings.ToLower(line), "error") {
			return line
		}
		if first == "" {
			first = line
		}
	}
	return first
}

// listError is the line of a whole-file run's output that names test id,
// or its first error.
func listError(path, id string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(ansi.ReplaceAllString(string(b), ""), "\n") {
		if strings.Contains(line, "'"+id+"'") {
			return strings.TrimSpace(line)
		}
	}
	return firstError(path)
}

var (
	exitNote = regexp.MustCompile(`^exit \d+$`)
	// notice is agenteval's note of a difference or a warning, printed at
	// the start of a run: not why a run failed.
	notice = regexp.MustCompile(`^\S+:\d+:\d+: (differs from |warning: )`)
)

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", path, err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// readSource is the normalized text of the text files under dir (each up
// to 1 MB, node_modules left out), where a test's material comes from: its
// eval file and the files that it references.
func readSource(dir string) string {
	var b strings.Builder
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			if d.Name() == "node_modules" || d.Name() == ".git" {
				return filepath.SkipDir
			}
			return nil
		}
		info, err := d.Info()
		if err != nil || info.Size() > 1<<20 {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil || bytes.IndexByte(data, 0) >= 0 {
			return nil
		}
		b.WriteString(normalize(string(data)))
		b.WriteByte('\n')
		return nil
	})
	return b.String()
}

// listedIDs are the test ids each tool listed for each file (the whole
// file's run): [file][0] AgentV's, [file][1] agenteval's.
func listedIDs(dir string, files int) ([][2]map[string]bool, error) {
	out := make([][2]map[string]bool, files)
	for i := range out {
		av, err := agentvResults(filepath.Join(dir, "list", fmt.Sprintf("av.%d", i+1)))
		if err != nil {
			return nil, err
		}
		ae, err := agentevalResults(filepath.Join(dir, "list", fmt.Sprintf("ae.%d.jsonl", i+1)))
		if err != nil {
			return nil, err
		}
		for k, rs := range [][]Result{av, ae} {
			out[i][k] = map[string]bool{}
			for _, r := range rs {
				out[i][k][r.TestID] = true
			}
		}
	}
	return out, nil
}

// onlyListedBy names the tool that alone listed id, when both listed tests
// of the file: the other calls them otherwise.
func onlyListedBy(l [2]map[string]bool, id string) string {
	if len(l[0]) == 0 || len(l[1]) == 0 || l[0][id] == l[1][id] {
		return ""
	}
	if l[0][id] {
		return "AgentV"
	}
	return "agenteval"
}
