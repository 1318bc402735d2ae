package suite

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/agenteval/agenteval/internal/schemacheck"
	"go.yaml.in/yaml/v4"
)

// TestExamplesMatchSchema keeps the editor schema in step with the loader:
// every example suite, which the loader accepts, must validate against it.
func TestExamplesMatchSchema(t *testing.T) {
	sch, err := schemacheck.Compile(JSONSchema())
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob("../examples/*/*.yaml")
	if len(files) < 3 {
		t.Fatalf("found only %v", files)
	}
	for _, f := range files {
		if filepath.Base(f) == "agenteval.yaml" {
			continue // a project file, not an eval file
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Parse(f, data, Options{JudgeAvailable: true, Env: func(string) (string, bool) { return "x", true }}); err != nil {
			t.Errorf("%s does not load: %v", f, err)
			continue
		}
		var v any
		if err := yaml.Unmarshal(data, &v); err != nil {
			t.Fatal(err)
		}
		js, err := json.Marshal(v)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if err := sch.Validate(js); err != nil {
			t.Errorf("%s does not match the schema: %v", f, err)
		}
	}
}

// TestSchemaAssertions: each grader type takes its own settings and the
// common ones, nothing else.
func TestSchemaAssertions(t *testing.T) {
	sch, err := schemacheck.Compile(JSONSchema())
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		assertion string
		ok        bool
	}{
		{`{type: contains, value: x, weight: 2}`, true},
		{`{type: not-contains, value: x, required: true}`, true},
		{`{type: contains_any, value: [a, b]}`, true},
		{`{type: tool-trajectory, mode: any_order, expected: [{tool: a}]}`, true},
		{`{type: latency, threshold_ms: 300}`, true},
		{`"The reply is polite."`, true},
		{`{type: contains, value: x, wieght: 2}`, false},
		{`{type: contains, mode: exact}`, false},
		{`{type: tool_calls, mode: sideways}`, false},
		{`{type: contans, value: x}`, false},
		{`{value: x}`, false},
	}
	for _, tt := range tests {
		doc := "tests:\n  - id: a\n    input: hi\n    assertions: [" + tt.assertion + "]\n"
		var v any
		if err := yaml.Unmarshal([]byte(doc), &v); err != nil {
			t.Fatal(err)
		}
		js, _ := json.Marshal(v)
		err := sch.Validate(js)
		if (err == nil) != tt.ok {
			t.Errorf("%s: valid = %v, want %v (%v)", tt.assertion, err == nil, tt.ok, err)
		}
	}
}
