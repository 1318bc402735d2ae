package agenteval

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// normLines trims each line and drops the blank ones, so that a snippet
// matches its example whatever the indentation.
func normLines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

func containsRun(hay, needle []string) bool {
	for i := 0; i+len(needle) <= len(hay); i++ {
		ok := true
		for j := range needle {
			if hay[i+j] != needle[j] {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// TestREADMEGoSnippetsAreExamples: every Go snippet in the README is taken
// from a package example (or example test), which go test compiles and
// runs, so the README's code works.
func TestREADMEGoSnippetsAreExamples(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob("*/example_test.go")
	if len(files) < 5 {
		t.Fatalf("examples: %v", files)
	}
	var examples [][]string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		examples = append(examples, normLines(string(b)))
	}
	blocks := strings.Split(string(readme), "```go\n")[1:]
	if len(blocks) < 5 {
		t.Fatalf("only %d Go snippets in the README", len(blocks))
	}
	for _, b := range blocks {
		snippet := normLines(strings.SplitN(b, "```", 2)[0])
		found := false
		for _, e := range examples {
			if containsRun(e, snippet) {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("README snippet is in no example_test.go:\n%s", strings.Join(snippet, "\n"))
		}
	}
}
