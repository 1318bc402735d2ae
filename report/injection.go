package report

import (
	"encoding/json"
	"fmt"

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

// Injections lists, for each score of r (nested ones included) whose
// details carry the injection flag, a line naming the score and its first
// flag. The flag is shown whatever the verdict: a passing test whose agent
// spoke to the judge is exactly the one a reviewer should look at.
func Injections(r *agenteval.Result) []string {
	var out []string
	var walk func(prefix string, ss []agenteval.Score)
	walk = func(prefix string, ss []agenteval.Score) {
		for _, s := range ss {
			name := prefix + s.Name
			if v, ok := s.Details[injectionKey]; ok {
				var flags []injectionFlag
				if b, err := json.Marshal(v); err == nil && json.Unmarshal(b, &flags) == nil && len(flags) > 0 {
					f := flags[0]
					where := f.Part
					if f.Turn > 0 {
						where = fmt.Sprintf("turn %d %s", f.Turn, f.Part)
					}
					line := fmt.Sprintf("%s: %s %s: %s", name, where, f.Signal, f.Excerpt)
					if len(flags) > 1 {
						line += fmt.Sprintf(" (+%d more)", len(flags)-1)
					}
					out = append(out, line)
				}
			}
			walk(name+"/", s.Scores)
		}
	}
	walk("", r.Scores)
	for _, tr := range r.Trials {
		walk(fmt.Sprintf("trial %d/", tr.Trial), tr.Scores)
	}
	return out
}

// injections prints the flags under a test's row, at most three.
func (t *tableWriter) injections(r *agenteval.Result) {
	lines := Injections(r)
	for i, line := range lines {
		if i == 3 {
			fmt.Fprintf(t.bw, "    %s\n", t.paint(ansiDim, fmt.Sprintf("… %d more scores flagged", len(lines)-3)))
			break
		}
		fmt.Fprintf(t.bw, "    %s %s\n", t.paint(ansiYellow, "⚠ injection suspected"), clip(line, 200))
	}
}
