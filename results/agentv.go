package results

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/agenteval/agenteval"
)

// AgentV (github.com/EntityProcess/agentv) keeps a run in a folder. The
// shapes below are read from its source at v4.42.4, the reference, and
// from its v5 prereleases:
//
//   - v4: DIR/index.jsonl holds one row per test and target, with
//     snake_case keys. While the run goes, each test's whole result is
//     appended as it ends (input, output, trace, trials, eval_run); when the
//     run ends the file is written again as a manifest whose rows hold the
//     scores and numbers, and name the test's other files by paths relative
//     to DIR (input.md, outputs/answer.md, outputs/transcript.jsonl,
//     grading.json, timing.json). A run that was killed keeps the whole
//     rows. Older rows may use camelCase keys (testId, executionStatus),
//     which AgentV still reads.
//   - v5: DIR/.internal/index.jsonl, with paths relative to DIR, a
//     samples list in every row, a variant, and the transcript in
//     transcript.json.
//
// A row carries no verdict. AgentV decides one when the test ends and
// records it as execution_status (see agentvVerdict). Both writers of this
// package's own results always write "verdict", so a row without that key
// but with AgentV's keys is AgentV's (agentvShape).

// agentvIndexName is the file AgentV writes a run's rows to.
const agentvIndexName = "index.jsonl"

// runSearchDepth is how many folders below the one given FindRunIndex
// looks for a run: enough for .agentv/results/runs/EXPERIMENT/RUN/.internal
// given the project's .agentv, not so many that a project's root is read
// whole.
const runSearchDepth = 6

// agentvDefaultThreshold is the score at or above which AgentV counts a
// test or grader as passed when nothing else is set (its DEFAULT_THRESHOLD).
const agentvDefaultThreshold = 0.8

// ErrNoRun marks a folder that holds no results file.
var ErrNoRun = errors.New("no run here")

// noRunError is FindRunIndex's error for a folder without a run, which is
// ErrNoRun.
type noRunError string

func (e noRunError) Error() string        { return string(e) }
func (e noRunError) Is(target error) bool { return target == ErrNoRun }

// FindRunIndex returns the results file to read for path: path itself
// when it is a file, or, for an AgentV run folder, its index.jsonl (v4:
// DIR/index.jsonl; v5: DIR/.internal/index.jsonl; or the one run folder
// below DIR that has one, at most runSearchDepth folders down, as in
// .agentv/results/runs/EXPERIMENT/RUN). A folder with none, or with
// several runs, is an error that says what to give instead.
func FindRunIndex(path string) (string, error) {
	st, err := os.Stat(path)
	if err != nil || !st.IsDir() {
		return path, nil
	}
	for _, p := range []string{filepath.Join(path, agentvIndexName), filepath.Join(path, ".internal", agentvIndexName)} {
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return p, nil
		}
	}
	var found []string
	base := strings.Count(filepath.Clean(path), string(filepath.Separator))
	err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // an unreadable folder holds no run we could read
		}
		if d.IsDir() {
			if p != path && (d.Name() == "node_modules" || d.Name() == ".git") ||
				strings.Count(filepath.Clean(p), string(filepath.Separator))-base >= runSearchDepth {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Name() == agentvIndexName {
			found = append(found, p)
		}
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	switch len(found) {
	case 0:
		return "", noRunError(path + " is a folder without a results file: give a results JSONL file, or an AgentV run folder (one that holds index.jsonl)")
	case 1:
		return found[0], nil
	}
	sort.Strings(found)
	return "", fmt.Errorf("%s holds %d AgentV runs (%s); give one run's folder or its index.jsonl", path, len(found), strings.Join(found, ", "))
}

// Difference is something of an AgentV results file that agenteval cannot
// read with AgentV's exact meaning: where it is, and what differs. A
// difference is told once per file, at the first line that has it, with
// how many lines have it.
type Difference struct {
	File  string `json:"file"`
	Line  int    `json:"line"`
	Lines int    `json:"lines"`
	Msg   string `json:"message"`
}

// String is "file:line: differs from AgentV: msg", with the count of
// further lines that have it.
func (d Difference) String() string {
	s := fmt.Sprintf("%s:%d: differs from AgentV: %s", d.File, d.Line, d.Msg)
	switch d.Lines {
	case 0, 1:
	case 2:
		s += " (and 1 more line)"
	default:
		s += fmt.Sprintf(" (and %d more lines)", d.Lines-1)
	}
	return s
}

// Differences lists, by line, what the rows read so far from an AgentV
// results file could not be read with AgentV's meaning. It is empty for
// agenteval's own results.
func (rd *Reader) Differences() []Difference { return rd.notes.list() }

// AgentVDifferences reads the results file at path (see FindRunIndex for
// folders) and returns what of it differs from AgentV's meaning; nil, at
// once, when its first row is not AgentV's, so that it costs nothing on
// agenteval's own files. The commands that read results print these
// before what they write.
func AgentVDifferences(path string) ([]Difference, error) {
	rd, closeFile, err := OpenResults(path)
	if err != nil {
		return nil, err
	}
	defer closeFile()
	if rd.peeked == nil {
		return nil, nil
	}
	if _, ok := agentvShape(rd.peeked.raw); !ok {
		return nil, nil
	}
	for {
		_, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return rd.Differences(), err
		}
	}
	return rd.Differences(), nil
}

// notes gathers the differences of one file; rows are decoded on several
// goroutines at once.
type notes struct {
	mu     sync.Mutex
	file   string
	byKind map[string]*Difference
	lines  map[string]map[int]bool // the lines of each kind, counted once
}

// add records a difference of the given kind at a line. Only the first
// line's message is kept; later lines count.
func (n *notes) add(line int, kind, format string, args ...any) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.byKind == nil {
		n.byKind = map[string]*Difference{}
		n.lines = map[string]map[int]bool{}
	}
	if n.lines[kind] == nil {
		n.lines[kind] = map[int]bool{}
	}
	n.lines[kind][line] = true
	if d := n.byKind[kind]; d != nil {
		d.Lines = len(n.lines[kind])
		if line < d.Line {
			// Rows are decoded out of order: the first line tells it.
			d.Line, d.Msg = line, fmt.Sprintf(format, args...)
		}
		return
	}
	n.byKind[kind] = &Difference{File: n.file, Line: line, Lines: 1, Msg: fmt.Sprintf(format, args...)}
}

func (n *notes) list() []Difference {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := make([]Difference, 0, len(n.byKind))
	for _, d := range n.byKind {
		out = append(out, *d)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Line != out[j].Line {
			return out[i].Line < out[j].Line
		}
		return out[i].Msg < out[j].Msg
	})
	return out
}

// agentvMarkers are keys of AgentV's rows that agenteval's own results
// never have at their top level.
var agentvMarkers = []string{"timestamp", "execution_status", "token_usage", "grading_path", "eval_run", "assertions", "trace", "samples", "cost_usd"}

// agentvShape reports whether a line is an AgentV result row, and returns
// its top-level keys when it is: it has no "verdict" (agenteval always
// writes one), and has a test id with one of AgentV's own keys, or a
// camelCase key of AgentV's older rows.
func agentvShape(raw []byte) (map[string]json.RawMessage, bool) {
	var top map[string]json.RawMessage
	if json.Unmarshal(raw, &top) != nil {
		return nil, false
	}
	if _, ok := top["verdict"]; ok {
		return nil, false
	}
	if _, ok := top["testId"]; ok {
		return top, true
	}
	if _, ok := top["executionStatus"]; ok {
		return top, true
	}
	if _, ok := top["test_id"]; !ok {
		return nil, false
	}
	for _, k := range agentvMarkers {
		if _, ok := top[k]; ok {
			return top, true
		}
	}
	return nil, false
}

// avTokens is AgentV's token usage. Reasoning and cached tokens are parts
// of AgentV's input and output counts' neighbours, never added to its
// totals (input + output), so they are not added here either.
type avTokens struct {
	Input     float64 `json:"input"`
	Output    float64 `json:"output"`
	Cached    float64 `json:"cached"`
	Reasoning float64 `json:"reasoning"`
}

type avAssertion struct {
	Text     string `json:"text"`
	Passed   bool   `json:"passed"`
	Evidence string `json:"evidence"`
}

// avScore is one grader's result (AgentV's GraderResult, as index rows
// write it).
type avScore struct {
	Name       string         `json:"name"`
	Type       string         `json:"type"`
	Score      *float64       `json:"score"`
	Weight     *float64       `json:"weight"`
	Verdict    string         `json:"verdict"`
	Assertions []avAssertion  `json:"assertions"`
	Scores     []avScore      `json:"scores"`
	Details    map[string]any `json:"details"`
	TokenUsage *avTokens      `json:"token_usage"`
	DurationMS *float64       `json:"duration_ms"`
}

// avScoreKeys are the keys of a grader's result that are read, or left
// out on purpose: the judge's prompt (input, raw_request), the grader's
// target and clock times say how it ran, not how it scored.
var avScoreKeys = keySet("name", "type", "score", "weight", "verdict", "assertions", "scores", "details",
	"token_usage", "duration_ms", "input", "raw_request", "target", "started_at", "ended_at", "reasoning")

// avTrial is one trial: v4's trials[] entry (attempt from 0, verdict) or
// v5's samples[] entry (sample from 1, status).
type avTrial struct {
	Attempt         *int      `json:"attempt"`
	Sample          *int      `json:"sample"`
	Score           float64   `json:"score"`
	Verdict         string    `json:"verdict"`
	Status          string    `json:"status"`
	Scores          []avScore `json:"scores"`
	Error           string    `json:"error"`
	CostUSD         *float64  `json:"cost_usd"`
	ExecutionStatus string    `json:"execution_status"`
	// SamplePath is v5's folder of the sample's files, below the row's
	// result_dir.
	SamplePath string `json:"sample_path"`
}

// avRow is one row of AgentV's index.jsonl.
type avRow struct {
	Timestamp       string          `json:"timestamp"`
	TestID          *string         `json:"test_id"`
	Suite           string          `json:"suite"`
	ConversationID  string          `json:"conversation_id"`
	Score           json.RawMessage `json:"score"`
	Target          string          `json:"target"`
	TargetUsed      string          `json:"target_used"`
	Variant         string          `json:"variant"`
	TokenUsage      *avTokens       `json:"token_usage"`
	CostUSD         *float64        `json:"cost_usd"`
	DurationMS      *float64        `json:"duration_ms"`
	StartTime       string          `json:"start_time"`
	Scores          []avScore       `json:"scores"`
	Assertions      []avAssertion   `json:"assertions"`
	ExecutionStatus *string         `json:"execution_status"`
	Error           string          `json:"error"`
	FailureStage    string          `json:"failure_stage"`
	Input           json.RawMessage `json:"input"`
	Output          json.RawMessage `json:"output"`
	Trace           json.RawMessage `json:"trace"`
	Trials          []avTrial       `json:"trials"`
	Samples         []avTrial       `json:"samples"`
	EvalRun         *struct {
		DurationMS *float64  `json:"duration_ms"`
		TokenUsage *avTokens `json:"token_usage"`
	} `json:"eval_run"`
	Metadata       map[string]any  `json:"metadata"`
	Tags           json.RawMessage `json:"tags"`
	CostLimited    bool            `json:"cost_limited"`
	BudgetExceeded bool            `json:"budget_exceeded"`
	TranscriptPath string          `json:"transcript_path"`
	AnswerPath     string          `json:"answer_path"`
	OutputPath     string          `json:"output_path"`
	ResponsePath   string          `json:"response_path"`
	InputPath      string          `json:"input_path"`
	ResultDir      string          `json:"result_dir"`
}

// avRowKeys are the row keys read into a result.
var avRowKeys = keySet("timestamp", "test_id", "suite", "conversation_id", "score", "target", "target_used", "variant",
	"token_usage", "cost_usd", "duration_ms", "start_time", "scores", "assertions", "execution_status", "error", "failure_stage",
	"input", "output", "trace", "trials", "samples", "eval_run", "metadata", "tags", "cost_limited", "budget_exceeded",
	"transcript_path", "answer_path", "output_path", "response_path", "input_path", "result_dir")

// avIgnoredKeys are row keys left out on purpose: where AgentV keeps its
// other files (the grading.json and timing.json they name repeat the row's
// scores and numbers), ids and clock times of the run, and summaries that
// agenteval computes again from what it reads (aggregation is the trials'
// score).
var avIgnoredKeys = keySet("category", "experiment", "end_time", "requests", "failure_reason_code",
	"execution_error", "workspace_path", "artifact_dir", "grading_path", "timing_path", "task_dir", "eval_path",
	"targets_path", "files_path", "graders_path", "projection_identity", "export_metadata", "aggregation",
	"before_all_output", "before_each_output", "after_all_output", "after_each_output", "file_changes",
	// v5
	"named_scores", "derived_metrics", "provenance", "summary_path", "metrics_path", "transcript_raw_path",
	"file_changes_path", "environment_path", "environment", "artifact_pointers", "raw_provider_log_path", "test_dir",
	"providers_path", "external_trace", "target_error_kind", "target_execution_path", "stdout_path", "stderr_path",
	"sample_index", "retry_index", "trace_path")

func keySet(keys ...string) map[string]bool {
	m := make(map[string]bool, len(keys))
	for _, k := range keys {
		m[k] = true
	}
	return m
}

// decodeAgentV turns an AgentV row into a result, noting at the row's
// line whatever it cannot carry over with AgentV's meaning.
func (rd *Reader) decodeAgentV(ln int, top map[string]json.RawMessage) (*agenteval.Result, error) {
	n := &rd.notes
	top = snakeRow(top)
	for k := range top {
		if !avRowKeys[k] && !avIgnoredKeys[k] {
			n.add(ln, "key "+k, "key %q of this row is not read: agenteval does not know what it means", k)
		}
	}
	raw, err := json.Marshal(top)
	if err != nil {
		return nil, fmt.Errorf("%s:%d: %v", rd.name, ln, err)
	}
	var row avRow
	if err := json.Unmarshal(raw, &row); err != nil {
		return nil, fmt.Errorf("%s:%d: an AgentV result row that does not read: %v", rd.name, ln, err)
	}
	var score float64
	if err := json.Unmarshal(row.Score, &score); err != nil || len(row.Score) == 0 || math.IsNaN(score) {
		// AgentV itself refuses such a row.
		return nil, fmt.Errorf("%s:%d: an AgentV result row without a numeric score; AgentV does not read it either", rd.name, ln)
	}
	if row.TestID == nil || *row.TestID == "" {
		return nil, fmt.Errorf("%s:%d: %w: an AgentV result row without test_id", rd.name, ln, ErrNotResult)
	}
	r := &agenteval.Result{TestID: *row.TestID, Suite: row.Suite, Target: row.Target, ConversationID: row.ConversationID,
		Score: score, Error: row.Error}
	if row.Variant != "" {
		// A test of a v5 suite with variants is one row per variant, as
		// agenteval's prompt variants are one result each, named so.
		r.TestID += "@" + row.Variant
	}
	if row.TargetUsed != "" && row.TargetUsed != row.Target {
		n.add(ln, "target_used", "a fallback target (%s) answered for target %s; the result stays under %s, as AgentV keys it", row.TargetUsed, row.Target, row.Target)
	}
	r.Tags = avTags(row)
	r.Verdict, r.ExecutionStatus = rd.agentvVerdict(ln, row.ExecutionStatus, score)
	if r.Error == "" && r.Verdict == agenteval.VerdictError && row.FailureStage != "" {
		r.Error = "failed at AgentV's " + row.FailureStage + " stage"
	}
	r.Scores = rd.avScores(ln, row.Scores, r.ExecutionStatus == agenteval.StatusExecutionError)
	if len(row.Scores) == 0 && len(row.Assertions) > 0 {
		// The top-level assertions gather the graders'; a row with no
		// graders' scores (older rows) has only them, and AgentV then
		// shows them as the test's.
		sc := agenteval.Score{Name: "assertions", Type: "assertions", Score: score, Verdict: r.Verdict, Weight: 1}
		if sc.Verdict == agenteval.VerdictError {
			sc.Verdict = agenteval.VerdictFail
		}
		for _, a := range row.Assertions {
			sc.Assertions = append(sc.Assertions, agenteval.Assertion{Text: a.Text, Passed: a.Passed, Evidence: a.Evidence})
		}
		r.Scores = append(r.Scores, sc)
		rd.notes.add(ln, "assertions-only", "the row has assertions but no graders' scores; they are shown as one score named assertions, with the test's score")
	}
	rd.avTrials(ln, r, &row)
	rd.avUsage(ln, r, &row)
	r.DurationMS = rd.avDuration(ln, &row)
	r.Output = rd.avConversation(ln, &row, r.Trials)
	if row.CostLimited {
		n.add(ln, "cost_limited", "trials stopped at the suite's cost_limit_usd; the pass rate is over the trials that ran")
	}
	if row.BudgetExceeded {
		n.add(ln, "budget_exceeded", "the test did not run: the suite's budget was spent")
	}
	return r, nil
}

// agentvVerdict derives a test's verdict as AgentV does. AgentV decides
// pass or fail when the test ends, against the threshold in force for it
// (the test's execution.threshold, else the suite's, else --threshold,
// else 0.8; with trials, ok when any trial was ok), and records the
// outcome as execution_status. Its run summary and exit code then count a
// test as passed when that status is ok, as an execution error when it is
// execution_error, and as a quality failure otherwise. So: ok is pass,
// quality_failure fail, execution_error error.
//
// A row without a status (rows of old versions, hand-made baselines)
// gets the verdict its score would have had against AgentV's default
// threshold, 0.8, with a note: the test's own threshold is not in the row,
// and AgentV's reader would count such a row as ok whatever its score.
func (rd *Reader) agentvVerdict(ln int, status *string, score float64) (agenteval.Verdict, agenteval.ExecutionStatus) {
	if status != nil {
		switch agenteval.ExecutionStatus(*status) {
		case agenteval.StatusOK:
			return agenteval.VerdictPass, agenteval.StatusOK
		case agenteval.StatusQualityFailure:
			return agenteval.VerdictFail, agenteval.StatusQualityFailure
		case agenteval.StatusExecutionError:
			return agenteval.VerdictError, agenteval.StatusExecutionError
		}
		rd.notes.add(ln, "status-unknown", "execution_status %q is none of ok, quality_failure and execution_error; the verdict is the score's against 0.8, AgentV's default threshold", *status)
	} else {
		rd.notes.add(ln, "status-missing", "the row has no execution_status; the verdict is the score's against 0.8, AgentV's default threshold (a test's own threshold is not in the row, and AgentV's reader would count the row as passed whatever its score)")
	}
	v := agenteval.VerdictFor(score, agentvDefaultThreshold)
	return v, agenteval.StatusOf(v)
}

// avScores maps graders' results. AgentV marks a grader "skip" when it
// could not run (a judge whose answer did not parse, a composite whose
// members all failed), and a skipped grader makes its test an execution
// error; it also marks turns "skip" that on_turn_failure left out. The
// first is agenteval's error, the second its skip: which one is told by
// the test's status.
func (rd *Reader) avScores(ln int, in []avScore, testErrored bool) []agenteval.Score {
	if in == nil {
		return []agenteval.Score{}
	}
	out := make([]agenteval.Score, 0, len(in))
	for _, s := range in {
		sc := agenteval.Score{Name: s.Name, Type: s.Type, Weight: 1, Details: s.Details}
		if s.Name == "" {
			sc.Name = s.Type
		}
		if s.Weight != nil {
			sc.Weight = *s.Weight
		}
		if s.Score != nil {
			sc.Score = *s.Score
		}
		switch s.Verdict {
		case "pass":
			sc.Verdict = agenteval.VerdictPass
		case "fail":
			sc.Verdict = agenteval.VerdictFail
		case "skip":
			sc.Verdict = agenteval.VerdictSkip
			if testErrored {
				sc.Verdict = agenteval.VerdictError
				sc.Reason = "AgentV skipped the grader: it could not run"
			}
		case "":
			sc.Verdict = agenteval.VerdictFor(sc.Score, agentvDefaultThreshold)
			rd.notes.add(ln, "score-verdict-missing", "grader %s has no verdict; it is the score's against 0.8, AgentV's default threshold", sc.Name)
		default:
			sc.Verdict = agenteval.VerdictFor(sc.Score, agentvDefaultThreshold)
			rd.notes.add(ln, "score-verdict-unknown", "grader %s has verdict %q, none of pass, fail and skip; it is the score's against 0.8", sc.Name, s.Verdict)
		}
		for _, a := range s.Assertions {
			sc.Assertions = append(sc.Assertions, agenteval.Assertion{Text: a.Text, Passed: a.Passed, Evidence: a.Evidence})
		}
		if t := s.TokenUsage; t != nil && t.Input+t.Output > 0 {
			// AgentV prices no grader's calls.
			sc.Usage = &agenteval.Usage{InputTokens: int64(t.Input), OutputTokens: int64(t.Output)}
		}
		if s.DurationMS != nil {
			sc.DurationMS = *s.DurationMS
		}
		if len(s.Scores) > 0 {
			sc.Scores = rd.avScores(ln, s.Scores, testErrored)
		}
		out = append(out, sc)
	}
	return out
}

// graderTokens adds up the tokens of graders and their members, as AgentV
// adds them to a test's eval_run total.
func graderTokens(ss []avScore) (in, out float64) {
	for _, s := range ss {
		if s.TokenUsage != nil {
			in += s.TokenUsage.Input
			out += s.TokenUsage.Output
		}
		i, o := graderTokens(s.Scores)
		in, out = in+i, out+o
	}
	return in, out
}

// avTrials maps a test's trials. Each trial's verdict follows its
// execution status, as the test's does; AgentV's own trial verdict is the
// score against 0.8 whatever the test's threshold, so where the two differ
// it is said.
func (rd *Reader) avTrials(ln int, r *agenteval.Result, row *avRow) {
	in := row.Trials
	if len(in) == 0 {
		in = row.Samples
	}
	if len(in) < 2 {
		// One trial is the test itself (v5 lists it as its one sample).
		return
	}
	passed := 0
	for i, t := range in {
		tr := agenteval.Trial{Trial: i + 1, Score: t.Score, Error: t.Error}
		switch {
		case t.Sample != nil:
			tr.Trial = *t.Sample
		case t.Attempt != nil:
			tr.Trial = *t.Attempt + 1
		}
		recorded := agenteval.Verdict("")
		switch {
		case t.Verdict != "":
			recorded = agenteval.Verdict(t.Verdict)
		case t.Status == "passed":
			recorded = agenteval.VerdictPass
		case t.Status == "failed":
			recorded = agenteval.VerdictFail
		case t.Status == "skipped":
			recorded = agenteval.VerdictSkip
		}
		if t.ExecutionStatus != "" {
			st := t.ExecutionStatus
			tr.Verdict, tr.ExecutionStatus = rd.agentvVerdict(ln, &st, t.Score)
			if recorded != "" && recorded != tr.Verdict && tr.Verdict != agenteval.VerdictError {
				rd.notes.add(ln, "trial-verdict", "trial %d: AgentV's trial verdict (%s) is its score against 0.8, and its execution status (%s) is against the test's threshold; agenteval follows the status, as AgentV's test verdict does", tr.Trial, recorded, st)
			}
		} else {
			switch recorded {
			case agenteval.VerdictPass, agenteval.VerdictFail, agenteval.VerdictSkip:
				tr.Verdict = recorded
			default:
				tr.Verdict = agenteval.VerdictFor(t.Score, agentvDefaultThreshold)
			}
			tr.ExecutionStatus = agenteval.StatusOf(tr.Verdict)
		}
		tr.Scores = rd.avScores(ln, t.Scores, tr.ExecutionStatus == agenteval.StatusExecutionError)
		if t.CostUSD != nil {
			c := *t.CostUSD
			tr.Usage = &agenteval.Usage{CostUSD: &c}
		}
		if t.SamplePath != "" && row.ResultDir != "" {
			// v5 keeps each sample's transcript in its own folder.
			p := row.ResultDir + "/" + t.SamplePath + "/transcript.json"
			if b, ok := rd.avFile(ln, "transcript", p); ok {
				tr.Output, _ = rd.avTranscript(ln, p, b)
			}
		}
		if tr.Verdict == agenteval.VerdictPass {
			passed++
		}
		r.Trials = append(r.Trials, tr)
	}
	r.PassAtK = agenteval.PassAtKFor(len(r.Trials), passed)
	rd.notes.add(ln, "trial-usage", "with trials, AgentV records the tokens and time of one trial (the best), not of all; agenteval totals them over trials, so they read low here (the cost is the trials' total where each trial records its own)")
}

// avUsage sets the test's tokens and cost. agenteval's usage of a test is
// everything it spent, the graders' calls included. AgentV's token_usage
// is the agent's alone; its eval_run (in rows written while a run goes)
// adds the graders', and so do the graders' own token_usage. AgentV prices
// only the agent: with graders that used tokens, the test's cost is not
// known.
func (rd *Reader) avUsage(ln int, r *agenteval.Result, row *avRow) {
	var in, out float64
	gin, gout := graderTokens(row.Scores)
	switch {
	case row.EvalRun != nil && row.EvalRun.TokenUsage != nil:
		in, out = row.EvalRun.TokenUsage.Input, row.EvalRun.TokenUsage.Output
	default:
		if t := row.TokenUsage; t != nil {
			in, out = t.Input, t.Output
		}
		in, out = in+gin, out+gout
	}
	cost := row.CostUSD
	if len(r.Trials) > 1 {
		// The row's cost is one trial's; each trial records its own.
		var sum float64
		for _, t := range r.Trials {
			if t.Usage == nil || t.Usage.CostUSD == nil {
				sum = math.NaN()
				break
			}
			sum += *t.Usage.CostUSD
		}
		if !math.IsNaN(sum) {
			cost = &sum
		}
	}
	if in+out == 0 && cost == nil {
		return
	}
	u := &agenteval.Usage{InputTokens: int64(in), OutputTokens: int64(out)}
	if cost != nil {
		if gin+gout > 0 {
			rd.notes.add(ln, "grader-cost", "cost_usd ($%.4f) is the agent's alone: AgentV does not price its graders' calls, so the test's cost is unknown here", *cost)
		} else {
			c := *cost
			u.CostUSD = &c
		}
	}
	r.Usage = u
}

// avDuration is the test's time, grading included, as agenteval times a
// test. AgentV's duration_ms is the agent's alone; eval_run.duration_ms
// (rows written while a run goes) is the whole test's. A manifest row has
// neither that nor the graders' sum, but AgentV stamps the row when its
// graders are done, so the row's timestamp less its start_time is the
// whole test.
func (rd *Reader) avDuration(ln int, row *avRow) float64 {
	if row.EvalRun != nil && row.EvalRun.DurationMS != nil {
		return *row.EvalRun.DurationMS
	}
	if row.StartTime != "" && row.Timestamp != "" {
		start, err1 := time.Parse(time.RFC3339Nano, row.StartTime)
		end, err2 := time.Parse(time.RFC3339Nano, row.Timestamp)
		if err1 == nil && err2 == nil && !end.Before(start) {
			return float64(end.Sub(start).Microseconds()) / 1000
		}
	}
	if row.DurationMS != nil {
		rd.notes.add(ln, "duration-agent", "duration_ms is the agent's time alone; grading time is not in the row, so the test's time reads low here")
		return *row.DurationMS
	}
	rd.notes.add(ln, "duration-missing", "the row records no duration; it reads as 0 here")
	return 0
}

// avTags are the test's tags: metadata.tags (a list, v4) or tags (a
// mapping, v5, each entry as name=value, as agenteval reads v5 suites).
func avTags(row avRow) []string {
	var out []string
	if m, ok := row.Metadata["tags"].([]any); ok {
		for _, t := range m {
			if s, ok := t.(string); ok {
				out = append(out, s)
			}
		}
	}
	var tm map[string]any
	if len(row.Tags) > 0 && json.Unmarshal(row.Tags, &tm) == nil {
		keys := make([]string, 0, len(tm))
		for k := range tm {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			out = append(out, fmt.Sprintf("%s=%v", k, tm[k]))
		}
	}
	return out
}

// snakeRow renames the camelCase keys of older rows to snake_case, as
// AgentV's reader does, in the row and in the parts that hold keys of
// AgentV's own (not in metadata, details or a judge's request, whose keys
// are the user's). A key given both ways keeps its snake_case value.
func snakeRow(top map[string]json.RawMessage) map[string]json.RawMessage {
	out := make(map[string]json.RawMessage, len(top))
	for k, v := range top {
		if hasUpper(k) {
			continue
		}
		out[k] = v
	}
	for k, v := range top {
		if !hasUpper(k) {
			continue
		}
		if s := snake(k); out[s] == nil {
			out[s] = v
		}
	}
	for _, k := range []string{"scores", "trials", "samples", "trace", "eval_run", "token_usage", "input", "output"} {
		if v, ok := out[k]; ok && bytes.ContainsFunc(v, unicode.IsUpper) {
			var x any
			d := json.NewDecoder(bytes.NewReader(v))
			d.UseNumber()
			if d.Decode(&x) == nil {
				if b, err := json.Marshal(snakeDeep(x)); err == nil {
					out[k] = b
				}
			}
		}
	}
	return out
}

// snakeDeep renames camelCase keys throughout a value, except below the
// keys whose contents are not AgentV's.
func snakeDeep(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			if hasUpper(k) {
				continue
			}
			m[k] = keepOrSnake(k, e)
		}
		for k, e := range x {
			if s := snake(k); hasUpper(k) && m[s] == nil {
				m[s] = keepOrSnake(s, e)
			}
		}
		return m
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = snakeDeep(e)
		}
		return out
	}
	return v
}

func keepOrSnake(k string, v any) any {
	switch k {
	case "metadata", "details", "input", "raw_request", "arguments":
		return v
	}
	return snakeDeep(v)
}

func hasUpper(s string) bool { return strings.IndexFunc(s, unicode.IsUpper) >= 0 }

// snake is testId → test_id.
func snake(s string) string {
	var b strings.Builder
	for i, r := range s {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('_')
			}
			b.WriteRune(unicode.ToLower(r))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
