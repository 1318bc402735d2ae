package suite

import (
	"fmt"
	"sort"

	"github.com/agenteval/agenteval"
	"go.yaml.in/yaml/v4"
)

// Difference is one place where a file that AgentV (or agent_inspect, or
// promptfoo) also reads runs with another meaning here. It is not a
// problem with the file, so --strict does not make it an error, but the
// run says it once at the start and validate --explain lists it: the
// same file must never give other results in silence.
type Difference struct {
	// Pos is the first place the difference applies.
	agenteval.Pos
	// Key names the difference (window_size, system_prompt, ...), so a
	// run says each once per file however many tests it touches.
	Key string
	// Peer is the tool whose meaning differs: "AgentV", "agent_inspect"
	// or "promptfoo".
	Peer string
	// Msg says what differs and why, and what to write for the peer's
	// meaning where that is possible.
	Msg string
	// Count is how many places in the file it applies to.
	Count int
}

// String is "file:line:col: differs from AgentV: msg", with "(N places)"
// when it applies more than once.
func (d Difference) String() string {
	s := d.Pos.Errorf("differs from " + d.Peer + ": " + d.Msg).Error()
	if d.Count > 1 {
		s += fmt.Sprintf(" (%d places)", d.Count)
	}
	return s
}

// differ records a difference from AgentV's meaning at n, once per key
// per file: later places only count.
func (d *decoder) differ(n *yaml.Node, key, format string, a ...any) {
	d.differFrom("AgentV", n, key, format, a...)
}

// differFrom records a difference from peer's meaning at n.
func (d *decoder) differFrom(peer string, n *yaml.Node, key, format string, a ...any) {
	d.differAt(peer, d.pos(n), key, format, a...)
}

// differAt records a difference from peer's meaning at pos.
func (d *decoder) differAt(peer string, pos agenteval.Pos, key, format string, a ...any) {
	for _, x := range d.diffs {
		if x.Key == key && x.File == d.file {
			x.Count++
			return
		}
	}
	d.diffs = append(d.diffs, &Difference{Pos: pos, Key: key, Peer: peer, Msg: fmt.Sprintf(format, a...), Count: 1})
}

// sortedDifferences is the recorded differences in file order.
func sortedDifferences(ds []*Difference) []Difference {
	out := make([]Difference, 0, len(ds))
	for _, x := range ds {
		out = append(out, *x)
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i].Pos, out[j].Pos
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Col < b.Col
	})
	return out
}
