package results

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agenteval/agenteval"
	"github.com/google/go-cmp/cmp"
)

// The folders under testdata/agentv are real output of AgentV 4.42.4
// (agentv eval against agenteval fakellm), with the judge's prompt text
// left out of the rows: run1 (a run to its end: the manifest and each
// test's files), matrix (two targets; AgentV writes both targets' files
// into one folder, so they were left out), errors (an agent that cannot
// be reached), graderfail (a judge whose answer does not parse), and
// streamed*.jsonl (rows as AgentV appends them while a run goes, from
// runs that were killed; one with three trials). v5run is written by hand
// in the shape of AgentV's v5 source (run-artifacts.ts at its head), as no
// v5 release is published.

// summarize renders a result on one line, with what a reader of AgentV's
// results must get right.
func summarize(r *agenteval.Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s/%s@%s %s %s score=%g", r.Suite, r.TestID, r.Target, r.Verdict, r.ExecutionStatus, r.Score)
	if u := r.Usage; u != nil {
		fmt.Fprintf(&b, " tokens=%d+%d", u.InputTokens, u.OutputTokens)
		if u.CostUSD != nil {
			fmt.Fprintf(&b, " cost=%g", *u.CostUSD)
		}
	}
	fmt.Fprintf(&b, " ms=%g", r.DurationMS)
	if len(r.Tags) > 0 {
		fmt.Fprintf(&b, " tags=%s", strings.Join(r.Tags, ","))
	}
	for _, s := range r.Scores {
		fmt.Fprintf(&b, "\n  score %s (%s) %s %g w=%g", s.Name, s.Type, s.Verdict, s.Score, s.Weight)
		if s.Usage != nil {
			fmt.Fprintf(&b, " tokens=%d+%d", s.Usage.InputTokens, s.Usage.OutputTokens)
		}
		for _, a := range s.Assertions {
			fmt.Fprintf(&b, "\n    %v %s", a.Passed, a.Text)
		}
	}
	for _, t := range r.Trials {
		fmt.Fprintf(&b, "\n  trial %d %s %s %g messages=%d", t.Trial, t.Verdict, t.ExecutionStatus, t.Score, len(t.Output))
	}
	if len(r.PassAtK) > 0 {
		fmt.Fprintf(&b, "\n  pass@1=%.2f pass^%d=%.2f", r.PassAtK[0].PassAtK, len(r.PassAtK), r.PassAtK[len(r.PassAtK)-1].PassHatK)
	}
	for _, m := range r.Output {
		fmt.Fprintf(&b, "\n  %s: %q", m.Role, m.Content)
		for _, c := range m.ToolCalls {
			fmt.Fprintf(&b, " call %s %s(%s)", c.ID, c.Name, c.ArgsText())
		}
		if m.ToolCallID != "" {
			fmt.Fprintf(&b, " answers %s", m.ToolCallID)
		}
		if rs, ok := m.Metadata["reasoning"]; ok {
			fmt.Fprintf(&b, " reasoning %q", rs)
		}
	}
	if r.Error != "" {
		fmt.Fprintf(&b, "\n  error: %s", r.Error)
	}
	return b.String()
}

// TestAgentVRuns reads AgentV's own runs and checks every result against
// a golden file (UPDATE_GOLDEN=1 rewrites it): verdicts as AgentV counted
// them in its summary (run1: 3 passed, 2 quality failures; errors and
// graderfail: 1 execution error each), tokens with the graders', and each
// test's conversation from its files.
func TestAgentVRuns(t *testing.T) {
	var out strings.Builder
	for _, p := range []string{"run1", "matrix", "errors", "graderfail", "streamed.jsonl", "streamed-trials.jsonl", "v5run"} {
		path := filepath.Join("testdata", "agentv", p)
		fmt.Fprintf(&out, "== %s\n", p)
		var sum Summary
		h, err := ReadResults(path, func(r *agenteval.Result) error {
			sum.Add(r)
			out.WriteString(summarize(r) + "\n")
			return nil
		})
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if h != nil {
			t.Errorf("%s: an AgentV run has no header, got %+v", p, h)
		}
		fmt.Fprintf(&out, "total %d: %d passed, %d failed, %d errors\n", sum.Total, sum.Passed, sum.Failed, sum.Errored)
		ds, err := AgentVDifferences(path)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		for _, d := range ds {
			out.WriteString(strings.ReplaceAll(d.String(), string(filepath.Separator), "/") + "\n")
		}
	}
	golden(t, filepath.Join("testdata", "agentv", "read.golden"), out.String())
}

func golden(t *testing.T, path, got string) {
	t.Helper()
	if os.Getenv("UPDATE_GOLDEN") != "" {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (UPDATE_GOLDEN=1 writes it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s (-want +got; UPDATE_GOLDEN=1 rewrites it):\n%s", path, diff)
	}
}

// TestAgentVRows reads single rows in AgentV's shapes, each with what it
// must become and what must be said about it.
func TestAgentVRows(t *testing.T) {
	for _, tc := range []struct {
		name, row string
		want      string   // summarize's first line
		lines     []string // more lines summarize must hold
		notes     []string // parts of the differences, one each
		err       string
	}{
		{
			name:  "no status, passing score",
			row:   `{"timestamp":"2026-02-20T21:38:00.970Z","test_id":"regex-check","suite":"dataset","score":0.85,"target":"default","scores":[{"name":"regex","type":"regex","score":0.85,"weight":1,"verdict":"pass","assertions":[]}]}`,
			want:  "dataset/regex-check@default pass ok score=0.85 ms=0",
			notes: []string{"no execution_status; the verdict is the score's against 0.8", "records no duration", "records no conversation"},
		},
		{
			name:  "no status, failing score",
			row:   `{"timestamp":"2026-03-01T10:00:00.000Z","test_id":"tool-selection","suite":"code-review","target":"gpt-5","score":0.79}`,
			want:  "code-review/tool-selection@gpt-5 fail quality_failure score=0.79 ms=0",
			notes: []string{"no execution_status", "records no duration", "records no conversation"},
		},
		{
			name:  "the status decides, not the score",
			row:   `{"timestamp":"t","test_id":"a","score":0.5,"target":"x","execution_status":"ok","duration_ms":5}`,
			want:  "/a@x pass ok score=0.5 ms=5",
			notes: []string{"duration_ms is the agent's time alone", "records no conversation"},
		},
		{
			name:  "an unknown status",
			row:   `{"test_id":"a","score":0.9,"execution_status":"flaky","timestamp":"t"}`,
			want:  "/a@ pass ok score=0.9 ms=0",
			notes: []string{`execution_status "flaky" is none of`, "records no duration", "records no conversation"},
		},
		{
			name:  "camelCase keys of older rows",
			row:   `{"testId":"wtg-replay-fail","target":"codex","score":0.4,"executionStatus":"quality_failure","durationMs":1234,"tokenUsage":{"input":10,"output":5},"costUsd":0.012,"trace":{"eventCount":1,"toolCalls":{"rg":1},"errorCount":0}}`,
			want:  "/wtg-replay-fail@codex fail quality_failure score=0.4 tokens=10+5 cost=0.012 ms=1234",
			notes: []string{"duration_ms is the agent's time alone", "records no conversation"},
		},
		{
			name: "a row written while the run went: output text, input, trace, eval_run",
			row: `{"timestamp":"2026-11-28T04:30:35.585Z","test_id":"t","suite":"s","score":1,"target":"fake","token_usage":{"input":67,"output":6},"duration_ms":3066,"start_time":"2026-11-28T04:30:32.518Z",` +
				`"input":[{"role":"user","content":"Say anything"}],"output":"This is a fake reply.","scores":[{"name":"j","type":"llm-grader","score":1,"weight":1,"verdict":"pass","assertions":[],"token_usage":{"input":300,"output":20}}],` +
				`"execution_status":"ok","eval_run":{"duration_ms":3100,"token_usage":{"input":367,"output":26}}}`,
			want:  "s/t@fake pass ok score=1 tokens=367+26 ms=3100",
			lines: []string{`  user: "Say anything"`, `  assistant: "This is a fake reply."`},
		},
		{
			name: "tool calls keep their output in the call",
			row: `{"timestamp":"t","test_id":"t","score":1,"target":"a","execution_status":"ok","duration_ms":1,"trace":{"messages":[` +
				`{"role":"user","content":[{"type":"text","text":"Find it"},{"type":"image","media_type":"image/png","source":"data:image/png;base64,AA"}]},` +
				`{"role":"assistant","content":"","tool_calls":[{"tool":"search","input":{"q":"x"},"output":{"hits":1},"id":"c1","duration_ms":4},{"tool":"open","input":"{\"n\":1}","output":"page"}]},` +
				`{"role":"assistant","content":"Done"}]}}`,
			want: "/t@a pass ok score=1 ms=1",
			lines: []string{`  user: "Find it"`, `  assistant: "" call c1 search({"q":"x"}) call call_2 open({"n":1})`,
				`  tool: "{\"hits\":1}" answers c1`, `  tool: "page" answers call_2`, `  assistant: "Done"`},
			notes: []string{"duration_ms is the agent's time alone"},
		},
		{
			name:  "graders' tokens make the cost unknown",
			row:   `{"timestamp":"2026-01-01T00:00:01Z","start_time":"2026-01-01T00:00:00Z","test_id":"t","score":1,"target":"a","execution_status":"ok","token_usage":{"input":10,"output":5},"cost_usd":0.5,"scores":[{"name":"j","type":"llm-grader","score":1,"verdict":"pass","assertions":[],"scores":[{"name":"k","type":"llm-grader","score":1,"verdict":"pass","assertions":[],"token_usage":{"input":7,"output":3}}],"token_usage":{"input":100,"output":10}}]}`,
			want:  "/t@a pass ok score=1 tokens=117+18 ms=1000",
			lines: []string{"  score j (llm-grader) pass 1 w=1 tokens=100+10"},
			notes: []string{"cost_usd ($0.5000) is the agent's alone", "records no conversation"},
		},
		{
			name:  "a skipped grader of a test in error could not run",
			row:   `{"timestamp":"t","test_id":"t","score":0,"target":"a","execution_status":"execution_error","error":"j: parse failure","scores":[{"name":"j","type":"llm-grader","score":0,"weight":1,"verdict":"skip","assertions":[{"text":"parse failure","passed":false}]}]}`,
			want:  "/t@a error execution_error score=0 ms=0",
			lines: []string{"  score j (llm-grader) error 0 w=1", "  error: j: parse failure"},
			notes: []string{"records no duration", "records no conversation"},
		},
		{
			name:  "a skipped turn of a test that ran is a skip",
			row:   `{"timestamp":"t","test_id":"t","score":0.5,"target":"a","execution_status":"quality_failure","scores":[{"name":"turn-1","type":"rubrics","score":1,"verdict":"pass","assertions":[]},{"name":"turn-2","type":"rubrics","score":0,"verdict":"skip","assertions":[]},{"name":"w","type":"contains","score":0,"weight":0,"assertions":[]}]}`,
			want:  "/t@a fail quality_failure score=0.5 ms=0",
			lines: []string{"  score turn-2 (rubrics) skip 0 w=1", "  score w (contains) fail 0 w=0"},
			notes: []string{"grader w has no verdict", "records no duration", "records no conversation"},
		},
		{
			name:  "assertions without graders' scores",
			row:   `{"timestamp":"t","test_id":"t","score":0.5,"target":"a","execution_status":"quality_failure","duration_ms":1,"output":"x","assertions":[{"text":"has x","passed":true},{"text":"has y","passed":false,"evidence":"no y"}]}`,
			want:  "/t@a fail quality_failure score=0.5 ms=1",
			lines: []string{"  score assertions (assertions) fail 0.5 w=1", "    false has y"},
			notes: []string{"assertions but no graders' scores", "duration_ms is the agent's time alone"},
		},
		{
			name:  "a key agenteval does not know",
			row:   `{"timestamp":"t","test_id":"t","score":1,"target":"a","execution_status":"ok","shiny_new_field":1,"category":"c","projection_identity":{}}`,
			want:  "/t@a pass ok score=1 ms=0",
			notes: []string{`key "shiny_new_field" of this row is not read`, "records no duration", "records no conversation"},
		},
		{
			name:  "v5 variant, tags and a fallback target",
			row:   `{"timestamp":"t","test_id":"t","score":1,"target":"a","target_used":"b","variant":"long","tags":{"team":"x","tier":2},"metadata":{"tags":["smoke"]},"execution_status":"ok"}`,
			want:  "/t@long@a pass ok score=1 ms=0 tags=smoke,team=x,tier=2",
			notes: []string{"a fallback target (b) answered for target a", "records no duration", "records no conversation"},
		},
		{
			name: "trials: verdicts follow each trial's status",
			row: `{"timestamp":"t","test_id":"t","score":0.6,"target":"a","execution_status":"ok","trials":[` +
				`{"attempt":0,"score":0.2,"verdict":"fail","execution_status":"quality_failure"},{"attempt":1,"score":0.6,"verdict":"fail","execution_status":"ok"},{"attempt":2,"score":0.1,"verdict":"fail","execution_status":"execution_error","error":"boom"}],"aggregation":{"strategy":"pass_at_k","passed_attempts":1,"total_attempts":3}}`,
			want:  "/t@a pass ok score=0.6 ms=0",
			lines: []string{"  trial 1 fail quality_failure 0.2", "  trial 2 pass ok 0.6", "  trial 3 error execution_error 0.1", "  pass@1=0.33 pass^3=0.00"},
			notes: []string{"trial 2: AgentV's trial verdict (fail)", "tokens and time of one trial", "records no duration"},
		},
		{
			name: "a row without a score is refused, as AgentV refuses it",
			row:  `{"timestamp":"t","test_id":"t","target":"a","execution_status":"ok"}`,
			err:  "r.jsonl:1: an AgentV result row without a numeric score",
		},
		{
			name:  "files named by a row read from a stream",
			row:   `{"timestamp":"t","test_id":"t","score":1,"target":"a","execution_status":"ok","transcript_path":"t/outputs/transcript.jsonl"}`,
			want:  "/t@a pass ok score=1 ms=0",
			notes: []string{"the transcript is in t/outputs/transcript.jsonl, which is not read: the results came without their folder", "records no duration"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rd := NewReader(strings.NewReader(tc.row+"\n"), "r.jsonl")
			r, err := rd.Next()
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := summarize(r)
			if first, _, _ := strings.Cut(got, "\n"); first != tc.want {
				t.Errorf("got  %s\nwant %s", first, tc.want)
			}
			for _, l := range tc.lines {
				if !strings.Contains(got, "\n"+l) {
					t.Errorf("no line %q in\n%s", l, got)
				}
			}
			ds := rd.Differences()
			if len(ds) != len(tc.notes) {
				t.Errorf("%d differences, want %d:\n%v", len(ds), len(tc.notes), ds)
			}
			for _, n := range tc.notes {
				found := false
				for _, d := range ds {
					found = found || strings.Contains(d.String(), n)
				}
				if !found {
					t.Errorf("no difference says %q:\n%v", n, ds)
				}
			}
			for _, d := range ds {
				if !strings.HasPrefix(d.String(), "r.jsonl:1: differs from AgentV: ") {
					t.Errorf("difference %q does not name its place", d)
				}
			}
		})
	}
}

// Rows that are agenteval's stay agenteval's, with no differences, even
// those of tests written by hand without a verdict.
func TestAgentVNotOurRows(t *testing.T) {
	in := `{"test_id":"a","score":1}` + "\n" + `{"test_id":"b","verdict":"fail","execution_status":"quality_failure","scores":[{"name":"x","verdict":"skip"}]}` + "\n"
	rd := NewReader(strings.NewReader(in), "r.jsonl")
	var got []string
	for {
		r, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(r.Verdict)+":"+r.TestID)
	}
	if want := []string{":a", "fail:b"}; !cmp.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if ds := rd.Differences(); len(ds) != 0 {
		t.Errorf("differences of our own rows: %v", ds)
	}
	p := filepath.Join(t.TempDir(), "ours.jsonl")
	os.WriteFile(p, []byte(in), 0o644)
	if ds, err := AgentVDifferences(p); ds != nil || err != nil {
		t.Errorf("AgentVDifferences of our own file = %v, %v", ds, err)
	}
}

// ReadResultLines hands a row of AgentV's over as agenteval's line, which
// the HTML report and merge copy as they are.
func TestAgentVLines(t *testing.T) {
	n := 0
	_, err := ReadResultLines(filepath.Join("testdata", "agentv", "run1"), func(r *agenteval.Result, line []byte) error {
		n++
		var back agenteval.Result
		if err := json.Unmarshal(line, &back); err != nil {
			return err
		}
		if back.Verdict == "" || back.TestID != r.TestID || len(back.Output) != len(r.Output) {
			t.Errorf("line %s is not the result %s", line, r.TestID)
		}
		return nil
	})
	if err != nil || n != 5 {
		t.Fatalf("read %d results, err %v; want 5", n, err)
	}
}

// A row may name only files of its own run's folder.
func TestAgentVFilesStayInTheRun(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "secret.txt"), []byte("do not show"), 0o644)
	run := filepath.Join(dir, "run")
	os.MkdirAll(run, 0o755)
	os.WriteFile(filepath.Join(run, "index.jsonl"), []byte(`{"timestamp":"t","test_id":"t","score":1,"target":"a","execution_status":"ok","answer_path":"../secret.txt"}`+"\n"), 0o644)
	rd, closeFile, err := OpenResults(run)
	if err != nil {
		t.Fatal(err)
	}
	defer closeFile()
	r, err := rd.Next()
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Output) != 0 {
		t.Errorf("read a file outside the run: %v", r.Output)
	}
	if ds := rd.Differences(); len(ds) != 2 || !strings.Contains(ds[0].Msg, "outside the run's folder") {
		t.Errorf("differences = %v", ds)
	}
}

func TestFindRunIndex(t *testing.T) {
	dir := t.TempDir()
	mk := func(p string) string {
		p = filepath.Join(dir, p)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte("{}\n"), 0o644)
		return p
	}
	v4 := mk("v4/index.jsonl")
	v5 := mk("v5/run/.internal/index.jsonl")
	nested := mk("nest/exp/2026-01-01/index.jsonl")
	mk("two/a/index.jsonl")
	mk("two/b/index.jsonl")
	os.MkdirAll(filepath.Join(dir, "empty"), 0o755)
	mk("deps/node_modules/pkg/index.jsonl")
	mk("deep/1/2/3/4/5/6/index.jsonl")
	plain := mk("r.jsonl")
	for _, tc := range []struct{ in, want, err string }{
		{in: filepath.Join(dir, "v4"), want: v4},
		{in: filepath.Join(dir, "v5", "run"), want: v5},
		{in: filepath.Join(dir, "nest"), want: nested},
		{in: plain, want: plain},
		{in: filepath.Join(dir, "nothing.jsonl"), want: filepath.Join(dir, "nothing.jsonl")},
		{in: filepath.Join(dir, "two"), err: "holds 2 AgentV runs"},
		{in: filepath.Join(dir, "empty"), err: "is a folder without a results file"},
		{in: filepath.Join(dir, "deps"), err: "is a folder without a results file"},
		{in: filepath.Join(dir, "deep"), err: "is a folder without a results file"},
	} {
		got, err := FindRunIndex(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("FindRunIndex(%s) = %q, %v; want error %q", tc.in, got, err, tc.err)
			}
			if strings.Contains(tc.err, "without") != errors.Is(err, ErrNoRun) {
				t.Errorf("FindRunIndex(%s): %v is ErrNoRun: %v", tc.in, err, errors.Is(err, ErrNoRun))
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("FindRunIndex(%s) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}
