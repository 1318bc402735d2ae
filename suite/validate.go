package suite

import (
	"errors"
	"fmt"
	"hash/maphash"
	"path/filepath"
	"sort"
	"strings"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/grade"
)

// validate checks what spans tests: unique ids, dependencies, assertion
// settings, and that judged assertions have a judge.
func (d *decoder) validate(s *Suite, opt Options) {
	v := newValidator(d, opt)
	v.judgeKnown = opt.JudgeAvailable || s.Judge != nil
	for i := range s.Tests {
		v.test(&s.Tests[i])
	}
	v.finish(s)
}

// validator checks a suite's tests one at a time, as they are read (a
// streamed suite's are not kept), and what spans them at the end. What
// each test needs, once the suite's judge is known, waits in pending.
type validator struct {
	d   *decoder
	opt Options
	// judgeKnown says a judge is known already: one given from outside,
	// or the file's judge:. AgentV's configuration may give one later.
	judgeKnown bool
	// ids are the tests' ids (a streamed suite's are not kept elsewhere
	// until it is loaded, and a map of strings would cost five times as
	// much): each id once, in order of its first test.
	ids ids
	// lastDeps are, for the ids whose tests have depends_on, the index
	// in deps of the last test with the id, -1 when that one has none.
	lastDeps map[string]int
	dups     []error
	deps     []depTest
	// exec are the assertions that run a program, under --no-exec.
	exec []error
	// pending are each test's problems, in order: errors, and what only
	// a suite without a judge must say.
	pending []pending
}

// depTest is a test with depends_on.
type depTest struct {
	id   string
	pos  agenteval.Pos
	deps []string
}

type pending struct {
	err error
	// judged is a test's first judged assertion; user, a simulated user
	// with no model: problems only when the suite has no judge.
	judged *judgedUse
	user   *agenteval.Test
}

type judgedUse struct {
	id  string
	use grade.JudgeUse
}

func newValidator(d *decoder, opt Options) *validator {
	return &validator{d: d, opt: opt, lastDeps: map[string]int{}}
}

// test checks one test. The suite's judge is known by now unless
// AgentV's configuration gives it, which is read after the tests.
func (v *validator) test(t *agenteval.Test) {
	if t.ID != "" {
		if k, dup := v.ids.add(t.ID, t.Pos.Line); dup {
			v.dups = append(v.dups, t.Pos.Errorf(fmt.Sprintf("test id %q is used twice (first on line %d); ids must be unique", t.ID, v.ids.lines[k])))
		}
		if _, linked := v.lastDeps[t.ID]; linked || len(t.DependsOn) > 0 {
			v.lastDeps[t.ID] = -1
			if len(t.DependsOn) > 0 {
				v.lastDeps[t.ID] = len(v.deps)
			}
		}
	}
	if len(t.DependsOn) > 0 {
		v.deps = append(v.deps, depTest{id: t.ID, pos: t.Pos, deps: t.DependsOn})
	}
	if v.opt.NoExec {
		check := func(list []agenteval.AssertionSpec) {
			for _, a := range list {
				if runsProgram(v.d.defs(), a.Type, a.Params) {
					v.exec = append(v.exec, a.Pos.Errorf("a "+a.Type+" assertion runs a program: "+noExecWhy))
				}
			}
		}
		check(t.Assertions)
		for _, tr := range t.Turns {
			check(tr.Assertions)
		}
	}
	p, errs := grade.NewPlan(t, grade.PlanOptions{Dir: filepath.Dir(v.d.file), Threshold: agenteval.DefaultThreshold, Graders: v.opt.Graders})
	for _, err := range errs {
		v.pending = append(v.pending, pending{err: err})
	}
	if t.Skip != "" || v.judgeKnown {
		return // it will not run, so it needs no judge
	}
	if use, needs := p.NeedsJudge(); needs {
		v.pending = append(v.pending, pending{judged: &judgedUse{id: t.ID, use: use}})
	}
	if t.User != nil && t.User.Model == "" && !v.opt.SimulatorAvailable {
		v.pending = append(v.pending, pending{user: &agenteval.Test{ID: t.ID, Pos: t.Pos}})
	}
}

// finish checks what spans the tests, and says what each test needs now
// that the suite's judge is known.
func (v *validator) finish(s *Suite) {
	d := v.d
	d.errs = append(d.errs, v.dups...)
	for _, t := range v.deps {
		for _, dep := range t.deps {
			if _, ok := v.ids.find(dep); !ok {
				d.errs = append(d.errs, t.pos.Errorf(fmt.Sprintf("test %q depends_on %q, which is not a test in this file", t.id, dep)))
			}
			if dep == t.id {
				d.errs = append(d.errs, t.pos.Errorf(fmt.Sprintf("test %q depends on itself", t.id)))
			}
		}
	}
	v.checkCycles()
	if v.opt.NoExec {
		d.refuseTargets(s.Targets)
		d.refuseMCP(s.MCPServers)
		d.errs = append(d.errs, v.exec...)
	}
	haveJudge := v.opt.JudgeAvailable || s.Judge != nil
	judgeWarned := false
	for _, p := range v.pending {
		switch {
		case p.err != nil:
			d.errs = append(d.errs, p.err)
		case haveJudge:
		case p.judged != nil:
			use := p.judged.use
			if v.opt.NoJudgeNeeded {
				if !judgeWarned {
					judgeWarned = true
					d.warns = append(d.warns, use.Pos.Errorf(fmt.Sprintf("test %q has %s, which an LLM judge grades; run will need --judge provider:model (or judge: in the file, or AGENTEVAL_JUDGE)", p.judged.id, use.What)))
				}
			} else {
				d.errs = append(d.errs, use.Pos.Errorf(fmt.Sprintf("test %q has %s, which an LLM judge grades, and no judge is configured; add judge: openai:gpt-4o-mini (or another provider:model) to the file, pass --judge, or set AGENTEVAL_JUDGE%s", p.judged.id, use.What, selfJudgeHint(s))))
			}
		case p.user != nil:
			msg := fmt.Sprintf("test %q has a simulated user (user:) and no model to play it; set user.model, pass --simulator provider:model, or configure a judge (judge:, --judge or AGENTEVAL_JUDGE)", p.user.ID)
			if v.opt.NoJudgeNeeded {
				d.warns = append(d.warns, p.user.Pos.Errorf(msg))
			} else {
				d.errs = append(d.errs, p.user.Pos.Errorf(msg))
			}
		}
	}
	v.ids, v.lastDeps, v.deps, v.pending = ids{}, nil, nil, nil
}

// noExecWhy says what --no-exec refuses and how to allow it.
const noExecWhy = "refused under --no-exec, which runs no program an eval or project file names; review the file, then run without --no-exec (or with --no-exec=false where AGENTEVAL_NO_EXEC is set)"

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

// checkCycles reports each dependency cycle once, with its path. Only
// tests with depends_on can be in one; an id used twice stands for its
// last test, as in the run.
func (v *validator) checkCycles() {
	deps := func(id string) (*depTest, bool) {
		last, linked := v.lastDeps[id]
		if !linked || last < 0 {
			_, ok := v.ids.find(id)
			return nil, ok
		}
		return &v.deps[last], true
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
		if t, _ := deps(id); t != nil {
			for _, dep := range t.deps {
				if _, ok := deps(dep); !ok || dep == id {
					continue
				}
				switch state[dep] {
				case active:
					i := len(stack) - 1
					for stack[i] != dep {
						i--
					}
					cycle := append(append([]string(nil), stack[i:]...), dep)
					v.d.errs = append(v.d.errs, t.pos.Errorf("depends_on forms a cycle: "+strings.Join(cycle, " -> ")+"; remove one of these dependencies"))
				case unseen:
					visit(dep)
				}
			}
		}
		stack = stack[:len(stack)-1]
		state[id] = done
	}
	// The ids whose test has depends_on, in the order of their first
	// test, as a walk of every test would start from them.
	var starts []string
	first := map[string]int{}
	for id, last := range v.lastDeps {
		if last >= 0 {
			starts = append(starts, id)
			first[id], _ = v.ids.find(id)
		}
	}
	sort.Slice(starts, func(i, j int) bool { return first[starts[i]] < first[starts[j]] })
	for _, id := range starts {
		if state[id] == unseen {
			visit(id)
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

// ids is a set of test ids, each with the line of its first test, in
// order of first use: the ids' text one after another, and a map from
// each id's hash to its place (ids whose hash another id has taken go in
// a map of their own).
type ids struct {
	text    []byte
	ends    []uint32
	lines   []uint32
	seed    maphash.Seed
	byHash  map[uint64]int
	collide map[string]int
}

// add adds an id first seen on line, and returns its place; dup says it
// was there already.
func (s *ids) add(id string, line int) (k int, dup bool) {
	if k, ok := s.find(id); ok {
		return k, true
	}
	if s.byHash == nil {
		s.seed, s.byHash = maphash.MakeSeed(), map[uint64]int{}
	}
	k = len(s.ends)
	s.text = append(s.text, id...)
	s.ends = append(s.ends, uint32(len(s.text)))
	s.lines = append(s.lines, uint32(line))
	h := maphash.String(s.seed, id)
	if _, taken := s.byHash[h]; taken {
		if s.collide == nil {
			s.collide = map[string]int{}
		}
		s.collide[id] = k
	} else {
		s.byHash[h] = k
	}
	return k, false
}

// find returns an id's place.
func (s *ids) find(id string) (int, bool) {
	if s.byHash == nil {
		return 0, false
	}
	if k, ok := s.byHash[maphash.String(s.seed, id)]; ok {
		start := uint32(0)
		if k > 0 {
			start = s.ends[k-1]
		}
		if string(s.text[start:s.ends[k]]) == id {
			return k, true
		}
	}
	k, ok := s.collide[id]
	return k, ok
}
