package suite

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/internal/loadsuite"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/rogpeppe/go-internal/txtar"
	"go.yaml.in/yaml/v4"
)

// parseBothWays parses a file a test at a time and whole, and fails the
// test when the two differ in anything: tests, positions, warnings,
// errors. It reports whether the split held.
func parseBothWays(t *testing.T, path string, data []byte) bool {
	t.Helper()
	opt := Options{JudgeAvailable: true, Env: func(k string) (string, bool) { return "v-" + k, true }}
	d := &decoder{file: path, env: opt.Env, problems: &problems{}, lenient: true}
	chunked = true
	d.yamlSuite(data)
	split := d.readInChunks
	a, errA := Parse(path, data, opt)
	chunked = false
	b, errB := Parse(path, data, opt)
	chunked = true
	all := cmp.Exporter(func(reflect.Type) bool { return true })
	if diff := cmp.Diff(b, a, all); diff != "" {
		t.Errorf("%s: read a test at a time, the suite differs (-whole +split):\n%s", path, diff)
	}
	if msg := func(err error) string {
		if err == nil {
			return ""
		}
		return err.Error()
	}; msg(errA) != msg(errB) {
		t.Errorf("%s: read a test at a time, the errors differ:\nwhole: %v\nsplit: %v", path, errB, errA)
	}
	if HasSplitTests(bytes.NewReader(data), int64(len(data))) {
		// What agenteval run dir/ takes for an eval file, so that a large
		// file is not parsed whole to tell.
		var top map[string]yaml.Node
		err := yaml.Unmarshal(data, &top)
		if _, ok := top["tests"]; err != nil || !ok {
			t.Errorf("%s: HasSplitTests, but the file parsed whole has no tests: (%v)", path, err)
		}
	}
	if streamed := streamMatchesWhole(t, path, data, opt); streamed != split {
		t.Errorf("%s: streamed %v, read a test at a time %v", path, streamed, split)
	}
	return split
}

// streamMatchesWhole loads a file streamed and in memory, and fails the
// test when the two differ: errors, warnings, and the tests once read
// back. path is used when it holds data, else a copy is made.
func streamMatchesWhole(t *testing.T, path string, data []byte, opt Options) (streamedOK bool) {
	t.Helper()
	if b, err := os.ReadFile(path); err != nil || string(b) != string(data) {
		path = filepath.Join(t.TempDir(), filepath.Base(path))
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	whole, errW := Load(path, opt)
	opt.Stream = true
	streamed, errS := Load(path, opt)
	msg := func(err error) string {
		if err == nil {
			return ""
		}
		return err.Error()
	}
	if msg(errW) != msg(errS) {
		t.Errorf("%s: streamed, the errors differ:\nwhole:    %v\nstreamed: %v", path, errW, errS)
	}
	if (whole == nil) != (streamed == nil) {
		t.Fatalf("%s: streamed, suite %v, whole %v", path, streamed, whole)
	}
	if whole == nil {
		return false
	}
	streamedOK = streamed.Streamed()
	if streamed.NumTests() != whole.NumTests() {
		t.Errorf("%s: streamed, %d tests, whole %d", path, streamed.NumTests(), whole.NumTests())
	}
	for i := range min(streamed.NumTests(), whole.NumTests()) {
		if diff := cmp.Diff(whole.Info(i), streamed.Info(i)); diff != "" {
			t.Errorf("%s: streamed, test %d's info differs (-whole +streamed):\n%s", path, i, diff)
		}
	}
	if errS != nil {
		return streamedOK // a suite with errors does not run
	}
	if err := streamed.LoadTests(); err != nil {
		t.Fatalf("%s: read the streamed tests back: %v", path, err)
	}
	if streamed.Tests == nil && whole.Tests != nil {
		streamed.Tests = []agenteval.Test{}
	}
	all := cmp.Exporter(func(reflect.Type) bool { return true })
	if diff := cmp.Diff(whole, streamed, all, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("%s: streamed and read back, the suite differs (-whole +streamed):\n%s", path, diff)
	}
	return streamedOK
}

// Every eval file in the repository's examples and CLI scripts reads the
// same a test at a time as whole.
func TestSplitMatchesWholeOnRepositoryFiles(t *testing.T) {
	var files []string
	for _, glob := range []string{"../examples/*/*.yaml", "../evaltest/testdata/*.yaml", "../cmd/agenteval/starter/evals/*.yaml"} {
		m, _ := filepath.Glob(glob)
		files = append(files, m...)
	}
	splits := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if parseBothWays(t, f, data) {
			splits++
		}
	}
	scripts, _ := filepath.Glob("../cmd/agenteval/testdata/script/*.txtar")
	for _, sc := range scripts {
		ar, err := txtar.ParseFile(sc)
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		for _, f := range ar.Files {
			p := filepath.Join(dir, f.Name)
			os.MkdirAll(filepath.Dir(p), 0o755)
			os.WriteFile(p, f.Data, 0o644)
		}
		for _, f := range ar.Files {
			if ext := filepath.Ext(f.Name); ext != ".yaml" && ext != ".yml" {
				continue
			}
			files = append(files, f.Name)
			if parseBothWays(t, filepath.Join(dir, f.Name), f.Data) {
				splits++
			}
		}
	}
	if len(files) < 20 || splits < 10 {
		t.Errorf("%d files, %d read a test at a time: the corpus is not what this test expects", len(files), splits)
	}
}

// Shapes the split must see through, or leave to the whole parse: both
// ways give the same suite and the same errors, at the same positions.
func TestSplitMatchesWhole(t *testing.T) {
	for _, tc := range []struct {
		name  string
		yaml  string
		split bool // whether the split should hold
	}{
		{"plain", "name: s\ntests:\n  - id: a\n    input: hi\n  - id: b\n    input: yo\n", true},
		{"keys after tests", "tests:\n  - id: a\n    input: hi\n\n# done\nname: s\nthreshold: 0.5\n", true},
		{"unindented items", "tests:\n- id: a\n  input: hi\n- id: b\n  input: yo\nname: s\n", true},
		{"comments at the margin", "tests:\n  - id: a\n# a comment\n    input: hi\n  # another\n  - id: b\n    input: yo\n", true},
		{"CRLF", "tests:\r\n  - id: a\r\n    input: hi\r\n  - id: b\r\n    input: yo\r\n", true},
		{"block scalar", "tests:\n  - id: a\n    input: |\n      line\n        - not an item\n      end\n  - id: b\n    input: yo\n", true},
		{"conversations over several chunks", string(loadsuite.Conversations(3*chunkItems + 5)), true},
		{"syntax error in a test", "tests:\n  - id: a\n    input: hi\n  - id: b\n    input: [unclosed\n  - id: c\n    input: yo\n", false},
		{"quoted text across an item line", "tests:\n  - id: a\n    input: \"one\n  - id: b\n    two\"\n  - id: c\n    input: yo\n", false},
		{"flow list across an item line", "tests:\n  - id: a\n    input: [one,\n  - two]\n", false},
		{"anchor used by the next test", "tests:\n  - id: a\n    input: &q hi\n  - id: b\n    input: *q\n", true},
		{"anchor used a chunk later", "tests:\n  - id: a\n    input: &q hi\n" + strings.Repeat("  - id: b\n    input: *q\n", chunkItems), false},
		{"anchor outside tests", "defaults: &d\n  input: hi\ntests:\n  - id: a\n    <<: *d\n", false},
		{"anchor after tests", "tests:\n  - id: a\n    <<: *d\ndefaults: &d\n  input: hi\n", false},
		{"ampersands in text", "name: R&D & more\ntests:\n  - id: a\n    input: Tom & Jerry\n", true},
		{"tests in flow style", "tests: [{id: a, input: hi}]\n", false},
		{"tests twice", "tests:\n  - id: a\n    input: hi\ntests:\n  - id: b\n    input: yo\n", false},
		{"tests: inside quoted text", "description: \"x\ntests:\n  - id: a\n  \"\ntests2: 1\n", false},
		{"documents", "tests:\n  - id: a\n    input: hi\n---\ntests: []\n", false},
		{"tab indentation", "tests:\n\t- id: a\n", false},
		{"a file of tests", "tests:\n  - other.yaml\n  - id: a\n    input: hi\n", false},
		{"unknown key and missing input", "tests:\n  - id: a\n    inptu: hi\n  - id: b\n", true},
		{"duplicate ids", "tests:\n  - id: a\n    input: hi\n  - id: a\n    input: yo\n", true},
		{"mapping under tests after the items", "tests:\n  - id: a\n    input: hi\n  foo: 1\n", false},
		{"empty tests", "tests:\nname: s\n", false},
		{"judge assertions", "tests:\n  - id: a\n    input: hi\n    assertions: [Says hello]\n    expected_output: hello\n", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := parseBothWays(t, "suite.yaml", []byte(tc.yaml)); got != tc.split {
				t.Errorf("read a test at a time: %v, want %v", got, tc.split)
			}
		})
	}
}

// A syntax error deep in a large file is reported where the whole parse
// reports it.
func TestSplitErrorPosition(t *testing.T) {
	data := string(loadsuite.Conversations(50))
	data = strings.Replace(data, "input: question 2 of conversation 40\n", "input: [question 2 of conversation 40\n", 1)
	parseBothWays(t, "load.yaml", []byte(data))
	_, err := Parse("load.yaml", []byte(data), Options{JudgeAvailable: true})
	if err == nil || !strings.HasPrefix(err.Error(), "load.yaml:") || strings.HasPrefix(err.Error(), "load.yaml:1:") {
		t.Fatalf("error = %v", err)
	}
}

// FuzzSplitMatchesWhole: for any input, reading a test at a time gives
// what parsing the file whole gives.
func FuzzSplitMatchesWhole(f *testing.F) {
	for _, s := range []string{
		"tests:\n  - id: a\n    input: hi\n  - id: b\n    input: yo\nname: s\n",
		"tests:\n- id: a\n  input: \"x\n- id: b\"\n",
		"x: &a 1\ntests:\n  - id: a\n    input: *a\n",
		"tests:\n  - id: a\n    turns:\n      - input: q\n        assertions: [ok]\n    mode: conversation\n",
		"tests:\r\n  - id: a\r\n    input: |\r\n      - b\r\n",
		"name: a\nname: b\ntests:\n  - id: a\n    input: hi\n",
		"tests:\n- \n? -",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		parseBothWays(t, "fuzz.yaml", data)
	})
}
