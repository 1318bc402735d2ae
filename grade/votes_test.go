package grade

import (
	"encoding/json"
	"testing"

	"github.com/agenteval/agenteval/internal/fakellm"
)

// With samples: 3 a rubric's details (the eval's criteria and the test's
// rubric) say how its samples voted on each
// criterion, under the assertion's text; with one sample they say nothing.
func TestRubricsRecordVotes(t *testing.T) {
	j, s := fakeJudge(t)
	s.Add(&fakellm.Rule{Times: 2, Reply: verdicts(true, false, false)}, &fakellm.Rule{Reply: verdicts(true, true, false)})
	params := map[string]any{"criteria": []any{"The assistant is polite.", "A table was booked."}, "samples": 3}
	sc, err := judgeWith(t, j, "rubrics", params, booking())
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(sc.Details["self_consistency"])
	want := `[{"criterion":"criterion-1: The assistant is polite.","pass_votes":3,"samples":3},{"criterion":"criterion-2: A table was booked.","pass_votes":1,"samples":3},{"criterion":"confirms: The assistant confirms the booking time.","pass_votes":0,"samples":3}]`
	if string(got) != want {
		t.Errorf("details %s\nwant %s", got, want)
	}
	s.Reset()
	s.Add(&fakellm.Rule{Reply: verdicts(true, false, true)})
	delete(params, "samples")
	if sc, err = judgeWith(t, j, "rubrics", params, booking()); err != nil || sc.Details["self_consistency"] != nil {
		t.Errorf("one sample: details %v, %v", sc.Details, err)
	}
}
