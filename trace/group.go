package trace

import (
	"fmt"
	"io"
	"iter"

	"github.com/agenteval/agenteval"
)

// kind says what a record contributes to its conversation.
type kind int

const (
	kindOther   kind = iota // carries nothing we map (an HTTP span, say)
	kindLLM                 // a model call: input history and output messages
	kindTool                // a tool execution
	kindAgent               // an agent invocation: its name, maybe its input and output
	kindMessage             // one message of an older per-message event
	kindIgnored             // known, and deliberately not part of the conversation
	kindUsage               // a model call whose messages another record holds: its usage only
)

// record is one span, event or log record of a span format, reduced to
// what a conversation needs.
type record struct {
	ord    int // order in the file
	pos    Pos
	conv   string // conversation id, when the record carries one
	trace  string
	span   string // the span it is, or the span an event belongs to
	parent string
	name   string
	start  int64 // unix nanoseconds; 0 when unknown
	end    int64
	kind   kind

	agent    string
	model    string
	respID   string // gen_ai.response.id of a model call
	usage    usage
	system   []string // system instructions given apart from the history
	input    []msg
	output   []msg
	tool     *toolExec
	message  *msg // kindMessage
	choice   bool // kindMessage: a model output (gen_ai.choice)
	fromLogs bool // an event record, whose span may also be a record
	broken   bool // could not be read; carries only its problem
	errText  string
	problems []problem
}

// msg is a message with the things our Message has no field for.
type msg struct {
	role      string
	content   string
	parts     []agenteval.Part
	calls     []call
	callID    string // for tool results
	name      string
	reasoning string
	isError   bool
	respID    string
	meta      map[string]any // the message's own metadata
}

type call struct {
	id, name   string
	args       map[string]any
	rawArgs    string
	keyOrder   map[string][]string
	durationMS float64
}

type toolExec struct {
	call      call
	result    string
	hasResult bool
	isError   bool
}

type usage struct {
	input, output, cacheRead int64
	set                      bool
}

func (u *usage) add(o usage) {
	u.input += o.input
	u.output += o.output
	u.cacheRead += o.cacheRead
	u.set = u.set || o.set
}

// scanFunc reads a span format's file from its start and yields its
// records in file order. A *agenteval.PosError yielded as the error ends
// the file there. With keysOnly, records need only their conversation and
// trace ids (and broken): the first pass reads nothing else.
type scanFunc func(r io.Reader, keysOnly bool, yield func(*record, error) bool)

// grouped reads a span format in two passes. The first learns, for every
// conversation, the order of its last record; the second collects each
// conversation's records and assembles it as soon as the last one is read.
// Records join a conversation by their conversation id, else by the
// conversation id some other record of their trace carries, else by trace.
type grouped struct {
	in     *input
	scan   scanFunc
	format string

	last    map[string]int // group key -> order of its last record
	traceCv map[string]string
	stopErr error // where pass one stopped on broken input

	next2         func() (*record, error, bool)
	stop2         func()
	ord           int
	open          map[string][]*record
	queue         []*conv
	warn          []problem
	done          bool
	skippedGroups int
}

func newGrouped(in *input, format string, scan scanFunc) (*grouped, error) {
	g := &grouped{in: in, scan: scan, format: format, last: map[string]int{}, traceCv: map[string]string{}, open: map[string][]*record{}}
	r, err := in.reader()
	if err != nil {
		return nil, err
	}
	lastConv := map[string]int{}
	lastTrace := map[string]int{}
	n := 0
	for rec, err := range iter.Seq2[*record, error](func(yield func(*record, error) bool) { scan(r, true, yield) }) {
		if err != nil {
			g.stopErr = err
			break
		}
		rec.ord = n
		n++
		if rec.broken {
			continue
		}
		if rec.conv != "" {
			lastConv[rec.conv] = rec.ord
			if rec.trace != "" {
				if _, ok := g.traceCv[rec.trace]; !ok {
					g.traceCv[rec.trace] = rec.conv
				}
			}
		}
		if rec.trace != "" {
			lastTrace[rec.trace] = rec.ord
		}
	}
	for c, o := range lastConv {
		g.last["c:"+c] = o
	}
	for t, o := range lastTrace {
		k := g.keyOf(&record{trace: t})
		g.last[k] = max(g.last[k], o)
	}
	r, err = in.reader()
	if err != nil {
		return nil, err
	}
	g.next2, g.stop2 = iter.Pull2(iter.Seq2[*record, error](func(yield func(*record, error) bool) { scan(r, false, yield) }))
	return g, nil
}

func (g *grouped) keyOf(rec *record) string {
	switch {
	case rec.conv != "":
		return "c:" + rec.conv
	case g.traceCv[rec.trace] != "":
		return "c:" + g.traceCv[rec.trace]
	case rec.trace != "":
		return "t:" + rec.trace
	}
	return "t:"
}

func (g *grouped) next() (*conv, error) {
	for len(g.queue) == 0 {
		if g.done {
			if err := g.stopErr; err != nil {
				g.stopErr = nil
				return nil, err
			}
			return nil, io.EOF
		}
		rec, err, ok := g.next2()
		if !ok || err != nil {
			if err != nil {
				g.stopErr = err
			}
			g.done = true
			// Pass two stops where pass one did, so nothing should be
			// left open; if the file changed in between, keep what is.
			for k := range g.open {
				g.emit(k)
			}
			continue
		}
		rec.ord = g.ord
		g.ord++
		if rec.broken {
			g.queue = append(g.queue, &conv{pos: rec.pos, problems: rec.problems})
			continue
		}
		k := g.keyOf(rec)
		g.open[k] = append(g.open[k], rec)
		// A group the first pass did not see (the file changed in
		// between) stays open to the end.
		if last, ok := g.last[k]; ok && last <= rec.ord {
			g.emit(k)
		}
	}
	c := g.queue[0]
	g.queue = g.queue[1:]
	return c, nil
}

// emit assembles the group k and queues it, or notes that it held no
// GenAI data.
func (g *grouped) emit(k string) {
	recs := g.open[k]
	delete(g.open, k)
	if len(recs) == 0 {
		return
	}
	if c := assemble(g.format, k[2:], recs); c != nil {
		g.queue = append(g.queue, c)
		return
	}
	g.skippedGroups++
	if g.skippedGroups <= maxSkipNotes {
		what := "trace " + recs[0].trace
		if k[0] == 'c' {
			what = "conversation " + k[2:]
		}
		g.warn = append(g.warn, warnAt(recs[0].pos, fmt.Sprintf("%s has no GenAI data (%d spans or records, none a model call, tool call or agent with content); skipped", what, len(recs))))
	}
}

const maxSkipNotes = 5

func (g *grouped) warnings() []problem {
	if n := g.skippedGroups - maxSkipNotes; n > 0 {
		return append(g.warn, warnAt(Pos{}, fmt.Sprintf("%d more traces had no GenAI data and were skipped", n)))
	}
	return g.warn
}

func (g *grouped) close() error {
	if g.stop2 != nil {
		g.stop2()
	}
	return nil
}
