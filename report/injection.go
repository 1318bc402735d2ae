package report

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/agenteval/agenteval"
)

// injectionKey is grade.InjectionKey: the score details under which a
// judge-made score lists the replies and tool traffic that seem to address
// the grader.
const injectionKey = "injection_suspected"

type injectionFlag struct {
	Turn    int    `json:"turn"`
	Part    string `json:"part"`
	Signal  string `json:"signal"`
	Excerpt string `json:"excerpt"`
}

// Injections summarises the injection flags of a result's scores (nested
// and per-trial ones included): one line per flagged message, with its
// signals, an excerpt, and the scores whose judge read it. The flags are
// shown whatever the verdict: a passing test whose agent spoke to the
// judge is exactly the one a reviewer should look at.
func Injections(r *agenteval.Result) []string {
	type group struct {
		where, excerpt  string
		signals, scores []string
	}
	var order []string
	groups := map[string]*group{}
	addUnique := func(list []string, s string) []string {
		for _, x := range list {
			if x == s {
				return list
			}
		}
		return append(list, s)
	}
	var walk func(prefix string, ss []agenteval.Score)
	walk = func(prefix string, ss []agenteval.Score) {
		for _, s := range ss {
			name := prefix + s.Name
			if v, ok := s.Details[injectionKey]; ok {
				var flags []injectionFlag
				if b, err := json.Marshal(v); err == nil && json.Unmarshal(b, &flags) == nil {
					for _, f := range flags {
						where := f.Part
						if f.Turn > 0 {
							where = fmt.Sprintf("turn %d %s", f.Turn, f.Part)
						}
						g := groups[where]
						if g == nil {
							g = &group{where: where, excerpt: f.Excerpt}
							groups[where] = g
							order = append(order, where)
						}
						g.signals = addUnique(g.signals, f.Signal)
						g.scores = addUnique(g.scores, name)
					}
				}
			}
			walk(name+"/", s.Scores)
		}
	}
	walk("", r.Scores)
	for _, tr := range r.Trials {
		walk(fmt.Sprintf("trial %d/", tr.Trial), tr.Scores)
	}
	out := make([]string, len(order))
	for i, w := range order {
		g := groups[w]
		out[i] = fmt.Sprintf("%s %s (read by %s): %s", g.where, strings.Join(g.signals, ", "), strings.Join(g.scores, ", "), g.excerpt)
	}
	return out
}

// injections prints the flags under a test's row, at most three.
func (t *tableWriter) injections(w io.Writer, r *agenteval.Result) {
	lines := Injections(r)
	for i, line := range lines {
		if i == 3 {
			fmt.Fprintf(w, "    %s\n", t.paint(ansiDim, fmt.Sprintf("… %d more flagged messages; see injection_suspected in the results", len(lines)-3)))
			break
		}
		fmt.Fprintf(w, "    %s %s\n", t.paint(ansiYellow, "⚠ injection suspected:"), clip(line, 240))
	}
}
