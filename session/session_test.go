package session

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agenteval/agenteval"
	_ "github.com/agenteval/agenteval/provider/openai" // the suites' targets
	"github.com/google/go-cmp/cmp"
)

// write lays out files under a temporary folder and returns it.
func write(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const twoTests = `tests:
  - id: book-table
    input: Book a table.
    assertions: [{type: contains, value: booked}]
  - id: opening-hours
    input: When do you open?
    assertions: [{type: contains, value: "9"}]
`

func TestProjectFileReadOnce(t *testing.T) {
	dir := write(t, map[string]string{
		"agenteval.yaml": "targets:\n  - name: fake\n    model: openai:fake\n",
		"evals/a.yaml":   twoTests,
		"evals/b.yaml":   twoTests,
	})
	s, err := Load(Options{}, filepath.Join(dir, "evals"))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Suites) != 2 {
		t.Fatalf("loaded %d suites, want 2", len(s.Suites))
	}
	a, b := s.Config(s.Suites[0]), s.Config(s.Suites[1])
	if a == nil || a != b {
		t.Errorf("the project file was read once per eval file (%p, %p); want one reading shared", a, b)
	}
	for _, st := range s.Suites {
		if len(st.Targets) == 0 || st.Targets[0].Name != "fake" {
			t.Errorf("%s: project targets not applied: %+v", st.File, st.Targets)
		}
	}
}

func TestPlanErrors(t *testing.T) {
	dir := write(t, map[string]string{
		"s.yaml":   "targets:\n  - name: fake\n    model: openai:fake\n" + twoTests,
		"bad.yaml": "targets:\n  - name: t\n    model: nope:x\njudge: alsonope:y\n" + twoTests,
	})
	tests := []struct {
		name string
		opt  Options
		file string
		want string
	}{
		{"filter matches nothing", Options{Filter: "book-tabel"}, "s.yaml", `--filter "book-tabel" matches none of the 2 tests; the closest ids are book-table`},
		{"unknown target", Options{Targets: []string{"nosuch"}}, "s.yaml", "nosuch"},
		{"bad shard", Options{Shard: "3/2"}, "s.yaml", "3/2"},
		{"bad run id", Options{RunID: "a b"}, "s.yaml", `--run-id "a b"`},
		{"unknown providers, all at once", Options{}, "bad.yaml", `target t: unknown provider "nope" in "nope:x"; known providers: ollama, openai` + "\n" + filepath.Join(dir, "bad.yaml") + `: judge: unknown provider "alsonope"`},
		{"resume and rerun", Options{Resume: "a.jsonl", RerunFailed: "b.jsonl"}, "s.yaml", "--resume and --rerun-failed both name a results file"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Load(tc.opt, filepath.Join(dir, tc.file))
			if err == nil {
				_, err = s.Plan()
			}
			var ce *ConfigError
			var le *LoadError
			if !errors.As(err, &ce) && !errors.As(err, &le) {
				t.Fatalf("got %v (%T), want a *ConfigError or *LoadError", err, err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not say %q", err, tc.want)
			}
		})
	}
}

func TestPlanShardsPartitionTests(t *testing.T) {
	var tests strings.Builder
	tests.WriteString("targets:\n  - name: fake\n    model: openai:fake\ntests:\n")
	for _, id := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
		tests.WriteString("  - id: " + id + "\n    input: hi\n    assertions: [{type: contains, value: hi}]\n")
	}
	dir := write(t, map[string]string{"s.yaml": tests.String()})
	seen := map[string]int{}
	total := 0
	for _, shard := range []string{"1/3", "2/3", "3/3"} {
		s, err := Load(Options{Shard: shard, RunID: "r1"}, filepath.Join(dir, "s.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		p, err := s.Plan()
		if err != nil {
			t.Fatal(err)
		}
		if p.Header.Shard == nil || p.Header.RunID != "r1" {
			t.Fatalf("shard %s: header %+v, want the shard and run r1", shard, p.Header)
		}
		for _, sp := range p.Suites {
			for _, tr := range sp.runs {
				for _, tc := range sp.Tests {
					if tr.selects(tc) {
						seen[tc.ID]++
					}
				}
			}
		}
		total += p.Total
	}
	if total != 8 || len(seen) != 8 {
		t.Errorf("shards planned %d tests covering %d ids, want 8 and 8: %v", total, len(seen), seen)
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("test %s is in %d shards", id, n)
		}
	}
}

func TestPlanMatrixTargets(t *testing.T) {
	dir := write(t, map[string]string{"s.yaml": `targets:
  - name: small
    model: openai:small
  - name: large
    model: openai:large
execution:
  targets: [small, large]
` + twoTests})
	s, err := Load(Options{}, filepath.Join(dir, "s.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.Plan()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"small", "large"}, p.Suites[0].Targets()); diff != "" {
		t.Errorf("targets (-want +got):\n%s", diff)
	}
	if p.Total != 4 || p.Header.Target != "small, large" {
		t.Errorf("total %d, header target %q; want 4 and \"small, large\"", p.Total, p.Header.Target)
	}
}

// A report is replaced only when the run ends: a run killed before then
// leaves the previous report whole, not an empty file.
func TestReportsReplacedAtTheEnd(t *testing.T) {
	dir := t.TempDir()
	junit, html := filepath.Join(dir, "junit.xml"), filepath.Join(dir, "report.html")
	for _, p := range []string{junit, html} {
		if err := os.WriteFile(p, []byte("previous"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	opt := &Options{JUnit: junit, HTML: html, NoStore: true}
	sink, err := NewSink(opt, SinkFile{})
	if err != nil {
		t.Fatal(err)
	}
	if err := sink.Start(NewHeader("run", "test", dir)); err != nil {
		t.Fatal(err)
	}
	r := &agenteval.Result{TestID: "a", Suite: "s", Verdict: agenteval.VerdictPass, ExecutionStatus: agenteval.StatusOK, Score: 1}
	if err := sink.Write(r); err != nil {
		t.Fatal(err)
	}
	// As a kill -9 would leave them: the run has not ended.
	for _, p := range []string{junit, html} {
		if b, _ := os.ReadFile(p); string(b) != "previous" {
			t.Errorf("%s mid-run = %.40q, want the previous report", p, b)
		}
	}
	if _, err := sink.Close(context.Background(), nil, 1); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{junit, html} {
		if b, _ := os.ReadFile(p); string(b) == "previous" || len(b) == 0 {
			t.Errorf("%s after the run = %.40q, want the new report", p, b)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*.tmp")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// A target that one eval file names and only another file of the run
// defines is that file's, when the definitions agree; otherwise the error
// says where shared targets go.
func TestTargetFromAnotherFile(t *testing.T) {
	defines := func(model string) string {
		return "targets:\n  - name: shared\n    model: openai:" + model + "\n" + twoTests
	}
	uses := "execution:\n  target: shared\n" + twoTests
	cases := []struct {
		name  string
		files map[string]string
		// model is the target the user file runs; err, when set, the
		// error its run records.
		model, err, log string
	}{
		{"one definition", map[string]string{"a.yaml": defines("m1"), "b.yaml": uses}, "openai:m1", "", `b.yaml: target "shared" is not defined here; using its definition in`},
		{"same twice", map[string]string{"a.yaml": defines("m1"), "c.yaml": defines("m1"), "b.yaml": uses}, "openai:m1", "", "using its definition"},
		{"different", map[string]string{"a.yaml": defines("m1"), "c.yaml": defines("m2"), "b.yaml": uses}, "", "define it differently; define it once under targets: in agenteval.yaml", ""},
		{"none", map[string]string{"b.yaml": uses}, "", "to share a target between eval files, define it under targets: in agenteval.yaml", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := write(t, c.files)
			var log strings.Builder
			var paths []string
			for name := range c.files {
				paths = append(paths, filepath.Join(dir, name))
			}
			s, err := Load(Options{Log: &log}, paths...)
			if err != nil {
				t.Fatal(err)
			}
			p, err := s.Plan()
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Errorf("error = %v, want one with %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, sp := range p.Suites {
				if filepath.Base(sp.Suite.File) != "b.yaml" {
					continue
				}
				tr := sp.runs[0]
				if tr.err != nil || tr.spec.Model != c.model {
					t.Errorf("target = %+v, %v; want model %s", tr.spec, tr.err, c.model)
				}
			}
			if !strings.Contains(log.String(), c.log) {
				t.Errorf("log = %q, want %q", log.String(), c.log)
			}
		})
	}
}
