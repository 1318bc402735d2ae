package report

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/results"
)

//go:embed html/report.css html/report.js
var htmlFiles embed.FS

var (
	reportCSS = mustRead("html/report.css")
	reportJS  = mustRead("html/report.js")
	// The page allows its own style and script, by hash, and nothing
	// else: no network, and no script that found its way into the page
	// could run even if escaping failed.
	cspHashes = "style-src " + cspHash(reportCSS) + "; script-src " + cspHash(reportJS)
)

func mustRead(name string) string {
	b, err := htmlFiles.ReadFile(name)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func cspHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}

// writeHead writes a page up to its data: the policy, the title and the
// style. The page is put together in Go rather than by html/template: any
// template execution in a program keeps every exported method of every
// type in its binary (the linker cannot tell which ones a template calls),
// and the CLI's binary was a third larger for it. The style and the script
// are the package's own files, written as they are.
func writeHead(w io.Writer, title string) error {
	_, err := io.WriteString(w, `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
`+MetaCSP(CSP())+`
<meta name="referrer" content="no-referrer">
<meta name="generator" content="agenteval">
<title>`+escapeHTML(title)+`</title>
<style>`+reportCSS+`</style>
</head>
<body>
<div id="app"><p class="loading">Loading the report…</p><noscript><p class="loading">This report needs JavaScript to show the results; the results are also in the JSONL file it was made from.</p></noscript></div>
`)
	return err
}

// writeTail ends a page with its script.
func writeTail(w io.Writer) error {
	_, err := io.WriteString(w, "<script>"+reportJS+"</script>\n</body>\n</html>\n")
	return err
}

// MetaCSP is the element by which a page states its Content-Security-Policy,
// as report pages write it; the viewer finds and widens it.
func MetaCSP(policy string) string {
	return `<meta http-equiv="Content-Security-Policy" content="` + escapeHTML(policy) + `">`
}

// escapeHTML escapes text for an element's content or a quoted attribute's
// value as html/template does there, byte for byte, so that pages read the
// same as when a template wrote them: the five markup characters, and "+"
// and NUL, whose replacement is U+FFFD.
func escapeHTML(s string) string {
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); i++ {
		var repl string
		switch s[i] {
		case 0:
			repl = string(utf8.RuneError)
		case '"':
			repl = "&#34;"
		case '&':
			repl = "&amp;"
		case '\'':
			repl = "&#39;"
		case '+':
			repl = "&#43;"
		case '<':
			repl = "&lt;"
		case '>':
			repl = "&gt;"
		default:
			continue
		}
		if last == 0 {
			b.Grow(len(s) + 16)
		}
		b.WriteString(s[last:i])
		b.WriteString(repl)
		last = i + 1
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// CSP is the Content-Security-Policy of report pages; the viewer sends it
// as a header too. connect-src 'self' lets a page served by the viewer
// follow a live run; from a file it reaches nothing.
func CSP() string {
	return "default-src 'none'; " + cspHashes + "; img-src data:; connect-src 'self'; base-uri 'none'; form-action 'none'"
}

// HTMLOptions configure an HTML report.
type HTMLOptions struct {
	// Title names the page; empty means the suites' names.
	Title string
	// Compare is a comparison of the two runs (the JSON of
	// compare.Comparison), shown with them side by side.
	Compare json.RawMessage
	// Live is the URL of server-sent events that bring results of a run
	// still in progress (the viewer sets it).
	Live string
	// Home is a link back to the list of runs (the viewer sets it).
	Home string
	// Agreement is how far the judge agreed with human labels (the JSON
	// of calibrate.Report), shown when the run has labels.
	Agreement json.RawMessage
}

// HTMLWriter writes a report as one self-contained HTML file: no network,
// no fonts or scripts from elsewhere; it works from file:// and as a CI
// artifact. Results are streamed into the page in compressed blocks of
// JSON lines, and the page's own script renders the list from a small
// index and each conversation lazily, so a run of 10,000 tests opens at
// once. Only the index and one block are held in memory while writing.
//
// For two runs side by side, Start the second run after the first one's
// results, with EndRun between them.
type HTMLWriter struct {
	bw    *bufio.Writer
	opt   HTMLOptions
	runs  []*htmlRun
	cur   *htmlRun
	open  bool // a run is started and not ended
	begun bool // the page's head is written
	err   error

	lines   bytes.Buffer // the current block's JSON lines
	pending int          // tests in it
	zbuf    bytes.Buffer
	zw      *gzip.Writer
}

type htmlRun struct {
	Header  *results.Header  `json:"header"`
	Summary *results.Summary `json:"summary"`
	Index   []IndexEntry     `json:"index"`
	// Order lists the index's positions in the suite's order, which the
	// page's list follows; omitted when the tests finished in that order.
	// The blocks stay in the order the tests finished, so that a report
	// holds no more than one block in memory.
	Order []int `json:"order,omitempty"`
	// Chunk is how many tests each compressed block holds.
	Chunk int `json:"chunk"`
	// Consistency is how often a voting judge's samples agreed.
	Consistency *Consistency `json:"consistency,omitempty"`
	votes       consistencyAcc
}

// IndexEntry is what a report's test list shows of a test, without its
// transcript. The short JSON names keep the index of a large run small.
type IndexEntry struct {
	ID      string `json:"id"`
	Suite   string `json:"suite,omitempty"`
	Verdict string `json:"v"`
	// Target tells the results of a test apart in a run of several
	// targets; the page shows it on each row then.
	Target   string   `json:"tg,omitempty"`
	Status   string   `json:"st,omitempty"`
	Score    float64  `json:"s"`
	MS       float64  `json:"ms"`
	Tokens   int64    `json:"tok,omitempty"`
	Cost     *float64 `json:"cost,omitempty"`
	Tags     []string `json:"tags,omitempty"`
	Turns    int      `json:"turns,omitempty"`
	Passed   int      `json:"tp,omitempty"` // trials passed
	Trials   int      `json:"tn,omitempty"` // trials run
	Failure  string   `json:"why,omitempty"`
	Messages int      `json:"msgs,omitempty"`
}

// NewHTML writes an HTML report to w.
func NewHTML(w io.Writer, opt HTMLOptions) *HTMLWriter {
	return &HTMLWriter{bw: bufio.NewWriterSize(w, 64<<10), opt: opt}
}

func (h *HTMLWriter) fail(err error) error {
	if h.err == nil && err != nil {
		h.err = err
	}
	return h.err
}

// Start begins a run: the first, or the second of a side by side.
func (h *HTMLWriter) Start(hdr *results.Header) error {
	if h.err != nil {
		return h.err
	}
	if h.open {
		h.EndRun(nil)
	}
	if len(h.runs) == 2 {
		return h.fail(errors.New("html report: at most two runs side by side"))
	}
	if !h.begun {
		h.begun = true
		title := h.opt.Title
		if title == "" && hdr != nil {
			title = strings.Join(hdr.SuiteNames(), ", ")
		}
		if title == "" {
			title = "results"
		}
		if err := writeHead(h.bw, "agenteval · "+title); err != nil {
			return h.fail(fmt.Errorf("html report: %w", err))
		}
	}
	h.cur = &htmlRun{Header: hdr, Index: []IndexEntry{}, Chunk: chunkTests}
	h.runs = append(h.runs, h.cur)
	h.open = true
	return nil
}

// chunkTests is how many tests share a compressed block: a page opens a
// test by inflating its block only (a few milliseconds), and the file is
// several times smaller than the JSON, so it loads fast.
const chunkTests = 200

// compressMetaAbove is the size of index from which it is compressed too.
const compressMetaAbove = 64 << 10

// flushChunk writes the tests gathered so far as one block: their JSON
// lines, gzipped and in base64 (which holds no "<", so nothing can end
// the script element early).
func (h *HTMLWriter) flushChunk() error {
	if h.pending == 0 {
		return nil
	}
	h.zbuf.Reset()
	if h.zw == nil {
		h.zw, _ = gzip.NewWriterLevel(&h.zbuf, gzip.BestSpeed)
	} else {
		h.zw.Reset(&h.zbuf)
	}
	h.zw.Write(h.lines.Bytes())
	if err := h.zw.Close(); err != nil {
		return h.fail(fmt.Errorf("html report: %w", err))
	}
	fmt.Fprintf(h.bw, "<script type=\"application/octet-stream\" class=\"chunk\" data-run=\"%d\">", len(h.runs)-1)
	enc := base64.NewEncoder(base64.StdEncoding, h.bw)
	enc.Write(h.zbuf.Bytes())
	enc.Close()
	h.bw.WriteString("</script>\n")
	h.lines.Reset()
	h.pending = 0
	return nil
}

// Write adds a test's result to the current run.
func (h *HTMLWriter) Write(r *agenteval.Result) error {
	return h.WriteLine(r, nil)
}

// WriteLine adds a test's result given with its JSON as a results file
// holds it (nil: encode r), which is copied into the page as is.
func (h *HTMLWriter) WriteLine(r *agenteval.Result, raw []byte) error {
	if h.err != nil {
		return h.err
	}
	if !h.open {
		if err := h.Start(nil); err != nil {
			return err
		}
	}
	if raw == nil {
		line, err := DetailJSON(r)
		if err != nil {
			return h.fail(err)
		}
		h.lines.Write(line)
	} else {
		// The same object as DetailJSON's, around the line as it is.
		h.lines.WriteString(`{"result":`)
		h.lines.Write(raw)
		if err := writeTurns(&h.lines, r); err != nil {
			return h.fail(err)
		}
		h.lines.WriteByte('}')
	}
	h.lines.WriteByte('\n')
	h.cur.Index = append(h.cur.Index, IndexOf(r))
	h.cur.votes.add(r)
	if h.pending++; h.pending == chunkTests {
		return h.flushChunk()
	}
	return nil
}

// SetLive sets the URL of events that bring later results of the run
// (see HTMLOptions.Live); call it before Close.
func (h *HTMLWriter) SetLive(url string) { h.opt.Live = url }

// WriteRunsPage writes the viewer's list of runs: each item is a run's
// facts as JSON (id, started, status, suites, target, counts, tokens,
// cost, duration_ms, tags), and the page lets a person open one or pick
// two to compare.
func WriteRunsPage(w io.Writer, runs any) error {
	bw := bufio.NewWriter(w)
	if err := writeHead(bw, "agenteval · runs"); err != nil {
		return err
	}
	b, err := json.Marshal(map[string]any{"mode": "runs", "runs_list": runs})
	if err != nil {
		return err
	}
	bw.WriteString(`<script type="application/json" id="meta">`)
	bw.Write(b)
	bw.WriteString("</script>\n")
	if err := writeTail(bw); err != nil {
		return err
	}
	return bw.Flush()
}

// EndRun closes the current run's data, with its summary.
func (h *HTMLWriter) EndRun(sum *results.Summary) {
	if !h.open {
		return
	}
	h.cur.Summary = sum
	h.cur.Order = indexOrder(h.cur.Header, h.cur.Index)
	h.cur.Consistency = h.cur.votes.result()
	h.flushChunk()
	h.open = false
}

// indexOrder is the positions of a run's index in the suite's order, or
// nil when the index is in that order already.
func indexOrder(hdr *results.Header, index []IndexEntry) []int {
	o := newOrder(hdr)
	pos := make([]int, len(index))
	for i := range pos {
		pos[i] = i
	}
	keyOf := func(i int) resultKey { return resultKey{index[i].Suite, index[i].ID, index[i].Target} }
	slices.SortStableFunc(pos, func(a, b int) int { return o.compare(keyOf(a), keyOf(b)) })
	for i, p := range pos {
		if i != p {
			return pos
		}
	}
	return nil
}

// Close ends the last run with its summary and writes the rest of the
// page.
func (h *HTMLWriter) Close(sum *results.Summary) error {
	if h.err != nil {
		return h.err
	}
	if !h.begun {
		if err := h.Start(nil); err != nil {
			return err
		}
	}
	h.EndRun(sum)
	meta := map[string]any{"runs": h.runs}
	if len(h.opt.Compare) > 0 {
		meta["compare"] = h.opt.Compare
	}
	if h.opt.Live != "" {
		meta["live"] = h.opt.Live
	}
	if h.opt.Home != "" {
		meta["home"] = h.opt.Home
	}
	if len(h.opt.Agreement) > 0 {
		meta["agreement"] = h.opt.Agreement
	}
	b, err := json.Marshal(meta) // escapes <, > and &: safe inside <script>
	if err != nil {
		return h.fail(fmt.Errorf("html report: %w", err))
	}
	if len(b) < compressMetaAbove {
		h.bw.WriteString(`<script type="application/json" id="meta">`)
		h.bw.Write(b)
		h.bw.WriteString("</script>\n")
	} else {
		// A large run's index: the page parses a few hundred kilobytes
		// of base64 faster than megabytes of JSON, and inflates it in
		// milliseconds.
		h.zbuf.Reset()
		zw, _ := gzip.NewWriterLevel(&h.zbuf, gzip.BestSpeed)
		zw.Write(b)
		zw.Close()
		h.bw.WriteString(`<script type="application/octet-stream" id="meta-z">`)
		enc := base64.NewEncoder(base64.StdEncoding, h.bw)
		enc.Write(h.zbuf.Bytes())
		enc.Close()
		h.bw.WriteString("</script>\n")
	}
	if err := writeTail(h.bw); err != nil {
		return h.fail(fmt.Errorf("html report: %w", err))
	}
	return h.fail(h.bw.Flush())
}

// Detail is how a page receives one test: the result, and where each
// scripted turn begins in its transcript (and in each trial's).
type Detail struct {
	Result     *agenteval.Result `json:"result"`
	Turns      []int             `json:"turns,omitempty"`
	TrialTurns [][]int           `json:"trial_turns,omitempty"`
}

// DetailJSON encodes a test for a page: compact, and with <, > and &
// escaped, so no content can end the script element that holds it.
func DetailJSON(r *agenteval.Result) ([]byte, error) {
	d := Detail{Result: r, Turns: TurnStarts(r.Output, r.Scores)}
	for _, tr := range r.Trials {
		d.TrialTurns = append(d.TrialTurns, TurnStarts(tr.Output, tr.Scores))
	}
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(d); err != nil {
		return nil, fmt.Errorf("encode result %s: %w", r.TestID, err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// writeTurns writes DetailJSON's turn fields, each with a leading comma.
func writeTurns(b *bytes.Buffer, r *agenteval.Result) error {
	d := Detail{Turns: TurnStarts(r.Output, r.Scores)}
	for _, tr := range r.Trials {
		d.TrialTurns = append(d.TrialTurns, TurnStarts(tr.Output, tr.Scores))
	}
	if d.Turns != nil {
		t, err := json.Marshal(d.Turns)
		if err != nil {
			return err
		}
		b.WriteString(`,"turns":`)
		b.Write(t)
	}
	if d.TrialTurns != nil {
		t, err := json.Marshal(d.TrialTurns)
		if err != nil {
			return err
		}
		b.WriteString(`,"trial_turns":`)
		b.Write(t)
	}
	return nil
}

// IndexOf is what a report's test list knows of a test.
func IndexOf(r *agenteval.Result) IndexEntry {
	e := IndexEntry{ID: r.TestID, Suite: r.Suite, Target: r.Target, Verdict: string(r.Verdict), Status: string(r.ExecutionStatus),
		Score: r.Score, MS: r.DurationMS, Tags: r.Tags, Failure: FirstFailure(r), Messages: len(r.Output)}
	if r.Usage != nil {
		e.Tokens = r.Usage.InputTokens + r.Usage.OutputTokens
		e.Cost = r.Usage.CostUSD
	}
	for _, s := range r.Scores {
		if isTurn(s.Name) {
			e.Turns++
		}
	}
	if len(r.Trials) > 1 {
		e.Trials = len(r.Trials)
		for _, tr := range r.Trials {
			if tr.Verdict == agenteval.VerdictPass {
				e.Passed++
			}
		}
	}
	return e
}

// FirstFailure says in one line why a test did not pass: its error, or
// the first failing score (the deepest reason on the way), or "".
func FirstFailure(r *agenteval.Result) string {
	if r.Verdict == agenteval.VerdictPass {
		return ""
	}
	if r.Error != "" {
		return oneLine(r.Error, 200)
	}
	var find func(path string, ss []agenteval.Score) string
	find = func(path string, ss []agenteval.Score) string {
		for _, s := range ss {
			if s.Verdict != agenteval.VerdictFail && s.Verdict != agenteval.VerdictError {
				continue
			}
			p := s.Name
			if path != "" {
				p = path + " › " + s.Name
			}
			if deeper := find(p, s.Scores); deeper != "" {
				return deeper
			}
			for _, a := range s.Assertions {
				if !a.Passed {
					why := a.Text
					if a.Evidence != "" {
						why += ": " + a.Evidence
					}
					return oneLine(p+": "+why, 200)
				}
			}
			return oneLine(p+": "+s.Reason, 200)
		}
		return ""
	}
	return find("", r.Scores)
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// isTurn reports whether a score is a scripted turn's (turn-N).
func isTurn(name string) bool {
	if !strings.HasPrefix(name, "turn-") || len(name) == len("turn-") {
		return false
	}
	for _, c := range name[len("turn-"):] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// TurnStarts finds where each scripted turn begins in a transcript: the
// index of the user message that opened turn k, for the turns that ran.
// Results do not mark turns, so they are found from the end: the turns
// that ran (turn-N scores not skipped) are the last user messages; user
// messages before them came with the test's input.
func TurnStarts(out agenteval.Conversation, scores []agenteval.Score) []int {
	ran := 0
	for _, s := range scores {
		// A turn cut off (on_turn_failure: stop) is a skip that would have
		// counted; a turn with nothing to grade is a skip of weight 0, and
		// it ran.
		if isTurn(s.Name) && (s.Verdict != agenteval.VerdictSkip || s.Weight == 0) {
			ran++
		}
	}
	if ran == 0 {
		return nil
	}
	var users []int
	for i, m := range out {
		if m.Role == agenteval.RoleUser {
			users = append(users, i)
		}
	}
	if len(users) < ran {
		ran = len(users)
	}
	return users[len(users)-ran:]
}
