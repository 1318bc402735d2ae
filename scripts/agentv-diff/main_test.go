package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agenteval/agenteval/internal/fakellm"
)

var update = flag.Bool("update", false, "rewrite the golden report")

// TestList: the tests of each file are those either tool ran, AgentV's
// order first, as tests.tsv lists them.
func TestList(t *testing.T) {
	var out bytes.Buffer
	if err := run([]string{"list", "--work", "testdata/work"}, &out); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("testdata/work/tests.tsv")
	if err != nil {
		t.Fatal(err)
	}
	if out.String() != string(want) {
		t.Errorf("list:\n%s\nwant:\n%s", out.String(), want)
	}
}

// TestReport compares a small work folder (one test the same in both
// tools, one that differs in all three ways, one agenteval refused) with
// the golden report.
func TestReport(t *testing.T) {
	var out bytes.Buffer
	jsonPath := filepath.Join(t.TempDir(), "report.json")
	if err := run([]string{"report", "--work", "testdata/work", "--ref", "v0 (abc)", "--agentv", "0.0.0", "--json", jsonPath}, &out); err != nil {
		t.Fatal(err)
	}
	golden := "testdata/report.md"
	if *update {
		if err := os.WriteFile(golden, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if out.String() != string(want) {
		t.Errorf("report differs from %s (go test -update to rewrite):\n%s", golden, out.String())
	}
	if _, err := os.Stat(jsonPath); err != nil {
		t.Errorf("--json: %v", err)
	}
}

func TestNormalizeError(t *testing.T) {
	tests := []struct{ in, want string }{
		{"keyword_check: script uv cannot run: the program uv is not installed", "script uv cannot run: the program uv is not installed"},
		{"/tmp/w/tree/a.yaml:6:14: bad target\nmore", "PATH:N:N: bad target"},
		{"Error: Skipping test 'x-1': file not found: ../p.ts", "Error: Skipping test '…': file not found: ../p.ts"},
		{"", "no result and no error message"},
	}
	for _, tt := range tests {
		if got := normalizeError(tt.in); got != tt.want {
			t.Errorf("normalizeError(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestMissingLines: material is looked for line by line, white space,
// trailing commas, role labels and AgentV's item labels aside.
func TestMissingLines(t *testing.T) {
	haystack := normalize(`<reference id="n">{"b": 2, "a": 1}</reference id="n">
<criterion key="c1" id="n">Mentions the &lt;order> number</criterion id="n">
<user id="n">Hi</user id="n">`)
	tests := []struct {
		name, text string
		missing    int
	}{
		{"JSON indented otherwise", "{\n  \"a\": 1,\n  \"b\": 2\n}", 0},
		{"rubric item label", "- [order] (REQUIRED): Mentions the <order> number", 0},
		{"role marker and prefix", "@[User]:\nuser: Hi", 0},
		{"missing line", "Mentions the order number\nSays goodbye", 2},
	}
	for _, tt := range tests {
		missing, _ := missingLines(piece{"x", tt.text}, haystack)
		if len(missing) != tt.missing {
			t.Errorf("%s: missing %q, want %d lines", tt.name, missing, tt.missing)
		}
	}
}

// TestPieces: AgentV's sections and agenteval's blocks, blocks of blocks
// given as their inner blocks.
func TestPieces(t *testing.T) {
	av := agentvPieces([]fakellm.LogEntry{{Messages: []fakellm.LogMessage{{Role: "system", Content: "schema"},
		{Role: "user", Content: "Intro\n[[ ## criteria ## ]]\nC\n\n[[ ## reference_answer ## ]]\n\n[[ ## answer ## ]]\nA"}}}})
	if got := names(av); got != "criteria answer" {
		t.Errorf("AgentV pieces: %s", got)
	}
	ae := agentevalPieces([]fakellm.LogEntry{{Messages: []fakellm.LogMessage{{Role: "user",
		Content: `<conversation id="abcdef012345"><user id="abcdef012345">Q</user id="abcdef012345"></conversation id="abcdef012345"><criterion key="c1" id="abcdef012345">C</criterion id="abcdef012345"><var name="rubric" id="abcdef012345">R</var id="abcdef012345">`}}}})
	if got := names(ae); got != "conversation/user criterion var rubric" {
		t.Errorf("agenteval pieces: %s", got)
	}
	plain := agentevalPieces([]fakellm.LogEntry{{Messages: []fakellm.LogMessage{{Role: "user", Content: "no blocks"}}}})
	if got := names(plain); got != "prompt" {
		t.Errorf("agenteval prompt without blocks: %s", got)
	}
}

func names(ps []piece) string {
	var out []string
	for _, p := range ps {
		out = append(out, p.name)
	}
	return strings.Join(out, " ")
}
