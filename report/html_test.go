package report

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strings"
	"testing"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/results"
	"github.com/google/go-cmp/cmp"
)

var chunkRE = regexp.MustCompile(`<script type="application/octet-stream" class="chunk" data-run="(\d)">([^<]*)</script>`)

// unpack reverses the page's packing: base64 of gzip.
func unpack(t *testing.T, b64 string) []byte {
	t.Helper()
	z, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(z))
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// blocks inflates a page's data blocks back into detail lines, per run.
func blocks(t *testing.T, page string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, m := range chunkRE.FindAllStringSubmatch(page, -1) {
		b := unpack(t, m[2])
		out[m[1]] = append(out[m[1]], strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")...)
	}
	return out
}

// metaOf reads a page's index: JSON, or gzipped in base64 when large.
func metaOf(t *testing.T, page string) []byte {
	t.Helper()
	const plain, packed = `<script type="application/json" id="meta">`, `<script type="application/octet-stream" id="meta-z">`
	if i := strings.Index(page, plain); i >= 0 {
		body := page[i+len(plain):]
		return []byte(body[:strings.Index(body, "</script>")])
	}
	i := strings.Index(page, packed)
	if i < 0 {
		t.Fatal("the page has no index")
	}
	body := page[i+len(packed):]
	return unpack(t, body[:strings.Index(body, "</script>")])
}

func TestHTMLPage(t *testing.T) {
	var buf bytes.Buffer
	w := NewHTML(&buf, HTMLOptions{})
	evil := conversation()
	evil.TestID = `</script><script>alert("id")</script>`
	w.Start(&results.Header{RunID: "r1", Suites: []results.SuiteFile{{Path: "s.yaml", Name: "<b>suite</b>"}}})
	var sum results.Summary
	for i := range 2*chunkTests + 1 {
		r := conversation()
		if i == 7 {
			r = evil
		} else {
			r.TestID = fmt.Sprintf("t%03d", i)
		}
		sum.Add(r)
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(&sum); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	// Nothing from the results can end an element or add one: the only
	// script elements are the page's own.
	if !strings.Contains(page, `id="meta-z"`) {
		t.Error("the index of 401 tests is not compressed")
	}
	if n := strings.Count(page, "<script"); n != 3+2 {
		t.Errorf("%d script elements, want 3 data blocks, the index and the code", n)
	}
	if strings.Contains(page, `<script>alert`) || strings.Contains(page, "<b>suite</b>") {
		t.Error("result content reached the page as markup")
	}
	if !strings.Contains(page, `<title>agenteval · &lt;b&gt;suite&lt;/b&gt;</title>`) {
		t.Error("the title is not escaped")
	}
	// The page allows exactly its own script and style, by hash.
	sum256 := sha256.Sum256([]byte(reportJS))
	if !strings.Contains(page, "<script>"+reportJS+"</script>") || !strings.Contains(CSP(), "'sha256-"+base64.StdEncoding.EncodeToString(sum256[:])+"'") {
		t.Error("the script's hash is not in the policy")
	}
	if strings.Contains(page, "http://") || strings.Contains(page, "https://") {
		t.Error("the page refers to the network")
	}
	lines := blocks(t, page)["0"]
	if len(lines) != 2*chunkTests+1 {
		t.Fatalf("%d tests in the blocks, want %d", len(lines), 2*chunkTests+1)
	}
	var d Detail
	if err := json.Unmarshal([]byte(lines[7]), &d); err != nil || d.Result.TestID != evil.TestID || !cmp.Equal(d.Turns, []int{1, 5, 9}) {
		t.Errorf("test 7: %+v, %v", d, err)
	}
	var meta struct {
		Runs []struct {
			Index []IndexEntry `json:"index"`
			Chunk int          `json:"chunk"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(metaOf(t, page), &meta); err != nil {
		t.Fatal(err)
	}
	e := meta.Runs[0].Index[7]
	if e.ID != evil.TestID || e.Verdict != "fail" || e.Turns != 3 || !strings.Contains(e.Failure, "turn-3 › tool_calls") || meta.Runs[0].Chunk != chunkTests {
		t.Errorf("index entry = %+v", e)
	}
}

// A line copied from a results file makes the same test as the result
// encoded again.
func TestHTMLWriteLine(t *testing.T) {
	r := conversation()
	r.Trials = []agenteval.Trial{{Trial: 1, Output: r.Output, Scores: r.Scores}, {Trial: 2}}
	raw, _ := json.Marshal(r)
	var a, b bytes.Buffer
	wa, wb := NewHTML(&a, HTMLOptions{}), NewHTML(&b, HTMLOptions{})
	wa.Write(r)
	wb.WriteLine(r, raw)
	wa.Close(nil)
	wb.Close(nil)
	var da, db Detail
	json.Unmarshal([]byte(blocks(t, a.String())["0"][0]), &da)
	json.Unmarshal([]byte(blocks(t, b.String())["0"][0]), &db)
	if diff := cmp.Diff(da, db); diff != "" || len(db.TrialTurns) != 2 {
		t.Errorf("(-encoded +copied):\n%s", diff)
	}
}

func TestHTMLSideBySide(t *testing.T) {
	var buf bytes.Buffer
	w := NewHTML(&buf, HTMLOptions{Compare: json.RawMessage(`{"summary":{"regressed":1}}`)})
	w.Start(&results.Header{RunID: "a"})
	w.Write(conversation())
	w.EndRun(&results.Summary{Total: 1})
	w.Start(&results.Header{RunID: "b"})
	w.Write(conversation())
	w.Close(&results.Summary{Total: 1})
	got := blocks(t, buf.String())
	if len(got["0"]) != 1 || len(got["1"]) != 1 || !strings.Contains(buf.String(), `"compare":{"summary":{"regressed":1}}`) {
		t.Errorf("runs %v", got)
	}
	if err := w.Start(&results.Header{RunID: "c"}); err == nil {
		t.Error("a third run was accepted")
	}
}
