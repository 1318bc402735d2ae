package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/agenteval/agenteval/results"
)

// New makes each format's writer as its own constructor does, and an
// unknown name is an error that says which names there are.
func TestNew(t *testing.T) {
	for _, format := range []string{"jsonl", "json", "table", "junit", "markdown", "html"} {
		var got bytes.Buffer
		w, err := New(format, &got, Options{Table: TableOptions{Metrics: []string{"acc", "f1"}}})
		if err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		var want bytes.Buffer
		var direct Writer
		switch format {
		case "jsonl":
			direct = NewJSONL(&want)
		case "json":
			direct = NewJSON(&want)
		case "table":
			direct = NewTable(&want, TableOptions{Metrics: []string{"acc", "f1"}})
		case "junit":
			direct = NewJUnit(&want)
		case "markdown":
			direct = NewMarkdown(&want)
		case "html":
			direct = NewHTML(&want, HTMLOptions{})
		}
		for _, w := range []Writer{w, direct} {
			if s, ok := w.(Starter); ok {
				if err := s.Start(&results.Header{RunID: "r1", Suites: []results.SuiteFile{{Path: "s.yaml", Name: "s"}}}); err != nil {
					t.Fatalf("%s: %v", format, err)
				}
			}
			write(t, w)
		}
		if got.Len() == 0 || !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Errorf("%s: New wrote %d bytes, the format's constructor %d; want the same output", format, got.Len(), want.Len())
		}
	}
	_, err := New("xml", &bytes.Buffer{}, Options{})
	if err == nil || !strings.Contains(err.Error(), `unknown format "xml"`) || !strings.Contains(err.Error(), "jsonl, json, table, junit, markdown, html") {
		t.Errorf("unknown format: err = %v", err)
	}
}
