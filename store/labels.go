package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agenteval/agenteval"
)

// LabelKey names one judged criterion of a stored run: the unit a human
// labels. Suite, TestID and Target are the result's; Trial is 0 for a
// result without trials, else the trial's number (1..n) in the result's
// Trials; Score is the score's name in the result (a nested score's names
// from the top, joined by "/"); Criterion is the assertion's text exactly
// as the result shows it ("criterion-1: The reply is polite.").
type LabelKey struct {
	RunID     string `json:"run_id,omitempty"`
	Suite     string `json:"suite"`
	TestID    string `json:"test_id"`
	Target    string `json:"target"`
	Trial     int    `json:"trial,omitempty"`
	Score     string `json:"score"`
	Criterion string `json:"criterion"`
}

// String is the key as messages show it.
func (k LabelKey) String() string {
	var b strings.Builder
	if k.Suite != "" {
		b.WriteString(k.Suite + "/")
	}
	b.WriteString(k.TestID)
	if k.Target != "" {
		b.WriteString(" [" + k.Target + "]")
	}
	if k.Trial > 0 {
		fmt.Fprintf(&b, " trial %d", k.Trial)
	}
	fmt.Fprintf(&b, " %s %q", k.Score, k.Criterion)
	return b.String()
}

// Label is a human's verdict on one judged criterion: whether the
// criterion holds (pass) or not (fail), whatever the judge said.
type Label struct {
	LabelKey
	// Human is pass or fail.
	Human agenteval.Verdict `json:"human"`
	Note  string            `json:"note,omitempty"`
	// Labeller names who labelled: git config user.name, or --as.
	Labeller string `json:"labeller,omitempty"`
	// Time is when the label was last put; PutLabels sets it when zero.
	Time time.Time `json:"time"`
}

// Check says what is wrong with a label, or returns nil.
func (l *Label) Check() error {
	switch {
	case l.RunID == "":
		return errors.New("a label needs the run it labels")
	case l.TestID == "":
		return errors.New("a label needs a test_id")
	case l.Score == "":
		return errors.New("a label needs the score's name (score)")
	case l.Criterion == "":
		return errors.New("a label needs the criterion it labels")
	case l.Trial < 0:
		return fmt.Errorf("trial %d: trials are numbered from 1 (0 or none for a test without trials)", l.Trial)
	case l.Human != agenteval.VerdictPass && l.Human != agenteval.VerdictFail:
		return fmt.Errorf("human %q: write pass or fail", l.Human)
	}
	return nil
}

// Labels keeps human labels beside the runs they label. The SQL stores
// (store/sqlite, store/postgres) implement it; LabelsOf finds it on a
// Store. A run's labels go when the run goes.
type Labels interface {
	// PutLabels stores labels, each replacing the label with its key, all
	// or none (one transaction). A zero Time is set to now. Each label is
	// checked (Label.Check) and its run must be stored; whether its test,
	// score and criterion exist in the run is the caller's to check.
	PutLabels(ctx context.Context, ls []Label) error
	// RunLabels lists a run's labels, ordered by suite, test, target,
	// trial, score and criterion. A run without labels has none: no error.
	RunLabels(ctx context.Context, runID string) ([]Label, error)
	// DeleteLabel removes the label with the key, if there is one.
	DeleteLabel(ctx context.Context, k LabelKey) error
}

// LabelsOf is the label keeper of a store, or an error saying the store
// keeps none.
func LabelsOf(s Store) (Labels, error) {
	if l, ok := s.(Labels); ok {
		return l, nil
	}
	return nil, fmt.Errorf("this store (%T) keeps no labels", s)
}
