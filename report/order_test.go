package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/results"
)

// orderHeader is a run of two suites, listed against their names' order,
// on two targets, likewise.
func orderHeader() *results.Header {
	return &results.Header{RunID: "r", Command: "run", Target: "zed, alpha",
		Suites: []results.SuiteFile{{Path: "evals/shop.yaml", Name: "shop"}, {Path: "evals/data.jsonl"}}}
}

// orderResults are a run's results in the suite's order: suites as the
// header lists them (one named by its path), ids with numbers by value,
// targets as the header lists them, then a suite the header does not name.
func orderResults() []*agenteval.Result {
	var rs []*agenteval.Result
	add := func(suite, id, target string, pass bool) {
		r := &agenteval.Result{Suite: suite, TestID: id, Target: target, Score: 1, Verdict: agenteval.VerdictPass, ExecutionStatus: agenteval.StatusOK}
		if !pass {
			r.Score, r.Verdict, r.ExecutionStatus = 0.5, agenteval.VerdictFail, agenteval.StatusQualityFailure
			r.Scores = []agenteval.Score{{Name: "turn-1", Score: 0.5, Verdict: agenteval.VerdictFail, Weight: 1, Reason: "wrong on " + id}}
		}
		rs = append(rs, r)
	}
	for _, id := range []string{"case-2", "case-10", "refund"} {
		add("shop", id, "zed", id != "case-10")
		add("shop", id, "alpha", id == "refund")
	}
	add("evals/data.jsonl", "a", "zed", false)
	add("evals/data.jsonl", "b", "zed", true)
	add("extra", "a", "zed", false)
	return rs
}

// shuffled are the results in the orders tests could finish in.
func shuffled() [][]*agenteval.Result {
	rs := orderResults()
	rev := slices.Clone(rs)
	slices.Reverse(rev)
	var odd []*agenteval.Result
	for i := 1; i < len(rs); i += 2 {
		odd = append(odd, rs[i])
	}
	for i := 0; i < len(rs); i += 2 {
		odd = append(odd, rs[i])
	}
	return [][]*agenteval.Result{rs, rev, odd}
}

func writeRun(t *testing.T, w Writer, h *results.Header, rs []*agenteval.Result) {
	t.Helper()
	if st, ok := w.(Starter); ok && h != nil {
		if err := st.Start(h); err != nil {
			t.Fatal(err)
		}
	}
	var sum results.Summary
	for _, r := range rs {
		sum.Add(r)
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(&sum); err != nil {
		t.Fatal(err)
	}
}

// TestResultsInSuiteOrder checks that the writers of everything read after
// the fact list results in the suite's order, whatever order the tests
// finished in: two runs of a suite then read alike.
func TestResultsInSuiteOrder(t *testing.T) {
	for _, format := range []string{"table", "markdown", "junit"} {
		t.Run(format, func(t *testing.T) {
			var first string
			for i, rs := range shuffled() {
				var buf bytes.Buffer
				w, err := New(format, &buf, Options{Table: TableOptions{Details: 1}})
				if err != nil {
					t.Fatal(err)
				}
				writeRun(t, w, orderHeader(), rs)
				if i == 0 {
					first = buf.String()
					continue
				}
				if buf.String() != first {
					t.Errorf("finished in another order, written differently:\n%s\nfirst:\n%s", buf.String(), first)
				}
			}
			// And that order is the suite's.
			want := []string{"case-2 ", "case-10 ", "refund ", "a ", "b ", "a "}
			if format == "markdown" {
				want = []string{"shop/case-2 \\[alpha\\]", "shop/case-10 \\[zed\\]", "shop/case-10 \\[alpha\\]",
					"evals/data.jsonl/a \\[zed\\]", "extra/a \\[zed\\]"}
			}
			if format == "junit" {
				want = []string{`"case-2 [zed]" classname="shop"`, `"case-2 [alpha]"`, `"case-10 [zed]"`, `"case-10 [alpha]"`, `"refund [zed]"`, `"refund [alpha]"`,
					`"a [zed]" classname="evals/data.jsonl"`, `"b [zed]"`, `"a [zed]" classname="extra"`}
			}
			rest := first
			for _, w := range want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("%q is not where the suite's order puts it in:\n%s", w, first)
				}
				rest = rest[i+len(w):]
			}
		})
	}
}

// TestHTMLListInSuiteOrder checks that a report's list follows the suite's
// order: the page lists the index by its order.
func TestHTMLListInSuiteOrder(t *testing.T) {
	want := orderResults()
	for i, rs := range shuffled() {
		var buf bytes.Buffer
		writeRun(t, NewHTML(&buf, HTMLOptions{}), orderHeader(), rs)
		var meta struct {
			Runs []struct {
				Index []IndexEntry `json:"index"`
				Order []int        `json:"order"`
			} `json:"runs"`
		}
		if err := json.Unmarshal(metaOf(t, buf.String()), &meta); err != nil {
			t.Fatal(err)
		}
		run := meta.Runs[0]
		if i == 0 && run.Order != nil {
			t.Errorf("results already in order, yet an order is given: %v", run.Order)
		}
		order := run.Order
		if order == nil {
			for k := range run.Index {
				order = append(order, k)
			}
		}
		var got, wantKeys []string
		for n, k := range order {
			e := run.Index[k]
			got = append(got, e.Suite+"/"+e.ID+" "+e.Target)
			wantKeys = append(wantKeys, want[n].Suite+"/"+want[n].TestID+" "+want[n].Target)
		}
		if !slices.Equal(got, wantKeys) {
			t.Errorf("finished in order %d, listed as\n%v\nwant\n%v", i, got, wantKeys)
		}
	}
}

// TestMarkdownListsFirstFailures checks that, with more failures than the
// page lists, the ones listed are the first in the suite's order, not the
// first to finish.
func TestMarkdownListsFirstFailures(t *testing.T) {
	var rs []*agenteval.Result
	for i := range 3*maxMarkdownFailures + 7 {
		rs = append(rs, &agenteval.Result{Suite: "s", TestID: fmt.Sprintf("t%d", i), Verdict: agenteval.VerdictFail, ExecutionStatus: agenteval.StatusQualityFailure})
	}
	slices.Reverse(rs)
	var buf bytes.Buffer
	writeRun(t, NewMarkdown(&buf), &results.Header{Suites: []results.SuiteFile{{Name: "s"}}}, rs)
	out := buf.String()
	if !strings.Contains(out, "| s/t0 |") || !strings.Contains(out, fmt.Sprintf("| s/t%d |", maxMarkdownFailures-1)) ||
		strings.Contains(out, fmt.Sprintf("| s/t%d |", maxMarkdownFailures)) || !strings.Contains(out, fmt.Sprintf("| … and %d more |", 2*maxMarkdownFailures+7)) {
		t.Errorf("want t0 … t%d listed and %d more:\n%s", maxMarkdownFailures-1, 2*maxMarkdownFailures+7, out)
	}
}

// TestTableLiveOnATerminal checks that the table prints each row as its
// test finishes only on a terminal, where a run is watched, and that
// InOrder holds the rows there too.
func TestTableLiveOnATerminal(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "table.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if NewTable(f, TableOptions{}).(*tableWriter).hold != true {
		t.Error("a table written to a file prints rows as they come")
	}
	tty, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Skip(err)
	}
	defer tty.Close()
	// /dev/null is a character device, as a terminal is.
	w := NewTable(tty, TableOptions{})
	if w.(*tableWriter).hold {
		t.Error("a table on a terminal holds its rows")
	}
	if !InOrder(Multi{w}).(Multi)[0].(*tableWriter).hold {
		t.Error("InOrder left the table on a terminal printing rows as they come")
	}
}

func TestCompareIDs(t *testing.T) {
	ids := []string{"t10", "t2", "t1", "b", "a10b", "a2b", "t02", "a", ""}
	slices.SortFunc(ids, compareIDs)
	want := []string{"", "a", "a2b", "a10b", "b", "t1", "t02", "t2", "t10"}
	if !slices.Equal(ids, want) {
		t.Errorf("sorted %q, want %q", ids, want)
	}
}

// TestScoreKeepsInputOrder checks that a scored dataset's results, which
// score writes in input order, stay in that order: it is their place in
// the file, which ids would lose.
func TestScoreKeepsInputOrder(t *testing.T) {
	h := &results.Header{Command: "score", Suites: []results.SuiteFile{{Path: "b.jsonl"}, {Path: "a.jsonl"}}}
	var rs []*agenteval.Result
	for _, k := range []string{"a.jsonl/z", "b.jsonl/y", "a.jsonl/x", "b.jsonl/w"} {
		suite, id, _ := strings.Cut(k, "/")
		rs = append(rs, &agenteval.Result{Suite: suite, TestID: id, Verdict: agenteval.VerdictFail, ExecutionStatus: agenteval.StatusQualityFailure})
	}
	var buf bytes.Buffer
	writeRun(t, NewMarkdown(&buf), h, rs)
	if !regexp.MustCompile(`(?s)b\.jsonl/y .*b\.jsonl/w .*a\.jsonl/z .*a\.jsonl/x `).MatchString(buf.String()) {
		t.Errorf("want each file's rows in input order, the files as the header lists them:\n%s", buf.String())
	}
}
