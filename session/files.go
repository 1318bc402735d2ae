package session

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/agenteval/agenteval/dataset"
	"github.com/agenteval/agenteval/internal/suggest"
	"github.com/agenteval/agenteval/internal/words"
	"github.com/agenteval/agenteval/suite"
	"go.yaml.in/yaml/v4"
)

// EvalFiles expands run's arguments: a folder stands for the eval files
// below it, and a glob (quoted, so the shell left it) for the files it
// matches. Files named outright are kept as they are, to be checked by the
// loader.
func EvalFiles(args []string) ([]string, error) {
	var out []string
	for _, a := range args {
		if st, err := os.Stat(a); err == nil && st.IsDir() {
			found, err := evalFilesIn(a)
			if err != nil {
				return nil, err
			}
			if len(found) == 0 {
				return nil, configErr("%s holds no eval file (*.yaml or *.yml with tests:, or agent_inspect JSON)", a)
			}
			out = append(out, found...)
			continue
		} else if err == nil || !strings.ContainsAny(a, "*?[") {
			// A named pipe would block the loader for good, deaf to
			// Ctrl-C: it is refused before anything reads it.
			if err := dataset.RegularFile(a); err != nil {
				return nil, configErr("%v", err)
			}
			out = append(out, a)
			continue
		}
		matches, err := filepath.Glob(a)
		if err != nil {
			return nil, configErr("%s: %v", a, err)
		}
		if len(matches) == 0 {
			return nil, configErr("%s matches no file", a)
		}
		for _, m := range matches {
			if IsEvalFile(m) {
				out = append(out, m)
			}
		}
	}
	return out, nil
}

func evalFilesIn(dir string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != dir && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules" || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		// Only regular files are read: a named pipe in the folder would
		// block the walk.
		if d.Type().IsRegular() && IsEvalFile(p) {
			out = append(out, p)
		}
		return nil
	})
	sort.Strings(out)
	return out, err
}

// IsEvalFile tells an eval file from the other files a folder of evals
// holds (the project file, targets, data, scripts): YAML whose top level
// has tests:, or agent_inspect JSON.
func IsEvalFile(p string) bool {
	name := filepath.Base(p)
	if name == "agenteval.yaml" || name == "targets.yaml" {
		return false
	}
	ext := strings.ToLower(filepath.Ext(p))
	if ext != ".yaml" && ext != ".yml" && ext != ".json" {
		return false
	}
	if st, err := os.Stat(p); err != nil || !st.Mode().IsRegular() {
		return false // a named pipe, say, which reading would block on
	}
	if ext != ".json" {
		// A large suite's tests are read a chunk at a time, not parsed
		// into one tree several times the file's size.
		if f, err := os.Open(p); err == nil {
			st, err := f.Stat()
			has := err == nil && suite.HasSplitTests(f, st.Size())
			f.Close()
			if has {
				return true
			}
		}
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return false
	}
	if ext == ".json" {
		return suite.IsInspect(data)
	}
	if !bytes.Contains(data, []byte("tests")) {
		return false
	}
	var top map[string]yaml.Node
	if yaml.Unmarshal(data, &top) != nil {
		return false
	}
	_, ok := top["tests"]
	if !ok {
		_, ok = top["scenarios"] // AgentV v5
	}
	return ok
}

// noMatch says that a filter selected nothing, and names the test ids it
// might have meant.
func noMatch(filter string, suites []*suite.Suite) string {
	var ids []string
	for _, s := range suites {
		for i := range s.NumTests() {
			ids = append(ids, s.Info(i).ID)
		}
	}
	msg := fmt.Sprintf("--filter %q matches none of the %s", filter, words.Counted(len(ids), "test"))
	if near := suggest.Nearest(filter, ids, 3); len(near) > 0 {
		msg += "; the closest ids are " + strings.Join(near, ", ")
	}
	return msg + " (the filter is a glob over test ids, such as 'book-*')"
}

// NotRecorded says, for score's dataset argument, when the file is an eval
// file of tests rather than recorded conversations, and which command
// takes it; nil when it may be a dataset (or cannot be read, which the
// reader reports). Only the file's first MiB is read.
func NotRecorded(path string) error {
	if path == "-" {
		return nil
	}
	ext := strings.ToLower(filepath.Ext(path))
	switch ext {
	case ".yaml", ".yml":
		if filepath.Base(path) == "agenteval.yaml" {
			return configErr("%s is the project file (settings for agenteval run), not recorded conversations; score reads a JSONL, JSON or trace file of conversations", path)
		}
		if IsEvalFile(path) {
			return configErr("%s is an eval file (tests to run against an agent), not recorded conversations: run it with agenteval run %s", path, path)
		}
		return configErr("%s is YAML, and score reads recorded conversations from JSONL, JSON or a trace file; an eval file of tests goes to agenteval run", path)
	case ".json", ".jsonl":
	default:
		return nil
	}
	head := fileHead(path)
	if resultsFile(head) {
		return configErr("%s", ResultsHint(path))
	}
	if ext == ".jsonl" && suite.SniffJSONL(head) == suite.JSONLTests {
		return configErr("%s holds AgentV tests (input, criteria, assertions), not recorded conversations: run it with agenteval run %s", path, path)
	}
	if ext == ".json" && suite.InspectSchema(head) != "" {
		return configErr("%s is agent_inspect test data (%s), not recorded conversations: run it with agenteval run %s", path, suite.InspectSchema(head), path)
	}
	return nil
}

// notTests says, for run's argument, when the file is not tests but
// recorded conversations (for score) or a results file, and what to do;
// "" when it may be an eval file. It reads the file's first MiB.
func notTests(path string) string {
	ext := strings.ToLower(filepath.Ext(path))
	if ext != ".jsonl" && ext != ".json" {
		return ""
	}
	head := fileHead(path)
	switch {
	case len(head) == 0:
		return ""
	case resultsFile(head):
		return ResultsHint(path)
	case ext == ".jsonl" && suite.SniffJSONL(head) == suite.JSONLSamples, ext == ".json" && suite.RecordedJSON(head):
		return fmt.Sprintf("%s holds recorded conversations (Ragas samples or OpenAI messages), not tests: score them with agenteval score %s --metric NAME", path, path)
	}
	return ""
}

// fileHead is the first MiB of a file; nil when it cannot be read.
func fileHead(path string) []byte {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	head := make([]byte, 1<<20)
	n, _ := io.ReadFull(f, head)
	return head[:n]
}

// resultsFile says whether a file's first line is a results file's: the
// run header, or a result (test_id with verdict and execution_status).
func resultsFile(head []byte) bool {
	line, _, _ := bytes.Cut(head, []byte("\n"))
	var first struct {
		Record  string  `json:"record"`
		TestID  *string `json:"test_id"`
		Verdict *string `json:"verdict"`
		Status  *string `json:"execution_status"`
	}
	if json.Unmarshal(bytes.TrimSpace(line), &first) != nil {
		return false
	}
	return first.Record == "run" || first.TestID != nil && first.Verdict != nil && first.Status != nil
}

// ResultsHint says what a results file is for, to a command given one as
// its input.
func ResultsHint(path string) string {
	return fmt.Sprintf("%s is a results file, written by agenteval run or score: see it with agenteval show %s (or report, view, compare), or run its failed tests again with agenteval run SUITE --rerun-failed %s", path, path, path)
}
