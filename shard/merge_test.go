package shard

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/results"
)

// shardFile writes a shard's results file: its header, then one result per
// id.
func shardFile(t *testing.T, dir, name string, h results.Header, ids ...string) string {
	t.Helper()
	var b strings.Builder
	h.Record = results.RecordRun
	hb, _ := json.Marshal(h)
	b.Write(hb)
	b.WriteByte('\n')
	for _, id := range ids {
		v := agenteval.VerdictPass
		if strings.HasPrefix(id, "f") {
			v = agenteval.VerdictFail
		}
		score := 1.0
		if v == agenteval.VerdictFail {
			score = 0
		}
		rb, _ := json.Marshal(agenteval.Result{TestID: id, Suite: "s", Target: "replay", Verdict: v, ExecutionStatus: agenteval.StatusOf(v), Score: score})
		b.Write(rb)
		b.WriteByte('\n')
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func hdr(id string, i, n, tests int) results.Header {
	return results.Header{RunID: id, Started: time.Date(2026, 1, 1, 0, 0, i, 0, time.UTC), Command: "run", Target: "replay",
		Suites: []results.SuiteFile{{Path: "evals/s.yaml", SHA256: "aa", Name: "s"}}, Shard: &results.Shard{Index: i, Count: n, Tests: tests}}
}

func TestCheckMerges(t *testing.T) {
	dir := t.TempDir()
	// Given out of order: the merge is in shard order.
	c := shardFile(t, dir, "3.jsonl", hdr("r1", 3, 3, 1), "e")
	a := shardFile(t, dir, "1.jsonl", hdr("r1", 1, 3, 2), "a", "b")
	b := shardFile(t, dir, "2.jsonl", hdr("r1", 2, 3, 2), "c", "f1")
	m, err := Check([]string{c, a, b})
	if err != nil {
		t.Fatal(err)
	}
	if m.Count != 5 || m.Header.RunID != "r1" || m.Header.Shard != nil || m.Header.Shards != 3 || m.Header.Started.Second() != 1 {
		t.Errorf("merged = %+v, header %+v", m, m.Header)
	}
	var got []string
	if err := m.Results(func(r *agenteval.Result, line []byte) error {
		got = append(got, r.TestID)
		if !strings.Contains(string(line), `"test_id":"`+r.TestID+`"`) {
			t.Errorf("line %s is not result %s", line, r.TestID)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, ",") != "a,b,c,f1,e" {
		t.Errorf("results in order %v", got)
	}
}

func TestCheckRefuses(t *testing.T) {
	dir := t.TempDir()
	p := func(name string, h results.Header, ids ...string) string { return shardFile(t, dir, name, h, ids...) }
	s1 := p("s1.jsonl", hdr("r1", 1, 3, 1), "a")
	s2 := p("s2.jsonl", hdr("r1", 2, 3, 1), "b")
	s3 := p("s3.jsonl", hdr("r1", 3, 3, 1), "c")
	otherRun := p("other.jsonl", hdr("r2", 3, 3, 1), "c")
	otherN := p("n4.jsonl", hdr("r1", 3, 4, 1), "c")
	changed := hdr("r1", 3, 3, 1)
	changed.Suites = []results.SuiteFile{{Path: "evals/s.yaml", SHA256: "bb", Name: "s"}}
	changedSuite := p("changed.jsonl", changed, "c")
	target := hdr("r1", 3, 3, 1)
	target.Target = "openai:gpt-4o"
	otherTarget := p("target.jsonl", target, "c")
	again3 := p("again3.jsonl", hdr("r1", 3, 3, 1), "c")
	short := p("short.jsonl", hdr("r1", 3, 3, 2), "c")
	dupResult := p("dup.jsonl", hdr("r1", 3, 3, 1), "a")
	whole := hdr("r1", 0, 0, 0)
	whole.Shard = nil
	wholeRun := p("whole.jsonl", whole, "a", "b", "c")
	noHeader := filepath.Join(dir, "noheader.jsonl")
	os.WriteFile(noHeader, []byte(`{"test_id":"c","verdict":"pass","score":1}`+"\n"), 0o644)
	cut := p("cut.jsonl", hdr("r1", 3, 3, 2), "c")
	f, _ := os.OpenFile(cut, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"test_id":"d","ver`)
	f.Close()
	notResult := p("notresult.jsonl", hdr("r1", 3, 3, 1))
	f, _ = os.OpenFile(notResult, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"id":"x"}` + "\n")
	f.Close()

	for _, tc := range []struct {
		name  string
		files []string
		want  []string
	}{
		{"missing", []string{s1, s3}, []string{"shard 2/3 of run r1 is missing"}},
		{"two missing", []string{s2}, []string{"shard 1/3, 3/3 of run r1 are missing"}},
		{"another run", []string{s1, s2, otherRun}, []string{"belong to 2 runs: r1 (" + s1 + ", " + s2 + "); r2 (" + otherRun + ")", "--run-id"}},
		{"another split", []string{s1, s2, otherN}, []string{otherN + " is shard 3/4, but " + s1 + " is shard 1/3"}},
		{"changed suite", []string{s1, s2, changedSuite}, []string{"not shards of one run: their suites differ (evals/s.yaml"}},
		{"other target", []string{s1, s2, otherTarget}, []string{`their targets are "replay" and "openai:gpt-4o"`}},
		{"shard twice", []string{s1, s2, s3, again3}, []string{"shard 3/3 is given 2 times: " + s3 + ", " + again3}},
		{"file twice", []string{s1, s2, s3, s3}, []string{s3 + " is given twice"}},
		{"cut short", []string{s1, s2, short}, []string{short + " (shard 3/3) holds 1 of its 2 results: it was cut short", "--resume " + short}},
		{"killed mid-line", []string{s1, s2, cut}, []string{cut + " ends in a cut-off line"}},
		{"result twice", []string{s1, s2, dupResult}, []string{"s/a (target replay) is in both " + s1 + " and " + dupResult}},
		{"whole run", []string{wholeRun}, []string{"holds a whole run (r1), not a shard"}},
		{"no header", []string{s1, noHeader}, []string{noHeader + " has no run header"}},
		{"not a result", []string{s1, s2, notResult}, []string{notResult + ":2: not a result"}},
		{"not there", []string{s1, filepath.Join(dir, "nope.jsonl")}, []string{"nope.jsonl: open"}},
		{"nothing", nil, []string{"no shard files given"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Check(tc.files)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\nlacks %q", err, w)
				}
			}
		})
	}
}

func ExampleCheck() {
	dir, _ := os.MkdirTemp("", "shards")
	defer os.RemoveAll(dir)
	var files []string
	for i, ids := range [][]string{{"greet", "refund"}, {"handoff"}} {
		h := results.Header{Record: results.RecordRun, RunID: "gh-123-1", Command: "run",
			Suites: []results.SuiteFile{{Path: "evals/support.yaml", SHA256: "5e1f", Name: "support"}},
			Shard:  &results.Shard{Index: i + 1, Count: 2, Tests: len(ids)}}
		b, _ := json.Marshal(h)
		lines := []string{string(b)}
		for _, id := range ids {
			r, _ := json.Marshal(agenteval.Result{TestID: id, Suite: "support", Verdict: agenteval.VerdictPass, ExecutionStatus: agenteval.StatusOK, Score: 1})
			lines = append(lines, string(r))
		}
		p := filepath.Join(dir, fmt.Sprintf("shard-%d.jsonl", i+1))
		os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
		files = append(files, p)
	}
	m, err := Check(files)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("run %s: %d shards, %d results\n", m.Header.RunID, m.Header.Shards, m.Count)
	m.Results(func(r *agenteval.Result, _ []byte) error {
		fmt.Println(r.TestID, r.Verdict)
		return nil
	})
	// Output:
	// run gh-123-1: 2 shards, 3 results
	// greet pass
	// refund pass
	// handoff pass
}
