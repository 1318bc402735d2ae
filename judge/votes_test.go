package judge

import (
	"context"
	"reflect"
	"sync/atomic"
	"testing"

	"github.com/agenteval/agenteval/internal/fakellm"
)

// A vote of three records how each criterion's samples voted; a single
// sample records nothing.
func TestVotesOf(t *testing.T) {
	j, s := newJudge(t)
	var n atomic.Int64
	s.Add(&fakellm.Rule{Reply: fakellm.Reply{Func: func(r *fakellm.Request) fakellm.Reply {
		k := n.Add(1)
		return fakellm.Reply{JSON: map[string]any{
			"c1": map[string]any{"reason": "r", "passed": true},
			"c2": map[string]any{"reason": "r", "passed": k == 1},
		}}
	}}})
	texts := []string{"polite: The assistant is polite.", "booked: A table was booked."}
	ds, _, err := j.Decide(context.Background(), "rubric", data(), criteria)
	if err != nil {
		t.Fatal(err)
	}
	if VotesOf(texts, ds) != nil || ds[0].Samples != 1 || ds[0].PassVotes != 1 {
		t.Errorf("one sample: %+v, votes %v", ds, VotesOf(texts, ds))
	}
	j.Samples = 3
	n.Store(0)
	if ds, _, err = j.Decide(context.Background(), "rubric", data(), criteria); err != nil {
		t.Fatal(err)
	}
	want := []Vote{{Criterion: texts[0], PassVotes: 3, Samples: 3}, {Criterion: texts[1], PassVotes: 1, Samples: 3}}
	if got := VotesOf(texts, ds); !reflect.DeepEqual(got, want) {
		t.Errorf("votes %+v, want %+v", got, want)
	}
	if VotesOf(texts[:1], ds) != nil {
		t.Error("votes for texts that do not match the decisions")
	}
}
