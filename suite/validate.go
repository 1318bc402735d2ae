package suite

import (
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/grade"
)

// validate checks what spans tests: unique ids, dependencies, assertion
// settings, and that judged assertions have a judge.
func (d *decoder) validate(s *Suite, opt Options) {
	ids := map[string]agenteval.Pos{}
	for _, t := range s.Tests {
		if t.ID == "" {
			continue
		}
		if first, dup := ids[t.ID]; dup {
			d.errs = append(d.errs, t.Pos.Errorf(fmt.Sprintf("test id %q is used twice (first on line %d); ids must be unique", t.ID, first.Line)))
			continue
		}
		ids[t.ID] = t.Pos
	}
	for _, t := range s.Tests {
		for _, dep := range t.DependsOn {
			if _, ok := ids[dep]; !ok {
				d.errs = append(d.errs, t.Pos.Errorf(fmt.Sprintf("test %q depends_on %q, which is not a test in this file", t.ID, dep)))
			}
			if dep == t.ID {
				d.errs = append(d.errs, t.Pos.Errorf(fmt.Sprintf("test %q depends on itself", t.ID)))
			}
		}
	}
	d.checkCycles(s.Tests)
	if opt.NoExec {
		d.refuseExec(s)
	}
	haveJudge := opt.JudgeAvailable || s.Judge != nil
	judgeWarned := false
	dir := filepath.Dir(s.File)
	for i := range s.Tests {
		t := &s.Tests[i]
		p, errs := grade.NewPlan(t, grade.PlanOptions{Dir: dir, Threshold: agenteval.DefaultThreshold, Graders: opt.Graders})
		d.errs = append(d.errs, errs...)
		if t.Skip != "" {
			continue // it will not run, so it needs no judge
		}
		if use, needs := p.NeedsJudge(); needs && !haveJudge {
			if opt.NoJudgeNeeded {
				if !judgeWarned {
					judgeWarned = true
					d.warns = append(d.warns, use.Pos.Errorf(fmt.Sprintf("test %q has %s, which an LLM judge grades; run will need --judge provider:model (or judge: in the file, or AGENTEVAL_JUDGE)", t.ID, use.What)))
				}
			} else {
				d.errs = append(d.errs, use.Pos.Errorf(fmt.Sprintf("test %q has %s, which an LLM judge grades, and no judge is configured; add judge: openai:gpt-4o-mini (or another provider:model) to the file, pass --judge, or set AGENTEVAL_JUDGE%s", t.ID, use.What, selfJudgeHint(s))))
			}
		}
		if t.User != nil && t.User.Model == "" && !haveJudge && !opt.SimulatorAvailable {
			msg := fmt.Sprintf("test %q has a simulated user (user:) and no model to play it; set user.model, pass --simulator provider:model, or configure a judge (judge:, --judge or AGENTEVAL_JUDGE)", t.ID)
			if opt.NoJudgeNeeded {
				d.warns = append(d.warns, t.Pos.Errorf(msg))
			} else {
				d.errs = append(d.errs, t.Pos.Errorf(msg))
			}
		}
	}
}

// noExecWhy says what --no-exec refuses and how to allow it.
const noExecWhy = "refused under --no-exec, which runs no program an eval or project file names; review the file, then run without --no-exec (or with --no-exec=false where AGENTEVAL_NO_EXEC is set)"

// refuseExec reports everything in the file that would run a program.
func (d *decoder) refuseExec(s *Suite) {
	d.refuseTargets(s.Targets)
	d.refuseMCP(s.MCPServers)
	check := func(list []agenteval.AssertionSpec) {
		for _, a := range list {
			if runsProgram(d.defs(), a.Type, a.Params) {
				d.errs = append(d.errs, a.Pos.Errorf("a "+a.Type+" assertion runs a program: "+noExecWhy))
			}
		}
	}
	for _, t := range s.Tests {
		check(t.Assertions)
		for _, tr := range t.Turns {
			check(tr.Assertions)
		}
	}
}

// refuseTargets reports the targets that would run a program: those of an
// eval file and those of a project file alike.
func (d *decoder) refuseTargets(targets []TargetSpec) {
	for _, ts := range targets {
		if len(ts.Command) > 0 {
			d.errs = append(d.errs, ts.Pos.Errorf(fmt.Sprintf("target %q runs %s: %s", ts.Name, ts.Command[0], noExecWhy)))
		}
		if ts.Template != "" {
			d.errs = append(d.errs, ts.Pos.Errorf(fmt.Sprintf("target %q runs a command (AgentV's cli provider): %s", ts.Name, noExecWhy)))
		}
		d.refuseMCP(ts.MCPServers)
	}
}

// refuseMCP reports MCP servers that would be started as programs.
func (d *decoder) refuseMCP(servers []MCPServer) {
	for _, m := range servers {
		if len(m.Command) > 0 {
			d.errs = append(d.errs, m.Pos.Errorf(fmt.Sprintf("MCP server %q runs %s: %s", m.Name, m.Command[0], noExecWhy)))
		}
	}
}

// checkCycles reports each dependency cycle once, with its path.
func (d *decoder) checkCycles(tests []agenteval.Test) {
	byID := map[string]*agenteval.Test{}
	for i := range tests {
		byID[tests[i].ID] = &tests[i]
	}
	const (
		unseen = iota
		active
		done
	)
	state := map[string]int{}
	var stack []string
	var visit func(id string)
	visit = func(id string) {
		state[id] = active
		stack = append(stack, id)
		t := byID[id]
		for _, dep := range t.DependsOn {
			if byID[dep] == nil || dep == id {
				continue
			}
			switch state[dep] {
			case active:
				i := len(stack) - 1
				for stack[i] != dep {
					i--
				}
				cycle := append(append([]string(nil), stack[i:]...), dep)
				d.errs = append(d.errs, t.Pos.Errorf("depends_on forms a cycle: "+strings.Join(cycle, " -> ")+"; remove one of these dependencies"))
			case unseen:
				visit(dep)
			}
		}
		stack = stack[:len(stack)-1]
		state[id] = done
	}
	for _, t := range tests {
		if state[t.ID] == unseen && t.ID != "" {
			visit(t.ID)
		}
	}
}

// sortErrors orders positioned errors by file, line and column.
func sortErrors(errs []error) {
	key := func(e error) (string, int, int) {
		var pe *agenteval.PosError
		if errors.As(e, &pe) {
			return pe.File, pe.Line, pe.Col
		}
		return "", 0, 0
	}
	sort.SliceStable(errs, func(i, j int) bool {
		fi, li, ci := key(errs[i])
		fj, lj, cj := key(errs[j])
		if fi != fj {
			return fi < fj
		}
		if li != lj {
			return li < lj
		}
		return ci < cj
	})
}

// sortPos orders positioned warnings by file, line and column.
func sortPos(ps []*agenteval.PosError) {
	sort.SliceStable(ps, func(i, j int) bool {
		a, b := ps[i], ps[j]
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Col < b.Col
	})
}

// runsProgram says whether a grader of this type and settings runs a
// program: a script, an llm_grader's prompt_command, a composite with
// either among its members or a code aggregator. defs are the graders
// types are looked up in; what a caller's own grader does is the
// caller's to know.
func runsProgram(defs []*grade.Definition, typ string, params map[string]any) bool {
	def, _, ok := grade.Find(defs, typ)
	switch {
	case !ok:
		return false
	case def == grade.Script:
		return true
	case def == grade.LLMGrader:
		return params["prompt_command"] != nil
	case def == grade.Composite:
		if agg, ok := params["aggregator"].(map[string]any); ok {
			if t, _ := agg["type"].(string); grade.AggregatorRunsProgram(t) {
				return true
			}
		}
		members, _ := params["assertions"].([]any)
		for _, m := range members {
			if mm, ok := m.(map[string]any); ok {
				t, _ := mm["type"].(string)
				if runsProgram(defs, t, mm) {
					return true
				}
			}
		}
	}
	return false
}

// selfJudgeHint says, for a suite whose default target is a model, that
// AgentV would let that model grade its own replies: agenteval does not
// pick a judge for the user, least of all one that grades itself.
func selfJudgeHint(s *Suite) string {
	name := s.DefaultTarget
	if name == "" && len(s.Targets) > 0 {
		name = s.Targets[0].Name
	}
	for _, t := range s.Targets {
		if t.Name == name && t.Model != "" && t.Unsupported == "" {
			return fmt.Sprintf(" (AgentV would let target %s grade its own replies when it names no grader_target; to do the same, pass --judge %s)", t.Name, t.Model)
		}
	}
	return ""
}
