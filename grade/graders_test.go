package grade

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/agenteval/agenteval"
)

// wordLimit is a grader written by hand, as a program outside this
// package might: no options struct, only Params and New, which reads the
// settings map under the params' own names.
var wordLimit = &Definition{
	Name: "word_limit", Aliases: []string{"max_words"},
	Doc: "the reply has at most max words",
	Params: []Param{
		{Name: "max", Types: []string{"integer"}, Aliases: []string{"limit"}, Doc: "the most words allowed"},
		{Name: "unit", Types: []string{"string"}, Enum: []string{"words", "lines"}, Doc: "what is counted"},
	},
	New: func(options any, _ Env) (Func, error) {
		settings, _ := options.(map[string]any)
		max, ok := number(settings["max"])
		if !ok {
			return nil, errors.New("needs max: the most words allowed")
		}
		return func(_ context.Context, in *agenteval.GradeInput) (Outcome, error) {
			n := len(strings.Fields(in.Output.LastAssistant()))
			return binary(fmt.Sprintf("at most %v words", max), float64(n) <= max, fmt.Sprintf("%d words", n)), nil
		}, nil
	},
}

// withWordLimit is the caller's list: the built-in graders and one more.
func withWordLimit() []*Definition { return append(All(), wordLimit) }

// TestCallersGraders: a type is looked up in the list the caller gives,
// All when none is given, and a hand-written definition's settings are
// checked against its Params as a built-in grader's are.
func TestCallersGraders(t *testing.T) {
	tests := []struct {
		name    string
		spec    Spec
		text    string
		want    agenteval.Verdict
		wantErr string
	}{
		{"own grader", Spec{Type: "word_limit", Graders: withWordLimit(), Options: map[string]any{"max": 3}}, "one two three", agenteval.VerdictPass, ""},
		{"own grader fails", Spec{Type: "word_limit", Graders: withWordLimit(), Options: map[string]any{"max": 3}}, "one two three four", agenteval.VerdictFail, ""},
		{"alias of a setting is renamed", Spec{Type: "word_limit", Graders: withWordLimit(), Options: map[string]any{"limit": 3}}, "one two three", agenteval.VerdictPass, ""},
		{"alias and negation", Spec{Type: "not-max-words", Graders: withWordLimit(), Options: map[string]any{"max": 1}}, "one two", agenteval.VerdictPass, ""},
		{"built-in from the caller's list", Spec{Type: "contains", Graders: withWordLimit(), Options: map[string]any{"value": "two"}}, "one two", agenteval.VerdictPass, ""},
		{"not in the default list", Spec{Type: "word_limit", Options: map[string]any{"max": 3}}, "", "", `unknown metric "word_limit"`},
		{"not in a short list", Spec{Type: "contains", Graders: []*Definition{wordLimit}}, "", "", `unknown metric "contains"; known metrics: word_limit`},
		{"typo of the caller's grader", Spec{Type: "word_limt", Graders: withWordLimit()}, "", "", `did you mean "word_limit"?`},
		{"unknown setting", Spec{Type: "word_limit", Graders: withWordLimit(), Options: map[string]any{"maxx": 3}}, "", "", `unknown setting "maxx"; did you mean "max"?`},
		{"common setting among the own", Spec{Type: "word_limit", Graders: withWordLimit(), Options: map[string]any{"max": 3, "weight": 2}}, "", "", `"weight" is set beside the grader's type`},
		{"wrong type", Spec{Type: "word_limit", Graders: withWordLimit(), Options: map[string]any{"max": "many"}}, "", "", `setting "max" must be a whole number, not a string`},
		{"not whole", Spec{Type: "word_limit", Graders: withWordLimit(), Options: map[string]any{"max": 2.5}}, "", "", `setting "max" must be a whole number, not a number`},
		{"setting and its alias", Spec{Type: "word_limit", Graders: withWordLimit(), Options: map[string]any{"max": 3, "limit": 4}}, "", "", "give limit or max, not both"},
		{"not in the enum", Spec{Type: "word_limit", Graders: withWordLimit(), Options: map[string]any{"max": 3, "unit": "word"}}, "", "", `setting "unit" must be one of words, lines, not "word"; did you mean "words"?`},
		{"a number to a string setting is text", Spec{Type: "word_limit", Graders: withWordLimit(), Options: map[string]any{"max": 3, "unit": 5}}, "", "", `setting "unit" must be one of words, lines, not "5"`},
		{"New's own error", Spec{Type: "word_limit", Graders: withWordLimit()}, "", "", "word_limit: needs max"},
		{"duplicate name", Spec{Type: "contains", Graders: append(All(), &Definition{Name: "contains", Doc: "mine", New: wordLimit.New})}, "", "", `name "contains" is taken by contains`},
		{"duplicate alias", Spec{Type: "contains", Graders: append(withWordLimit(), &Definition{Name: "words", Aliases: []string{"max_words"}, Doc: "mine", New: wordLimit.New})}, "", "", `name "max_words" is taken by word_limit`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := New(tt.spec)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("New = %v, want an error with %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			s, err := g.Grade(context.Background(), reply(tt.text))
			if err != nil || s.Verdict != tt.want {
				t.Errorf("Grade = %s (%s), %v; want %s", s.Verdict, s.Reason, err, tt.want)
			}
		})
	}
}

// TestDefine: a grader made with Define takes its params from its options
// struct and decodes settings into it, as the built-in ones do.
func TestDefine(t *testing.T) {
	type shoutOptions struct {
		Min *int `json:"min" alias:"at_least" doc:"the fewest capital letters"`
	}
	shout := Define(Definition{Name: "shout", Doc: "the reply has at least min capital letters"}, nil,
		func(o shoutOptions, _ Env) (Func, error) {
			if o.Min == nil {
				return nil, errors.New("needs min")
			}
			return func(_ context.Context, in *agenteval.GradeInput) (Outcome, error) {
				n := 0
				for _, r := range in.Output.LastAssistant() {
					if r >= 'A' && r <= 'Z' {
						n++
					}
				}
				return binary("shouts", n >= *o.Min, fmt.Sprintf("%d capitals", n)), nil
			}, nil
		})
	defs := append(All(), shout)
	if err := Validate(defs); err != nil {
		t.Fatal(err)
	}
	if len(shout.Params) != 1 || shout.Params[0].Name != "min" || shout.Params[0].Types[0] != "integer" {
		t.Errorf("Params = %+v", shout.Params)
	}
	for _, opts := range []any{map[string]any{"at_least": 2}, shoutOptions{Min: ptr(2)}} {
		g, err := New(Spec{Type: "shout", Graders: defs, Options: opts})
		if err != nil {
			t.Fatal(err)
		}
		if s, _ := g.Grade(context.Background(), reply("HEllo")); s.Verdict != agenteval.VerdictPass {
			t.Errorf("%v: %s %s", opts, s.Verdict, s.Reason)
		}
	}
	if _, err := New(Spec{Type: "shout", Graders: defs, Options: map[string]any{"min": "two"}}); err == nil || !strings.Contains(err.Error(), `setting "min" must be a whole number, not a string`) {
		t.Errorf("mistyped setting: %v", err)
	}
}

// TestCopiedBuiltin: a built-in copied and renamed by hand is built from
// its exported fields, which its New still serves.
func TestCopiedBuiltin(t *testing.T) {
	size := *Length
	size.Name, size.Aliases = "size", nil
	defs := append(All(), &size)
	if err := Validate(defs); err != nil {
		t.Fatal(err)
	}
	g, err := New(Spec{Type: "size", Graders: defs, Options: map[string]any{"max": 5}})
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := g.Grade(context.Background(), reply("short")); s.Verdict != agenteval.VerdictPass || s.Type != "size" {
		t.Errorf("%+v", s)
	}
	if _, err := New(Spec{Type: "size", Graders: defs, Options: map[string]any{"maxx": 5}}); err == nil || !strings.Contains(err.Error(), `did you mean "max"?`) {
		t.Errorf("unknown setting: %v", err)
	}
}

// TestPlanWithCallersGraders: a plan looks typed assertions up in the
// caller's list, a composite's members too; the test's own keys keep the
// built-in graders; a list that does not validate is an error.
func TestPlanWithCallersGraders(t *testing.T) {
	pos := agenteval.Pos{File: "evals.yaml", Line: 4, Col: 9}
	limit := agenteval.AssertionSpec{Type: "word_limit", Params: map[string]any{"max": 3}, Pos: pos}
	composite := agenteval.AssertionSpec{Type: "composite", Pos: pos, Params: map[string]any{"assertions": []any{
		map[string]any{"type": "word_limit", "max": 3},
		map[string]any{"type": "contains", "value": "two"},
	}}}
	tests := []struct {
		name    string
		test    agenteval.Test
		graders []*Definition
		want    []string // the whole unit's grader types
		wantErr string
	}{
		{"own type", agenteval.Test{Assertions: []agenteval.AssertionSpec{limit}}, withWordLimit(), []string{"word_limit"}, ""},
		{"default list", agenteval.Test{Assertions: []agenteval.AssertionSpec{limit}}, nil, nil, `evals.yaml:4:9: unknown assertion type "word_limit"; see agenteval score --help for the list`},
		{"short list names its types", agenteval.Test{Assertions: []agenteval.AssertionSpec{{Type: "contains", Pos: pos}}}, []*Definition{wordLimit}, nil, `evals.yaml:4:9: unknown assertion type "contains"; known types: word_limit`},
		{"composite member", agenteval.Test{Assertions: []agenteval.AssertionSpec{composite}}, withWordLimit(), []string{"composite"}, ""},
		{"composite member, default list", agenteval.Test{Assertions: []agenteval.AssertionSpec{composite}}, nil, nil, `evals.yaml:4:9: unknown assertion type "word_limit"`},
		{"string assertions keep rubrics", agenteval.Test{Assertions: []agenteval.AssertionSpec{{Criterion: "polite"}, limit}}, []*Definition{wordLimit}, []string{"rubrics", "word_limit"}, ""},
		{"duplicate", agenteval.Test{Assertions: []agenteval.AssertionSpec{limit}}, append(withWordLimit(), wordLimit), nil, `name "word_limit" is taken by word_limit`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, errs := NewPlan(&tt.test, PlanOptions{Threshold: agenteval.DefaultThreshold, Graders: tt.graders})
			err := errors.Join(errs...)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("NewPlan = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, g := range p.Whole.Graders {
				got = append(got, g.Type)
			}
			if strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Errorf("graders %v, want %v", got, tt.want)
			}
		})
	}
}

// TestIsSnake: the hand-written check agrees with the rule Validate
// states, ^[a-z][a-z0-9]*(_[a-z0-9]+)*$.
func TestIsSnake(t *testing.T) {
	for n, want := range map[string]bool{
		"contains": true, "tool_call_f1": true, "a1_2b": true, "x": true,
		"": false, "_a": false, "a_": false, "a__b": false, "1a": false, "aB": false, "a-b": false, "a b": false,
	} {
		if got := isSnake(n); got != want {
			t.Errorf("isSnake(%q) = %v, want %v", n, got, want)
		}
	}
}
