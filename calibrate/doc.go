// Package calibrate measures how far to trust a judge: it sets the
// verdicts a run's judge gave its criteria beside the verdicts people gave
// the same criteria (store.Label) and reports, overall, per judge model,
// per grader type and per criterion, the raw agreement, Cohen's κ, the
// confusion matrix and the false-pass rate with its Wilson interval. A
// criterion with a low κ or a high false-pass rate is flagged as too
// vague to judge, with the labels the judge decided otherwise. It also
// finds the criterion a label file's row names (Index), and reads the
// self-consistency a voting judge records (Votes).
//
// It may import the root package, store, internal/suggest and the
// standard library.
package calibrate
