package suite

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// v5 scenarios expand to one test per config and test, named as AgentV
// names them, with the config's keys and assertions merged in.
func TestScenarioIDs(t *testing.T) {
	s, err := Parse("s.yaml", []byte(`providers: [openai:m]
prompts: ["Translate {{ text }} to {{ lang }}"]
scenarios:
  - config:
      - id: spanish
        vars: {lang: Spanish}
        assert: [{type: contains, value: a}]
      - vars: {lang: French}
        assert: [{type: contains, value: f}]
    tests:
      - vars: {text: hello}
        assert: [{type: contains, value: b}]
      - vars: {text: bye}
  - config:
      - id: german
        vars: {lang: German}
    tests:
      - id: named
        vars: {text: hi}
        assert: [{type: contains, value: c}]
`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, tc := range s.Tests {
		var vals []string
		for _, a := range tc.Assertions {
			vals = append(vals, a.Params["value"].(string))
		}
		ids = append(ids, tc.ID+"="+tc.Input[0].Content+"/"+strings.Join(vals, ""))
	}
	want := []string{
		"spanish__scenario_test_1=Translate hello to Spanish/ab",
		"spanish__scenario_test_2=Translate bye to Spanish/a",
		"scenario-1-2-1=Translate hello to French/fb",
		"scenario-1-2-2=Translate bye to French/f",
		"named=Translate hi to German/c",
	}
	if diff := cmp.Diff(want, ids); diff != "" {
		t.Errorf("tests (-want +got):\n%s", diff)
	}
}
