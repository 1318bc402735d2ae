package suite

import (
	"strconv"
	"strings"
	"testing"
)

// TestInspectDifferences: an agent_inspect file that runs here with
// another meaning says so, once per file, where it first applies.
func TestInspectDifferences(t *testing.T) {
	cases := []struct {
		name, file, json string
		// want is "key@line:col(count)" for each difference, in order.
		want []string
	}{
		{"simulated samples run under our turn limit", "s.json", `[
 {"id": 1, "user_instruction": "Find a lamp.", "sub_goals": [{"details": "It searches", "turn": "all"}]},
 {"id": 2, "user_instruction": "Find a desk.", "sub_goals": [{"details": "It searches", "turn": null}]}
]`, []string{"simulated-max-turns@2:12(2)"}},
		{"a subgoal with a turn", "s.json", `[
 {"id": 1, "conversation": [{"turn_id": 1, "message": "hi"}, {"turn_id": 2, "message": "book it"}],
  "sub_goals": [{"details": "It books", "turn": 1}, {"details": "It greets", "turn": 0}, {"details": "It is polite"}]}
]`, []string{"subgoal-turn@3:49(2)"}},
		{"scripted samples without turns: nothing differs", "s.json", `[
 {"id": 1, "conversation": [{"turn_id": 1, "message": "hi"}], "sub_goals": [{"details": "It greets", "turn": "all"}]}
]`, nil},
		{"the dataset schema", "d.json", `[
 {"id": "a", "input": [{"role": "user", "content": "Cancel my order.", "terminating_condition": "cancelled"}],
  "metadata": {"subgoals": [{"type": "check", "details": "It cancels", "turn": 2}], "expected_tools": []}},
 {"id": "b", "input": [{"role": "user", "content": "Track my order."}],
  "metadata": {"subgoals": [{"type": "check", "details": "It tracks", "turn": "all"}]}}
]`, []string{"simulated-max-turns@2:23(2)", "subgoal-turn@3:80(1)"}},
		{"the dataset schema with targets: scripted", "d.json", `[
 {"id": "a", "input": [{"role": "user", "content": "Hi."}], "target": ["Hello."],
  "metadata": {"subgoals": [{"type": "check", "details": "It greets", "turn": "all"}]}}
]`, nil},
		{"exact values of expected calls", "s.json", `[
 {"id": 1, "conversation": [{"turn_id": 1, "message": "Book seat 12."}],
  "expected_tool_calls": [
    {"tool": "book", "expected_parameters": [{"name": "seat", "value": "12"}, {"name": "why", "value": null, "check": "a window seat"}], "turn": 0},
    {"tool": "pay", "expected_parameters": [], "expected_output": {"value": {"ok": true}, "check": null}, "turn": 0},
    {"tool": "mail", "expected_parameters": [{"name": "to", "check": "the user"}], "turn": 0}]}
]`, []string{"exact-value@4:72(2)"}},
		{"expected tools of the dataset schema", "d.json", `[
 {"id": "a", "input": [{"role": "user", "content": "Hi."}], "target": ["Hello."],
  "metadata": {"subgoals": [{"type": "check", "details": "It greets", "turn": "all"}],
               "expected_tools": ["[{'tool_code': 'greet(name=Ann)'}]"]}}
]`, []string{"dataset-expected-tools@4:16(1)"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := Parse(c.file, []byte(c.json), Options{JudgeAvailable: true})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, d := range s.Differences {
				got = append(got, d.Key+"@"+strconv.Itoa(d.Line)+":"+strconv.Itoa(d.Col)+"("+strconv.Itoa(d.Count)+")")
				if d.Peer != "agent_inspect" || !strings.Contains(d.String(), "differs from agent_inspect: ") {
					t.Errorf("String() = %q", d.String())
				}
			}
			if strings.Join(got, " ") != strings.Join(c.want, " ") {
				t.Errorf("differences = %v, want %v", got, c.want)
			}
		})
	}
}
