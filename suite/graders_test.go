package suite

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/grade"
	"github.com/agenteval/agenteval/internal/schemacheck"
	"go.yaml.in/yaml/v4"
)

type wordLimitOptions struct {
	Max *int `json:"max" doc:"the most words the reply may have"`
}

// wordLimit is a grader of a caller's own, made as the built-in ones are.
var wordLimit = grade.Define(grade.Definition{Name: "word_limit", Doc: "the reply has at most max words"}, nil,
	func(o wordLimitOptions, _ grade.Env) (grade.Func, error) {
		if o.Max == nil {
			return nil, fmt.Errorf("needs max: the most words allowed")
		}
		return func(_ context.Context, in *agenteval.GradeInput) (grade.Outcome, error) {
			n := len(strings.Fields(in.Output.LastAssistant()))
			if n <= *o.Max {
				return grade.Outcome{Score: 1, Reason: fmt.Sprintf("%d words", n)}, nil
			}
			return grade.Outcome{Reason: fmt.Sprintf("%d words, over %d", n, *o.Max)}, nil
		}, nil
	})

// similar stands for a grader agenteval lacks and skips under its
// AgentV name, which a caller may supply.
var similar = &grade.Definition{Name: "similar", Doc: "the reply means what value says", Params: []grade.Param{{Name: "value", Types: []string{"string"}, Doc: "the text"}},
	New: func(any, grade.Env) (grade.Func, error) {
		return func(context.Context, *agenteval.GradeInput) (grade.Outcome, error) {
			return grade.Outcome{Score: 1}, nil
		}, nil
	}}

// TestCallersGraders: assertion types are looked up, and their settings
// checked, in the list of graders the caller gives, grade.All() when none
// is given.
func TestCallersGraders(t *testing.T) {
	own := append(grade.All(), wordLimit, similar)
	suiteWith := func(assertion string) string {
		return "tests:\n  - id: a\n    input: hi\n    assertions:\n      - " + assertion + "\n"
	}
	tests := []struct {
		name     string
		src      string
		graders  []*grade.Definition
		wantType string // the assertion's type once loaded
		wantSkip bool
		wantErr  string
		wantWarn string
	}{
		{"unknown with the default list", suiteWith("{type: word_limit, max: 3}"), nil, "", false,
			`evals.yaml:5:9: unknown assertion type "word_limit"; see agenteval score --help for the list`, ""},
		{"known with the caller's list", suiteWith("{type: word_limit, max: 3}"), own, "word_limit", false, "", ""},
		{"kebab-case and negated", suiteWith("{type: not-word-limit, max: 3}"), own, "word_limit", false, "", ""},
		{"typo hints the caller's grader", suiteWith("{type: word_limt, max: 3}"), own, "", false,
			`evals.yaml:5:9: unknown assertion type "word_limt"; did you mean "word_limit"?; known types: `, ""},
		{"own settings are checked", suiteWith("{type: word_limit, max: many}"), own, "", false,
			`evals.yaml:5:9: word_limit: setting "max" must be a whole number, not a string`, ""},
		{"own grader's error", suiteWith("{type: word_limit}"), own, "", false,
			"evals.yaml:5:9: word_limit: needs max", ""},
		{"unknown own setting is dropped, as for a built-in", suiteWith("{type: word_limit, max: 3, colour: red}"), own, "word_limit", false, "",
			"word_limit does not take colour; it is ignored"},
		{"a misspelt own setting is an error", suiteWith("{type: word_limit, max: 3, maxx: 4}"), own, "", false,
			"evals.yaml:5:36: word_limit does not take maxx; did you mean max?", ""},
		{"built-ins still there", suiteWith("{type: contains, value: x}"), own, "contains", false, "", ""},
		{"AgentV name skipped by default", suiteWith("{type: similar, value: x}"), nil, "", true, "", ""},
		{"AgentV name the caller supplies", suiteWith("{type: similar, value: x}"), own, "similar", false, "", ""},
		{"duplicate name", suiteWith("{type: contains, value: x}"), append(grade.All(), &grade.Definition{Name: "contains", Doc: "mine", New: similar.New}), "", false,
			`name "contains" is taken by contains`, ""},
		{"nil definition", suiteWith("{type: contains, value: x}"), append(grade.All(), nil), "", false, "is nil", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := parse(t, tt.src, Options{Graders: tt.graders})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Parse = %v, want an error with %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			test := s.Tests[0]
			if tt.wantSkip {
				if test.Skip == "" {
					t.Errorf("not skipped: %+v", test.Assertions)
				}
				return
			}
			if test.Skip != "" || len(test.Assertions) != 1 || test.Assertions[0].Type != tt.wantType {
				t.Fatalf("skip %q, assertions %+v; want one of type %s", test.Skip, test.Assertions, tt.wantType)
			}
			var warns []string
			for _, w := range s.Warnings {
				warns = append(warns, w.Error())
			}
			if tt.wantWarn != "" && !strings.Contains(strings.Join(warns, "\n"), tt.wantWarn) {
				t.Errorf("warnings %q, want %q", warns, tt.wantWarn)
			}
		})
	}
}

// TestJSONSchemaOf: the editor schema describes the caller's graders and
// their settings.
func TestJSONSchemaOf(t *testing.T) {
	own, err := schemacheck.Compile(JSONSchemaOf(append(grade.All(), wordLimit, similar)))
	if err != nil {
		t.Fatal(err)
	}
	builtin, err := schemacheck.Compile(JSONSchema())
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		assertion     string
		own, builtins bool
	}{
		{`{type: word_limit, max: 3}`, true, false},
		{`{type: not-word-limit, max: 3, weight: 2}`, true, false},
		{`{type: word_limit, mx: 3}`, false, false},
		{`{type: similar, value: x}`, true, true}, // an AgentV name the loader skips, by default
		{`{type: similar, value: x, extra: 1}`, false, true},
		{`{type: contains, value: x}`, true, true},
	}
	for _, tt := range tests {
		doc := "tests:\n  - id: a\n    input: hi\n    assertions: [" + tt.assertion + "]\n"
		var v any
		if err := yaml.Unmarshal([]byte(doc), &v); err != nil {
			t.Fatal(err)
		}
		js, _ := json.Marshal(v)
		if err := own.Validate(js); (err == nil) != tt.own {
			t.Errorf("%s with the caller's graders: %v, want ok %v", tt.assertion, err, tt.own)
		}
		if err := builtin.Validate(js); (err == nil) != tt.builtins {
			t.Errorf("%s with the built-in graders: %v, want ok %v", tt.assertion, err, tt.builtins)
		}
	}
}
