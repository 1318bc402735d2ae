package view

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"io"
	"strings"

	"github.com/agenteval/agenteval/report"
)

// The labelling part of a run's page: a script and a style of the
// viewer's own, allowed by hash like the report's.
var (
	//go:embed labels.js
	labelsJS string
	//go:embed labels.css
	labelsCSS string
)

func cspHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}

// labelCSP is the report's policy with the labelling script and style
// allowed too; nothing else changes (connect-src 'self' already lets the
// page reach the viewer, and only it).
func labelCSP() string {
	p := report.CSP()
	p = strings.Replace(p, "style-src ", "style-src "+cspHash(labelsCSS)+" ", 1)
	return strings.Replace(p, "script-src ", "script-src "+cspHash(labelsJS)+" ", 1)
}

// labelPage rewrites a report page on its way out to add labelling: the
// policy in the page's head allows the labelling script and style, and
// they come at the end of the body with the page's facts (the run, who
// labels, and the session token when labels can be written). The page
// is streamed: only its head, and the last bytes of it, are held.
//
// The report package writes the page; its policy is in a meta element
// as well as in the viewer's header, and a page obeys both.
type labelPage struct {
	w        io.Writer
	old      []byte // the report's policy element
	new      []byte // the widened one
	headDone bool
	head     bytes.Buffer
	tail     []byte
	err      error
}

// headLimit is how much of a page is held looking for its policy: the
// head is a few kilobytes, styles included.
const headLimit = 256 << 10

// tailHold is how many bytes are held back at the end, where the body
// closes.
const tailHold = 64

func newLabelPage(w io.Writer) *labelPage {
	return &labelPage{w: w, old: []byte(report.MetaCSP(report.CSP())), new: []byte(report.MetaCSP(labelCSP()))}
}

func (p *labelPage) Write(b []byte) (int, error) {
	if p.err != nil {
		return 0, p.err
	}
	n := len(b)
	if !p.headDone {
		p.head.Write(b)
		h := p.head.Bytes()
		i := bytes.Index(h, p.old)
		if i < 0 && len(h) < headLimit {
			return n, nil
		}
		p.headDone = true
		if i >= 0 {
			h = append(append(append([]byte(nil), h[:i]...), p.new...), h[i+len(p.old):]...)
		}
		// Else the page is not what the viewer knows: it goes out as it
		// is, and the labelling script will be refused by its policy.
		b = h
	}
	p.tail = append(p.tail, b...)
	if len(p.tail) > tailHold {
		cut := len(p.tail) - tailHold
		if _, err := p.w.Write(p.tail[:cut]); err != nil {
			p.err = err
			return 0, err
		}
		p.tail = append(p.tail[:0], p.tail[cut:]...)
	}
	return n, nil
}

// Finish writes the rest of the page with the labelling part before the
// body's end.
func (p *labelPage) Finish(facts any) error {
	if p.err != nil {
		return p.err
	}
	rest := p.tail
	if !p.headDone {
		rest = append(p.head.Bytes(), rest...)
	}
	var extra bytes.Buffer
	js, err := json.Marshal(facts) // escapes <, > and &: safe inside <script>
	if err != nil {
		return err
	}
	extra.WriteString(`<script type="application/json" id="agenteval-labels">`)
	extra.Write(js)
	extra.WriteString("</script>\n<style>")
	extra.WriteString(labelsCSS)
	extra.WriteString("</style>\n<script>")
	extra.WriteString(labelsJS)
	extra.WriteString("</script>\n")
	at := bytes.LastIndex(rest, []byte("</body>"))
	if at < 0 {
		at = len(rest)
	}
	out := append(append(append([]byte(nil), rest[:at]...), extra.Bytes()...), rest[at:]...)
	_, err = p.w.Write(out)
	return err
}
