package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agenteval/agenteval/internal/pgtest"
	"github.com/agenteval/agenteval/store"
)

// TestPostgresStore runs the CLI against a shared PostgreSQL store, as CI
// runners and laptops share one: two shards of the 200-conversation
// workload write into one run at the same time, from two processes, and
// lose nothing; then runs, show, tag, compare and view read it as they
// read the project's SQLite file, merge sees the run is stored already,
// AGENTEVAL_STORE and agenteval.yaml's store: name it too, and the
// password in the URL never shows.
func TestPostgresStore(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the 200-conversation workload three times against PostgreSQL")
	}
	pg := pgtest.Shared(t)
	url := pg.NewDatabase(t)
	bin := agentevalBin(t)
	dir := t.TempDir()
	loadWorkload(t, dir, 200)
	srv := workloadFake(t)
	env := []string{"OPENAI_BASE_URL=" + srv.URL, "OPENAI_API_KEY=k", "NO_COLOR=1", "GITHUB_RUN_ID=", "CI_PIPELINE_ID=", "BUILDKITE_BUILD_ID=",
		"CIRCLE_WORKFLOW_ID=", "BUILD_BUILDID=", "BUILD_TAG=", "AGENTEVAL_STORE="}
	var outputs []string
	cli := func(args ...string) cliRun {
		t.Helper()
		r := runCLI(t, bin, dir, env, args...)
		outputs = append(outputs, r.stdout, r.stderr)
		return r
	}
	common := []string{"run", "load.yaml", "--target", "openai:gpt-4o-mini", "--judge", "openai:gpt-4o-mini",
		"--no-cache", "--max-retries", "0", "-j", "20", "-q", "--store", url}

	// Two shards at once, into one run of an empty database (both create
	// the schema, one waits for the other).
	shards := runShards(t, bin, dir, env, common, 2, "pg-1", "pg")
	for i, s := range shards {
		outputs = append(outputs, s.stdout, s.stderr)
		if s.code != exitExecution && s.code != exitFailed && s.code != exitOK {
			t.Fatalf("shard %d exited %d:\n%s", i+1, s.code, s.stderr)
		}
		// The password is on the command line here (--store), which
		// warns (see store_password_argv.txtar); nothing else may.
		for _, line := range strings.Split(s.stderr, "\n") {
			if strings.Contains(line, "warning") && !strings.Contains(line, "holds a password, and is on the command line") {
				t.Errorf("shard %d: %s", i+1, s.stderr)
				break
			}
		}
	}
	n1, n2 := len(resultLines(t, filepath.Join(dir, "pg1.jsonl"))), len(resultLines(t, filepath.Join(dir, "pg2.jsonl")))

	runs := func(extra ...string) []store.RunRow {
		t.Helper()
		r := cli(append([]string{"runs", "--format", "json"}, extra...)...)
		if r.code != 0 {
			t.Fatalf("runs exited %d: %s", r.code, r.stderr)
		}
		var rows []store.RunRow
		if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil {
			t.Fatalf("runs --format json: %v\n%s", err, r.stdout)
		}
		return rows
	}
	rows := runs("--store", url)
	if len(rows) != 1 {
		t.Fatalf("%d runs stored, want 1: %+v", len(rows), rows)
	}
	got := rows[0]
	t.Logf("two shards writing at once: shard 1 wrote %d results, shard 2 %d; the store holds %d (%d passed, %d failed, %d errors, %d skipped), %d/%d shards done, status %s",
		n1, n2, got.Total, got.Passed, got.Failed, got.Errored, got.Skipped, got.ShardsDone, got.Shards, got.Status)
	if got.ID != "pg-1" || got.Total != 200 || n1+n2 != 200 || got.Status != "done" || got.Shards != 2 || got.ShardsDone != 2 {
		t.Errorf("stored run = %+v", got)
	}
	// The merged files agree with the store, which already holds the run.
	m := cli("merge", "pg1.jsonl", "pg2.jsonl", "-o", "pgall.jsonl", "--format", "json", "--store", url)
	sum := summaryOf(t, m.stdout)
	if m.code != exitExecution || sum.Total != got.Total || sum.Passed != got.Passed || sum.Failed != got.Failed ||
		sum.Errored != got.Errored || sum.Skipped != got.Skipped {
		t.Errorf("merge exited %d with %+v; the store says %+v\n%s", m.code, sum, got, m.stderr)
	}
	if rows := runs("--store", url); len(rows) != 1 || rows[0].Total != 200 {
		t.Errorf("after merge: %+v", rows)
	}

	// A second run, whole, named through AGENTEVAL_STORE; show, tag and
	// compare read both.
	env = append(env, "AGENTEVAL_STORE="+url)
	whole := cli(append(common[:len(common)-2], "--run-id", "pg-2", "-o", "whole.jsonl")...)
	if whole.code != exitExecution {
		t.Fatalf("whole run exited %d: %s", whole.code, whole.stderr)
	}
	if rows := runs(); len(rows) != 2 || rows[0].ID != "pg-2" || rows[0].Total != 200 || rows[0].Shards != 0 {
		t.Errorf("runs through AGENTEVAL_STORE: %+v", rows)
	}
	if r := cli("show", "pg-1"); r.code != 0 || !strings.Contains(r.stdout, "c199") || !strings.Contains(r.stdout, "c13") {
		t.Errorf("show pg-1 exited %d:\n%.2000s\n%s", r.code, r.stdout, r.stderr)
	}
	if r := cli("show", "pg-1", "c41"); r.code != 0 || !strings.Contains(r.stdout, "question 4 of conversation 41.") {
		t.Errorf("show pg-1 c41 exited %d:\n%.2000s\n%s", r.code, r.stdout, r.stderr)
	}
	if r := cli("tag", "pg-1", "baseline"); r.code != 0 {
		t.Errorf("tag exited %d: %s", r.code, r.stderr)
	}
	c := cli("compare", "baseline", "last", "--fail-on-regression", "--format", "json")
	var cmpOut struct {
		Base, New struct {
			RunID string `json:"run_id"`
			Total int    `json:"total"`
		}
		Summary struct {
			Regressed, Unchanged int
		}
	}
	if err := json.Unmarshal([]byte(c.stdout), &cmpOut); err != nil || c.code != 0 || cmpOut.Base.RunID != "pg-1" || cmpOut.New.RunID != "pg-2" ||
		cmpOut.Base.Total != 200 || cmpOut.New.Total != 200 || cmpOut.Summary.Regressed != 0 || cmpOut.Summary.Unchanged != 200 {
		t.Errorf("compare baseline last exited %d (%v): %+v\n%.1500s\n%s", c.code, err, cmpOut, c.stdout, c.stderr)
	}

	// The project file can name the store too, with the password from the
	// environment.
	env = env[:len(env)-1]
	noPW := strings.Replace(url, ":"+pgtest.Password+"@", "@", 1)
	if noPW == url {
		t.Fatalf("the test URL has no password to leave out: %s", url)
	}
	os.WriteFile(filepath.Join(dir, "agenteval.yaml"), []byte("store: "+noPW+"\n"), 0o644)
	env = append(env, "PGPASSWORD="+pgtest.Password)
	if rows := runs(); len(rows) != 2 {
		t.Errorf("runs through agenteval.yaml's store: %+v", rows)
	}

	// view serves the shared store.
	viewStore(t, bin, dir, env, func(base string) {
		for _, path := range []string{"/", "/api/runs", "/runs/pg-1", "/runs/baseline"} {
			resp, err := http.Get(base + path)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			outputs = append(outputs, string(body))
			if resp.StatusCode != 200 {
				t.Errorf("GET %s: %s\n%.500s", path, resp.Status, body)
			}
			if path != "/" && !strings.Contains(string(body), "pg-1") {
				t.Errorf("GET %s does not show run pg-1:\n%.500s", path, body)
			}
		}
	})

	// A store that cannot be reached is a configuration error, at once.
	bad := cli(append(common[:len(common)-1], "postgres://agenteval:"+pgtest.Password+"@127.0.0.1:1/nope", "-o", "bad.jsonl")...)
	if bad.code != exitUsage || !strings.Contains(bad.stderr, "the run store postgres://agenteval@127.0.0.1:1/nope (from --store) cannot be opened") ||
		!strings.Contains(bad.stderr, "--no-store") {
		t.Errorf("unreachable store: exit %d\n%s", bad.code, bad.stderr)
	}
	for _, o := range outputs {
		if strings.Contains(o, pgtest.Password) {
			t.Fatalf("the store's password shows in output:\n%.1000s", o)
		}
	}
}

// viewStore runs agenteval view on a free port and calls fn with its
// address, then stops it.
func viewStore(t *testing.T, bin, dir string, env []string, fn func(base string)) {
	t.Helper()
	cmd := exec.Command(bin, "view", "--port", "0")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	line := make(chan string, 1)
	go func() {
		s := bufio.NewScanner(out)
		if s.Scan() {
			line <- s.Text()
		}
		close(line)
		io.Copy(io.Discard, out)
	}()
	select {
	case l, ok := <-line:
		if !ok {
			t.Fatalf("view said nothing: %s", stderr.String())
		}
		_, rest, _ := strings.Cut(l, "http://")
		addr, _, _ := strings.Cut(rest, "/")
		if addr == "" {
			t.Fatalf("view said %q", l)
		}
		if strings.Contains(l, pgtest.Password) {
			t.Fatalf("view shows the password: %s", l)
		}
		fn("http://" + addr)
	case <-time.After(30 * time.Second):
		t.Fatalf("view did not start: %s", stderr.String())
	}
}
