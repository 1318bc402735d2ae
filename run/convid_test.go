package run

import (
	"strings"
	"testing"
)

const twoTurns = `
name: shop
tests:
  - id: find-book-confirm
    mode: conversation
    trials: 2
    turns:
      - input: Find me a table.
        assertions:
          - {type: contains, value: reply}
      - input: Book it.
        assertions:
          - {type: contains, value: reply}
`

// TestConversationIDsUniquePerRun: an agent that keys its memory on the
// conversation id must never be handed an earlier run's conversation. Two
// runs of the same suite get different ids; within a run the trials and
// the targets do; the turns of one conversation share theirs; and a run id
// given in Options is in the id, which stays readable.
func TestConversationIDsUniquePerRun(t *testing.T) {
	s := loadSuite(t, twoTurns)
	// ids runs the suite against target and returns, by trial, the ids its
	// requests carried, checking that the turns of a trial share one.
	ids := func(opt Options) map[int]string {
		t.Helper()
		agent := &echo{}
		opt.Agent = agent
		runAll(t, s, opt)
		byTrial := map[int]string{}
		for _, req := range agent.calls {
			if req.TestID != "find-book-confirm" || req.Trial < 1 {
				t.Errorf("request test %q, trial %d", req.TestID, req.Trial)
			}
			if have, ok := byTrial[req.Trial]; ok && have != req.ConversationID {
				t.Errorf("trial %d: turn %d has id %q, an earlier turn %q", req.Trial, req.Turn, req.ConversationID, have)
			}
			byTrial[req.Trial] = req.ConversationID
		}
		if len(byTrial) != 2 {
			t.Fatalf("ids by trial: %v", byTrial)
		}
		return byTrial
	}

	first, second := ids(Options{Target: "a"}), ids(Options{Target: "a"})
	seen := map[string]string{}
	for name, got := range map[string]map[int]string{"first run": first, "second run": second} {
		for trial, id := range got {
			if where, dup := seen[id]; dup {
				t.Errorf("%s trial %d has id %q, as %s did", name, trial, id, where)
			}
			seen[id] = name
		}
	}

	a, b := ids(Options{Target: "a", RunID: "r1"}), ids(Options{Target: "b", RunID: "r1"})
	if a[1] != "r1/a/shop/find-book-confirm#1" || a[2] != "r1/a/shop/find-book-confirm#2" {
		t.Errorf("ids with run id r1 and target a: %v", a)
	}
	for trial := range a {
		if a[trial] == b[trial] {
			t.Errorf("targets a and b share id %q", a[trial])
		}
		if !strings.HasPrefix(b[trial], "r1/b/") {
			t.Errorf("target b: %q", b[trial])
		}
	}
}
