package target

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestADKCallKeepsNestedKeyOrder: an ADK function_call part's nested
// arguments keep the order the agent wrote them in, so that a
// reference copied from the agent's log compares equal in Ragas's exact
// tool_call_accuracy; arguments that are not an object stay raw text.
func TestADKCallKeepsNestedKeyOrder(t *testing.T) {
	tests := []struct {
		name, data string
		wantOrder  map[string][]string
		wantRaw    string
		wantArgs   bool
	}{
		{"nested", `{"id":"c1","name":"plan","args":{"todos":[{"task":"x","status":"open"}],"opts":{"z":1,"a":2}}}`,
			map[string][]string{"/todos/0": {"task", "status"}, "/opts": {"z", "a"}}, "", true},
		{"flat", `{"id":"c1","name":"find","args":{"cuisine":"italian","city":"Lisbon"}}`, nil, "", true},
		{"none", `{"id":"c1","name":"now"}`, nil, "", true},
		{"not an object", `{"id":"c1","name":"find","args":"italian"}`, nil, `"italian"`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var d adkFunction
			if err := json.Unmarshal([]byte(tt.data), &d); err != nil {
				t.Fatal(err)
			}
			c := d.toolCall()
			if diff := cmp.Diff(tt.wantOrder, c.KeyOrder); diff != "" {
				t.Errorf("KeyOrder (-want +got):\n%s", diff)
			}
			if c.RawArgs != tt.wantRaw || (c.Args != nil) != tt.wantArgs {
				t.Errorf("Args = %v, RawArgs = %q; want args %v, raw %q", c.Args, c.RawArgs, tt.wantArgs, tt.wantRaw)
			}
		})
	}
}
