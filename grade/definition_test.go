package grade

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/judge"
)

func TestAllIsValid(t *testing.T) {
	if err := Validate(All()); err != nil {
		t.Fatal(err)
	}
	for _, d := range All() {
		if d.bind == nil {
			t.Errorf("%s is not made by define (deterministic, judged) or tracked, so build cannot decode its options", d.Name)
		}
		for _, p := range d.Params {
			if strings.TrimSpace(p.Doc) == "" {
				t.Errorf("%s: setting %s has no doc", d.Name, p.Name)
			}
		}
	}
}

func TestValidateRejects(t *testing.T) {
	ok := func(any, Env) (Func, error) { return nil, nil }
	tests := []struct {
		name string
		defs []*Definition
		want string
	}{
		{"nil", []*Definition{nil}, "definition 0 is nil"},
		{"duplicate name", []*Definition{{Name: "a", Doc: "x", New: ok}, {Name: "a", Doc: "y", New: ok}}, `name "a" is taken by a`},
		{"alias clash", []*Definition{{Name: "a", Doc: "x", New: ok}, {Name: "b", Aliases: []string{"a"}, Doc: "y", New: ok}}, `name "a" is taken by a`},
		{"kebab", []*Definition{{Name: "a-b", Doc: "x", New: ok}}, "not snake_case"},
		{"negation", []*Definition{{Name: "not_a", Doc: "x", New: ok}}, "starts with not_"},
		{"no doc", []*Definition{{Name: "a", New: ok}}, "no Doc"},
		{"no constructor", []*Definition{{Name: "a", Doc: "x"}}, "neither New nor Track"},
		{"common setting", []*Definition{{Name: "a", Doc: "x", New: ok, Params: []Param{{Name: "weight"}}}}, `setting "weight" is repeated`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Validate(tt.defs)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Validate = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestFind(t *testing.T) {
	tests := []struct {
		typ    string
		want   *Definition
		negate bool
	}{
		{"contains", Contains, false},
		{"not-contains", Contains, true},
		{"NOT_icontains", IContains, true},
		{"tool-trajectory", ToolCalls, false},
		{"code-grader", Script, false},
		{"llm-judge", LLMGrader, false},
		{"goal_accuracy", AgentGoalAccuracy, false},
	}
	for _, tt := range tests {
		d, negate, ok := Find(All(), tt.typ)
		if !ok || d != tt.want || negate != tt.negate {
			t.Errorf("Find(%q) = %v, %v, %v", tt.typ, d, negate, ok)
		}
	}
	if _, _, ok := Find(All(), "contain"); ok {
		t.Error("Find(contain) found something")
	}
}

// TestUnknownSettingHints: a typo of a common setting is pointed at it,
// and the list of known settings names them too.
func TestUnknownSettingHints(t *testing.T) {
	tests := []struct {
		typ      string
		settings map[string]any
		want     string
	}{
		{"contains", map[string]any{"value": "x", "wieght": 2}, `unknown setting "wieght"; did you mean "weight"?`},
		{"contains", map[string]any{"value": "x", "treshold": 0.5}, `did you mean "threshold"?`},
		{"contains", map[string]any{"value": "x", "zzzz": 1}, "known settings: value (and name, weight, required, negate, threshold, which every grader takes)"},
		{"latency", map[string]any{"threshold_ms": 5, "max": 3}, "give max or threshold_ms, not both"},
		{"tool_calls", map[string]any{"mod": "exact"}, `did you mean "mode"?`},
		{"contains", map[string]any{"value": "x", "weight": 2}, `"weight" is set beside the grader's type, not among its own settings (in Go, Spec.Weight)`},
		{"contains_any", map[string]any{"value": []any{"a", ""}}, "value[1] is empty"},
		{"tool_call_count", map[string]any{"min": -1}, "must not be negative"},
		{"tool_call_count", map[string]any{"min": 3, "max": 2}, "min 3 is more than max 2"},
	}
	for _, tt := range tests {
		_, err := New(Spec{Type: tt.typ, Options: tt.settings})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("New(%s, %v) = %v, want %q", tt.typ, tt.settings, err, tt.want)
		}
	}
}

// TestTypedOptions: Go code passes a grader's options struct, and gets the
// grader a settings map would give.
func TestTypedOptions(t *testing.T) {
	in := &agenteval.GradeInput{Output: agenteval.Conversation{{Role: agenteval.RoleAssistant, Content: "Booked for 8pm."}}}
	tests := []struct {
		typ   string
		typed any
		asMap map[string]any
		want  float64
	}{
		{"contains", Text{Value: "8pm"}, map[string]any{"value": "8pm"}, 1},
		{"icontains_any", TextList{Value: Strings{"BOOKED", "reserved"}}, map[string]any{"value": []any{"BOOKED", "reserved"}}, 1},
		{"regex", &RegexOptions{Value: `\d+pm`}, map[string]any{"value": `\d+pm`}, 1},
		{"levenshtein", LevenshteinOptions{Value: "Booked for 9pm."}, map[string]any{"value": "Booked for 9pm."}, 1},
		{"tool_call_count", ToolCallCountOptions{Min: ptr(1)}, map[string]any{"min": 1}, 0},
	}
	for _, tt := range tests {
		for _, opts := range []any{tt.typed, tt.asMap} {
			g, err := New(Spec{Type: tt.typ, Options: opts})
			if err != nil {
				t.Fatalf("New(%s, %#v): %v", tt.typ, opts, err)
			}
			s, err := g.Grade(context.Background(), in)
			if err != nil || s.Score != tt.want {
				t.Errorf("%s with %#v: score %v, err %v; want %v", tt.typ, opts, s.Score, err, tt.want)
			}
		}
	}
	if _, err := New(Spec{Type: "contains", Options: ToolCallsOptions{}}); err == nil || !strings.Contains(err.Error(), "options must be a grade.Text or a map of settings") {
		t.Errorf("wrong options type: %v", err)
	}
}

func TestNeedsJudge(t *testing.T) {
	check := map[string]any{"tool": "a", "args": map[string]any{"x": map[string]any{"$check": "is big"}}}
	outputCheck := map[string]any{"tool": "a", "output": map[string]any{"check": "says ok"}}
	plain := map[string]any{"tool": "a", "args": map[string]any{"x": 1}}
	tests := []struct {
		spec Spec
		want bool
	}{
		{Spec{Type: "contains", Options: map[string]any{"value": "x"}}, false},
		{Spec{Type: "rubrics"}, true},
		{Spec{Type: "not-llm-grader"}, true},
		{Spec{Type: "subgoals"}, true},
		{Spec{Type: "tool_calls", Options: map[string]any{"expected": []any{plain}}}, false},
		{Spec{Type: "tool_calls", Options: map[string]any{"expected": []any{plain, check}}}, true},
		{Spec{Type: "tool_calls", Options: map[string]any{"expected": []any{outputCheck}}}, true},
		{Spec{Type: "expected_tool_calls", Options: ExpectedToolCallsOptions{Calls: ExpectedCalls{{Tool: "a", Args: map[string]any{"x": map[string]any{"$check": "y"}}}}}}, true},
		{Spec{Type: "expected_tool_calls", Options: ExpectedToolCallsOptions{Calls: ExpectedCalls{{Tool: "a", Literal: true, Args: map[string]any{"x": map[string]any{"$check": "y"}}}}}}, false},
		{Spec{Type: "nope"}, false},
	}
	for _, tt := range tests {
		if got := tt.spec.NeedsJudge(); got != tt.want {
			t.Errorf("%s %v: NeedsJudge = %v, want %v", tt.spec.Type, tt.spec.Options, got, tt.want)
		}
	}
}

func TestReduce(t *testing.T) {
	vals := []float64{0.5, 1, 0}
	tests := []struct {
		r    agenteval.Reduction
		want float64
	}{
		{"", 0.5}, {agenteval.ReduceMean, 0.5}, {agenteval.ReduceMin, 0}, {agenteval.ReduceMax, 1}, {agenteval.ReducePassAtK, 1},
	}
	for _, tt := range tests {
		if got := tt.r.Reduce(vals); got != tt.want {
			t.Errorf("%q.Reduce = %v, want %v", tt.r, got, tt.want)
		}
		if got := tt.r.Reduce(nil); got != 1 {
			t.Errorf("%q.Reduce(nil) = %v, want 1", tt.r, got)
		}
	}
}

// TestRunRecovers: one path turns a grader's error or panic into an error
// score that keeps the grader's name.
func TestRunRecovers(t *testing.T) {
	boom := agenteval.GraderFunc(func(context.Context, *agenteval.GradeInput) (agenteval.Score, error) { panic("boom") })
	s, err := Run(context.Background(), boom, "mine", "custom", &agenteval.GradeInput{})
	if err == nil || s.Verdict != agenteval.VerdictError || s.Name != "mine" || s.Type != "custom" || !strings.Contains(s.Reason, "panicked: boom") || s.Weight != 1 {
		t.Errorf("panic: %+v, %v", s, err)
	}
	g, _ := New(Spec{Type: "tool_call_accuracy", Name: "acc", Weight: ptr(2.0)})
	s, err = Run(context.Background(), g, "fallback", "fallback", &agenteval.GradeInput{})
	if err == nil || s.Verdict != agenteval.VerdictError || s.Name != "acc" || s.Weight != 2 || !strings.Contains(s.Reason, "reference_tool_calls") {
		t.Errorf("error: %+v, %v", s, err)
	}
}

// counted is a setting's value that counts how often it is decoded (each
// decode marshals the setting's value first).
type counted struct {
	n    *int
	text string
}

func (c counted) MarshalJSON() ([]byte, error) {
	*c.n++
	return json.Marshal(c.text)
}

// TestOptionsDecodedOnce: New and NewPlan decode a grader's options once,
// for the grader and for whether it needs the judge.
func TestOptionsDecodedOnce(t *testing.T) {
	j := &judge.Judge{Name: "fake:judge"}
	for _, tc := range []struct {
		name string
		typ  string
		opts func(c counted) map[string]any
	}{
		{"judged", "llm_grader", func(c counted) map[string]any { return map[string]any{"prompt": c} }},
		{"judged by options", "tool_calls", func(c counted) map[string]any {
			return map[string]any{"expected": []any{map[string]any{"tool": "a", "args": map[string]any{"x": map[string]any{"$check": c}}}}}
		}},
		{"tracked", "subgoals", func(c counted) map[string]any { return map[string]any{"subgoals": []any{c}} }},
		{"deterministic", "contains", func(c counted) map[string]any { return map[string]any{"value": c} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, via := range []struct {
				name string
				run  func(opts map[string]any) error
			}{
				{"New", func(opts map[string]any) error {
					_, err := New(Spec{Type: tc.typ, Options: opts, Judge: j})
					return err
				}},
				{"New without a judge", func(opts map[string]any) error {
					_, err := New(Spec{Type: tc.typ, Options: opts})
					var nj *NoJudgeError
					if errors.As(err, &nj) {
						return nil
					}
					return err
				}},
				{"NewPlan", func(opts map[string]any) error {
					test := &agenteval.Test{ID: "t", Input: agenteval.Conversation{{Role: agenteval.RoleUser, Content: "hi"}},
						Assertions: []agenteval.AssertionSpec{{Type: tc.typ, Params: opts}}}
					_, errs := NewPlan(test, PlanOptions{Threshold: agenteval.DefaultThreshold})
					return errors.Join(errs...)
				}},
			} {
				n := 0
				if err := via.run(tc.opts(counted{n: &n, text: "is fine"})); err != nil {
					t.Fatalf("%s: %v", via.name, err)
				}
				if n != 1 {
					t.Errorf("%s: options decoded %d times, want once", via.name, n)
				}
			}
		})
	}
}
