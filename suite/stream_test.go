package suite

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/internal/loadsuite"
	"github.com/google/go-cmp/cmp"
)

func writeEval(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// A streamed suite keeps what planning needs of each test, and reads the
// tests back as they were loaded: by index, in order, and into memory.
func TestStreamedSuite(t *testing.T) {
	p := writeEval(t, "load.yaml", string(loadsuite.Conversations(3*chunkItems+5)))
	s, err := Load(p, Options{JudgeAvailable: true, Stream: true})
	if err != nil {
		t.Fatal(err)
	}
	whole, err := Load(p, Options{JudgeAvailable: true})
	if err != nil {
		t.Fatal(err)
	}
	if !s.Streamed() || s.Tests != nil || s.NumTests() != len(whole.Tests) || s.TestSuiteName() != "load" {
		t.Fatalf("streamed %v, %d tests, Tests %d, name %q", s.Streamed(), s.NumTests(), len(s.Tests), s.TestSuiteName())
	}
	if ti := s.Info(70); ti.ID != "c70" || ti.Mode != agenteval.ModeConversation {
		t.Errorf("info %+v", ti)
	}
	r := s.NewTestReader()
	for _, i := range []int{0, 196, 63, 64, 1, 130, 195, 2} {
		got, err := r.Test(i)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(&whole.Tests[i], got); diff != "" {
			t.Errorf("test %d (-whole +streamed):\n%s", i, diff)
		}
	}
	s.AmendTests(func(t *agenteval.Test) { t.Trials = 3 })
	n := 0
	if err := s.EachTest(func(i int, t *agenteval.Test) error {
		if i != n || t.ID != whole.Tests[i].ID || t.Trials != 3 {
			return fmt.Errorf("test %d: %s, trials %d", i, t.ID, t.Trials)
		}
		n++
		return nil
	}); err != nil || n != s.NumTests() {
		t.Fatalf("EachTest: %d tests, %v", n, err)
	}
	if err := s.LoadTests(); err != nil || s.Streamed() || len(s.Tests) != len(whole.Tests) || s.Tests[5].Trials != 3 {
		t.Fatalf("LoadTests: %v, streamed %v, %d tests", err, s.Streamed(), len(s.Tests))
	}
}

// Visit sees each test as Load reads it, streamed or not.
func TestVisit(t *testing.T) {
	p := writeEval(t, "load.yaml", string(loadsuite.Conversations(chunkItems+3)))
	var got [2][]string
	for k, stream := range []bool{false, true} {
		turns := 0
		s, err := Load(p, Options{JudgeAvailable: true, Stream: stream, Visit: func(t *agenteval.Test) {
			got[k] = append(got[k], t.ID)
			turns += len(t.Turns)
		}})
		if err != nil || s.Streamed() != stream || turns != 4*(chunkItems+3) {
			t.Fatalf("stream %v: %v, streamed %v, %d turns", stream, err, s.Streamed(), turns)
		}
	}
	if len(got[0]) != chunkItems+3 || !cmp.Equal(got[0], got[1]) {
		t.Errorf("visited %v and %v", got[0], got[1])
	}
}

// Reading tests again says nothing more, and readers may read at once:
// each read reports into problems of its own, which are dropped (the load
// said them), prompts' templates included.
func TestStreamedReadsAreIndependent(t *testing.T) {
	var y strings.Builder
	y.WriteString("prompts: [\"Say {{ input }} {{ missing }} ${UNSET_FOR_STREAM_TEST}\"]\nassertions: [{type: contains, value: x}]\ntests:\n")
	for i := range 150 {
		fmt.Fprintf(&y, "  - vars: {input: hello %d}\n    id: p%d\n    unknown_key: 1\n", i, i)
	}
	p := writeEval(t, "prompts.yaml", y.String())
	s, err := Load(p, Options{Stream: true, Env: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	if !s.Streamed() || len(s.Warnings) == 0 {
		t.Fatalf("streamed %v, warnings %v", s.Streamed(), s.Warnings)
	}
	warned := len(s.Warnings)
	loadProblems := s.stream.sc.d.problems
	before := len(loadProblems.warns) + len(loadProblems.errs)
	var wg sync.WaitGroup
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.EachTest(func(i int, t *agenteval.Test) error {
				if want := fmt.Sprintf("Say hello %d", i); !strings.HasPrefix(t.Input[0].Content, want) {
					return fmt.Errorf("test %d: input %q", i, t.Input[0].Content)
				}
				return nil
			}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if after := len(loadProblems.warns) + len(loadProblems.errs); after != before || len(s.Warnings) != warned {
		t.Errorf("reading again added %d problems to the load's", after-before)
	}
}

// A file that changes after it was loaded cannot be read again.
func TestStreamedFileChanges(t *testing.T) {
	p := writeEval(t, "load.yaml", string(loadsuite.Conversations(100)))
	s, err := Load(p, Options{JudgeAvailable: true, Stream: true})
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(p)
	os.WriteFile(p, []byte(strings.Replace(string(data), "conversation 99\n", "conversation 98\n", 1)), 0o644)
	r := s.NewTestReader()
	if _, err := r.Test(3); err != nil {
		t.Fatalf("the first chunk is unchanged: %v", err)
	}
	_, err = r.Test(99)
	if err == nil || !strings.Contains(err.Error(), "has changed since it was loaded") || !strings.Contains(err.Error(), "load.yaml:") {
		t.Fatalf("error %v", err)
	}
	os.Remove(p)
	if _, err := s.NewTestReader().Test(0); err == nil {
		t.Fatal("a removed file reads")
	}
}

// Options.Stream leaves other files in memory: a file whose tests are
// not one block sequence, JSONL, JSON.
func TestStreamOnlyWhatSplits(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		streamed   bool
	}{
		{"plain.yaml", "tests:\n  - id: a\n    input: hi\n", true},
		{"flow.yaml", "tests: [{id: a, input: hi}]\n", false},
		{"anchors.yaml", "d: &d {input: hi}\ntests:\n  - id: a\n    <<: *d\n", false},
		{"scenarios.yaml", "tests:\n  - id: a\n    input: hi\nscenarios:\n  - config: [{vars: {x: 1}}]\n    tests: [{vars: {input: yo}}]\n", false},
		{"lines.jsonl", "{\"id\": \"a\", \"input\": \"hi\", \"criteria\": \"c\"}\n", false},
	} {
		p := writeEval(t, tc.name, tc.text)
		s, err := Load(p, Options{JudgeAvailable: true, Stream: true})
		if s == nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if s.Streamed() != tc.streamed || s.NumTests() == 0 {
			t.Errorf("%s: streamed %v, %d tests (%v)", tc.name, s.Streamed(), s.NumTests(), err)
		}
	}
}

// A streamed file's problems are the same as in memory, in the same
// order: ids used twice (with and without depends_on), unknown and
// cyclic dependencies, judged assertions without a judge (errors, or one
// warning for validate), a simulated user without a model, --no-exec.
func TestStreamedProblemsMatch(t *testing.T) {
	p := writeEval(t, "tricky.yaml", trickyEval)
	for _, opt := range []Options{{}, {NoJudgeNeeded: true}, {JudgeAvailable: true, NoExec: true}, {JudgeAvailable: true, Strict: true}} {
		if !streamMatchesWhole(t, p, []byte(trickyEval), opt) {
			t.Errorf("%+v: not streamed", opt)
		}
	}
}

const trickyEval = `tests:
  - id: a
    input: hi
    depends_on: [b]
    assertions: [Says hi]
  - id: b
    input: hi
    depends_on: [c]
    assertions: [{type: contains, value: x}]
  - id: c
    input: hi
    depends_on: [a, nosuch]
  - id: a
    input: again
    assertions: [Judged again]
  - id: d
    input: hi
    depends_on: [d]
  - id: e
    input: hi
    user: {persona: a traveller}
    turns: 2
  - id: f
    input: hi
    depends_on: [g]
  - id: g
    input: hi
    depends_on: [f]
  - id: h
    input: hi
    assertions: [{type: script, command: [true]}]
  - id: b
    input: hi
    depends_on: [a]
    assertions: [Final]
`
