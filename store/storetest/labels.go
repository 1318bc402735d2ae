package storetest

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/store"
)

// testLabels: labels are put, replaced by key, listed in key order,
// deleted, and refused for an unknown run or with a bad verdict; text
// any Go string may hold comes back as it went in.
func testLabels(t *testing.T, s store.Store) {
	ctx := context.Background()
	lb, err := store.LabelsOf(s)
	if err != nil {
		t.Fatal(err)
	}
	mustStart(t, s, header("run-l", 0))
	mustStart(t, s, header("run-m", time.Minute))
	mustAdd(t, s, "run-l", result("t1", agenteval.VerdictPass, nil))
	if err := s.FinishRun(ctx, "run-l", store.Finish{Status: store.Done}); err != nil {
		t.Fatal(err)
	}
	if got, err := lb.RunLabels(ctx, "run-l"); err != nil || len(got) != 0 {
		t.Fatalf("labels of an unlabelled run: %v, %v", got, err)
	}
	at := t0.Add(time.Hour)
	key := func(test, crit string, trial int) store.LabelKey {
		return store.LabelKey{RunID: "run-l", Suite: "s", TestID: test, Target: "replay", Trial: trial, Score: "turn-1", Criterion: crit}
	}
	long := strings.Repeat("a criterion far longer than an index entry may be; ", 200)
	odd := "nul\x00 and \x01 and \xff"
	put := []store.Label{
		{LabelKey: key("t2", "calls book", 0), Human: agenteval.VerdictFail, Note: "it searched", Labeller: "Ana", Time: at},
		{LabelKey: key("t1", "calls book", 2), Human: agenteval.VerdictPass, Labeller: "Ana", Time: at},
		{LabelKey: key("t1", "calls book", 1), Human: agenteval.VerdictPass, Labeller: "Ana", Time: at},
		{LabelKey: key("t1", long, 0), Human: agenteval.VerdictPass, Labeller: "Ana", Time: at},
		{LabelKey: key(odd, odd, 0), Human: agenteval.VerdictFail, Note: odd, Labeller: odd, Time: at},
	}
	if err := lb.PutLabels(ctx, put); err != nil {
		t.Fatal(err)
	}
	// Another run's labels stay apart.
	other := put[0]
	other.RunID = "run-m"
	other.Time = time.Time{}
	if err := lb.PutLabels(ctx, []store.Label{other}); err != nil {
		t.Fatal(err)
	}
	want := []store.Label{put[4], put[3], put[2], put[1], put[0]}
	got, err := lb.RunLabels(ctx, "run-l")
	if err != nil {
		t.Fatal(err)
	}
	sameLabels(t, got, want)
	if m, err := lb.RunLabels(ctx, "run-m"); err != nil || len(m) != 1 || m[0].Time.IsZero() {
		t.Fatalf("run-m labels: %+v, %v (a zero time is set to now)", m, err)
	}

	// Putting a label again replaces it: a second opinion, a corrected note.
	again := put[0]
	again.Human, again.Note, again.Labeller, again.Time = agenteval.VerdictPass, "", "Bo", at.Add(time.Minute)
	if err := lb.PutLabels(ctx, []store.Label{again}); err != nil {
		t.Fatal(err)
	}
	want[4] = again
	got, err = lb.RunLabels(ctx, "run-l")
	if err != nil {
		t.Fatal(err)
	}
	sameLabels(t, got, want)

	if err := lb.DeleteLabel(ctx, put[3].LabelKey); err != nil {
		t.Fatal(err)
	}
	if err := lb.DeleteLabel(ctx, key("t9", "none", 0)); err != nil {
		t.Fatalf("deleting a label that is not there: %v", err)
	}
	got, err = lb.RunLabels(ctx, "run-l")
	if err != nil {
		t.Fatal(err)
	}
	sameLabels(t, got, []store.Label{want[0], want[2], want[3], want[4]})

	// All or none: one bad label keeps the others out.
	bad := []store.Label{
		{LabelKey: key("t3", "x", 0), Human: agenteval.VerdictPass},
		{LabelKey: key("t3", "y", 0), Human: "maybe"},
	}
	if err := lb.PutLabels(ctx, bad); err == nil || !strings.Contains(err.Error(), `human "maybe": write pass or fail`) {
		t.Fatalf("a bad verdict: %v", err)
	}
	unknown := bad[0]
	unknown.RunID = "no-such-run"
	if err := lb.PutLabels(ctx, []store.Label{bad[0], unknown}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a label of an unknown run: %v, want ErrNotFound", err)
	}
	if got, _ := lb.RunLabels(ctx, "run-l"); len(got) != 4 {
		t.Fatalf("after failed puts, %d labels, want 4", len(got))
	}
}

func sameLabels(t *testing.T, got, want []store.Label) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d labels, want %d:\n%+v", len(got), len(want), got)
	}
	for i := range want {
		g, w := got[i], want[i]
		if !g.Time.Equal(w.Time) {
			t.Errorf("label %d: time %v, want %v", i, g.Time, w.Time)
		}
		g.Time, w.Time = time.Time{}, time.Time{}
		if !reflect.DeepEqual(g, w) {
			t.Errorf("label %d:\n got %+v\nwant %+v", i, g, w)
		}
	}
}
