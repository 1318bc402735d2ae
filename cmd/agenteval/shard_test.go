package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/agenteval/agenteval/internal/fakellm"
	"github.com/agenteval/agenteval/results"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// loadWorkload writes the load benchmark's workload, n conversations of 4
// turns with one judge rubric a turn, made varied enough that a summary
// says something: every 5th conversation fails a turn (its rubric quotes a
// phrase nothing says), 30 run 3 trials (pass@k), conversation 13
// cannot reach its agent (execution_error), 14 depends on it (skipped),
// and chains of depends_on tie 20..23 and 40..41 together.
func loadWorkload(t testing.TB, dir string, n int) string {
	var y strings.Builder
	y.WriteString("name: load\ntests:\n")
	for i := range n {
		fmt.Fprintf(&y, "  - id: c%d\n    mode: conversation\n", i)
		if i%10 == 3 || i%20 == 0 {
			y.WriteString("    trials: 3\n")
		}
		switch {
		case i == 14:
			y.WriteString("    depends_on: [c13]\n")
		case i >= 21 && i <= 23:
			fmt.Fprintf(&y, "    depends_on: [c%d]\n", i-1)
		case i == 41:
			y.WriteString("    depends_on: [c40, c22]\n")
		}
		y.WriteString("    turns:\n")
		for k := range 4 {
			rubric := "Answers the question"
			if i%5 == 0 && k == 1 {
				rubric = `Says "banana"`
			}
			fmt.Fprintf(&y, "      - input: question %d of conversation %d.\n        assertions: ['%s']\n", k+1, i, rubric)
		}
	}
	p := filepath.Join(dir, "load.yaml")
	if err := os.WriteFile(p, []byte(y.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// agentevalBin is the test binary installed as agenteval on PATH by
// testscript.Main, so that tests can run the CLI as separate processes.
func agentevalBin(t testing.TB) string {
	p, err := exec.LookPath("agenteval")
	if err != nil {
		t.Skipf("agenteval is not on PATH: %v", err)
	}
	return p
}

// runShards runs the n shards of a run at once, as n processes: shard i
// writes PREFIXi.jsonl.
func runShards(t testing.TB, bin, dir string, env, args []string, n int, runID, prefix string) []cliRun {
	t.Helper()
	var wg sync.WaitGroup
	out := make([]cliRun, n)
	for i := range out {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = runCLI(t, bin, dir, env, append(args[:len(args):len(args)], "--shard", fmt.Sprintf("%d/%d", i+1, n), "--run-id", runID,
				"-o", fmt.Sprintf("%s%d.jsonl", prefix, i+1))...)
		}()
	}
	wg.Wait()
	return out
}

type cliRun struct {
	code           int
	stdout, stderr string
}

func runCLI(t testing.TB, bin, dir string, env []string, args ...string) cliRun {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("agenteval %v: %v", args, err)
	}
	return cliRun{code: code, stdout: out.String(), stderr: errb.String()}
}

// workloadFake serves the workload: the agent of conversation 13 always
// fails, and the judge decides quoted phrases literally.
func workloadFake(t testing.TB) *fakellm.Server {
	srv, err := fakellm.Start(fakellm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	srv.Add(
		&fakellm.Rule{Match: func(r *fakellm.Request) bool {
			return r.SchemaName() == "" && strings.Contains(r.Text(), "of conversation 13.")
		}, Reply: fakellm.Reply{Fault: "500"}},
		&fakellm.Rule{Match: func(r *fakellm.Request) bool { return r.SchemaName() != "" }, Reply: fakellm.StructureJudge()},
	)
	return srv
}

var (
	msRE    = regexp.MustCompile(`"(duration_ms|waited_ms)":[0-9.e+-]+`)
	timeRE  = regexp.MustCompile(` time="[^"]*"`)
	stampRE = regexp.MustCompile(` timestamp="[^"]*"`)
)

// resultLines are a results file's results, without durations, sorted.
func resultLines(t testing.TB, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if !strings.HasPrefix(l, `{"record":`) {
			out = append(out, msRE.ReplaceAllString(l, `"$1":0`))
		}
	}
	sort.Strings(out)
	return out
}

// summaryOf reads the summary of a JSON report, without its duration.
func summaryOf(t testing.TB, doc string) results.Summary {
	t.Helper()
	var d struct {
		Summary results.Summary `json:"summary"`
	}
	if err := json.Unmarshal([]byte(doc), &d); err != nil {
		t.Fatalf("not a JSON report: %v\n%.500s", err, doc)
	}
	d.Summary.DurationMS = 0
	d.Summary.Usage.WaitedMS = 0
	return d.Summary
}

// junitCases are a JUnit file's suites' counts and its cases, without
// times, sorted.
func junitCases(t testing.TB, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Suites []struct {
			Name     string `xml:"name,attr"`
			Tests    int    `xml:"tests,attr"`
			Failures int    `xml:"failures,attr"`
			Errors   int    `xml:"errors,attr"`
			Skipped  int    `xml:"skipped,attr"`
			Props    []struct {
				Name  string `xml:"name,attr"`
				Value string `xml:"value,attr"`
			} `xml:"properties>property"`
			Cases []struct {
				Inner string `xml:",innerxml"`
				Name  string `xml:"name,attr"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var out []string
	for _, s := range doc.Suites {
		out = append(out, fmt.Sprintf("suite %s tests=%d failures=%d errors=%d skipped=%d %v", s.Name, s.Tests, s.Failures, s.Errors, s.Skipped, s.Props))
		for _, c := range s.Cases {
			out = append(out, c.Name+" "+timeRE.ReplaceAllString(stampRE.ReplaceAllString(c.Inner, ""), ""))
		}
	}
	sort.Strings(out)
	return out
}

// TestShardsMatchOneRun is the measure of shards: the 200
// conversations of the benchmark workload, run as one run and as four
// shards side by side (four processes at once), merged, give the same
// results, the same summary (counts, per-score means, pass@k, usage), the
// same JUnit and the same exit status.
func TestShardsMatchOneRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the 200-conversation workload five times")
	}
	bin := agentevalBin(t)
	dir := t.TempDir()
	loadWorkload(t, dir, 200)
	srv := workloadFake(t)
	env := []string{"OPENAI_BASE_URL=" + srv.URL, "OPENAI_API_KEY=k", "NO_COLOR=1",
		"GITHUB_RUN_ID=", "CI_PIPELINE_ID=", "BUILDKITE_BUILD_ID=", "CIRCLE_WORKFLOW_ID=", "BUILD_BUILDID=", "BUILD_TAG="}
	common := []string{"run", "load.yaml", "--target", "openai:gpt-4o-mini", "--judge", "openai:gpt-4o-mini",
		"--no-cache", "--no-store", "--max-retries", "0", "-j", "20", "-q", "--format", "json"}

	one := runCLI(t, bin, dir, env, append(common, "-o", "one.jsonl", "--junit", "one.xml")...)
	if one.code != exitExecution {
		t.Fatalf("one run exited %d, want 3 (conversation 13 cannot run)\n%s", one.code, one.stderr)
	}

	shards := runShards(t, bin, dir, env, common, 4, "ci-123", "shard")
	counts := make([]int, 4)
	for i, s := range shards {
		if s.code != exitOK && s.code != exitFailed && s.code != exitExecution {
			t.Fatalf("shard %d exited %d\n%s", i+1, s.code, s.stderr)
		}
		counts[i] = len(resultLines(t, filepath.Join(dir, fmt.Sprintf("shard%d.jsonl", i+1))))
		if counts[i] < 20 {
			t.Errorf("shard %d ran only %d of 200 tests", i+1, counts[i])
		}
	}
	t.Logf("results per shard: %v", counts)

	merged := runCLI(t, bin, dir, env, "merge", "shard3.jsonl", "shard1.jsonl", "shard4.jsonl", "shard2.jsonl",
		"-o", "all.jsonl", "--junit", "all.xml", "--format", "json", "--no-store")
	if merged.code != one.code {
		t.Errorf("merge exited %d, the one run %d\n%s", merged.code, one.code, merged.stderr)
	}
	if !strings.Contains(merged.stderr, "merged 4 shards of run ci-123: 200 tests") {
		t.Errorf("merge said:\n%s", merged.stderr)
	}
	// merge found load.yaml as the shards ran it, so it made every
	// verdict again from its scores and pass mark, and looked for every
	// test: the runner's verdicts (errors, skips, trials) all agree.
	if strings.Contains(merged.stderr, "not here as the shards ran") {
		t.Errorf("merge did not check the results against the suite:\n%s", merged.stderr)
	}

	want, got := resultLines(t, filepath.Join(dir, "one.jsonl")), resultLines(t, filepath.Join(dir, "all.jsonl"))
	if len(want) != 200 {
		t.Fatalf("the one run has %d results", len(want))
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("merged results differ from the one run's (-one +merged):\n%.3000s", d)
	}
	sumOne, sumMerged := summaryOf(t, one.stdout), summaryOf(t, merged.stdout)
	if sumOne.Passed == 0 || sumOne.Failed == 0 || sumOne.Errored == 0 || sumOne.Skipped == 0 || len(sumOne.PassAtK) != 3 {
		t.Errorf("the workload's summary is too plain to compare: %+v", sumOne)
	}
	if d := cmp.Diff(sumOne, sumMerged, cmpopts.EquateApprox(0, 1e-12), cmpopts.IgnoreUnexported(results.Summary{}, results.MetricSummary{})); d != "" {
		t.Errorf("merged summary differs (-one +merged):\n%s", d)
	}
	if d := cmp.Diff(junitCases(t, filepath.Join(dir, "one.xml")), junitCases(t, filepath.Join(dir, "all.xml"))); d != "" {
		t.Errorf("merged JUnit differs (-one +merged):\n%.3000s", d)
	}
	rd, closeFile, err := results.OpenResults(filepath.Join(dir, "all.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	h := rd.Header()
	closeFile()
	if h == nil || h.RunID != "ci-123" || h.Shards != 4 || h.Shard != nil {
		t.Errorf("merged header = %+v", h)
	}
	t.Logf("one run and merged shards: %d passed, %d failed, %d errors, %d skipped; pass@1..3 %.3f %.3f %.3f",
		sumOne.Passed, sumOne.Failed, sumOne.Errored, sumOne.Skipped, sumOne.PassAtK[0].PassAtK, sumOne.PassAtK[1].PassAtK, sumOne.PassAtK[2].PassAtK)
}
