package run

import (
	"fmt"
	"testing"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/results"
)

// TestNegatedChecksKeepTheirName: a negated check is scored, and
// summarised, under its own name (not_contains_any), never under the name
// of the check it inverts, whether it is negated by its type's not_ prefix
// or by negate: true, alone in its test or beside other checks.
func TestNegatedChecksKeepTheirName(t *testing.T) {
	yaml := `
tests:
  - id: alone
    input: hi
    assertions: [{type: not_contains_any, value: [sorry, cannot]}]
  - id: beside
    input: hi
    assertions:
      - {type: contains_any, value: [reply]}
      - {type: not-contains-any, value: [sorry]}
  - id: flag
    input: hi
    assertions: [{type: contains, value: sorry, negate: true}]
`
	res := runAll(t, loadSuite(t, yaml), Options{Agent: &echo{}})
	var sum results.Summary
	got := map[string]string{}
	for _, id := range []string{"alone", "beside", "flag"} {
		r := res[id]
		sum.Add(r)
		var names []string
		for _, s := range r.Scores {
			names = append(names, s.Name)
		}
		got[id] = fmt.Sprint(names)
		if r.Verdict != agenteval.VerdictPass {
			t.Errorf("%s: %+v", id, r)
		}
	}
	want := map[string]string{"alone": "[not_contains_any]", "beside": "[contains_any not_contains_any]", "flag": "[not_contains]"}
	for id, w := range want {
		if got[id] != w {
			t.Errorf("%s: score names %s, want %s", id, got[id], w)
		}
	}
	if names := fmt.Sprint(sum.MetricNames()); names != "[contains_any not_contains not_contains_any]" {
		t.Errorf("summary metrics %s", names)
	}
}
