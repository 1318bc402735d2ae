package report

import (
	"cmp"
	"strings"

	"github.com/agenteval/agenteval/results"
)

// Results arrive in the order their tests finish, which differs from one
// run to the next. Everything written after the fact lists them in the
// suite's order instead, so that two runs of a suite read alike and diff
// cleanly: by suite as the run's header lists them, then by where the test
// stands in its file when that is known, else by test id, then by target
// as the header lists them. Suites and targets the header does not name
// come after those it does, by name. A result does not record where its
// test stood; but score writes a dataset's results in input order, so
// there the order they came in is that place. A result holds all its
// trials, so there is no trial to order by.

// resultKey is what orders a result.
type resultKey struct{ suite, id, target string }

// resultOrder ranks results by resultKey, knowing the header's order of
// suites and targets.
type resultOrder struct {
	suites, targets map[string]int
	// inFileOrder says the results come in their file's order (score's):
	// results of one suite keep the order they came in.
	inFileOrder bool
}

// newOrder is the order of a run's results; h may be nil (a results file
// without a header), and names then order everything.
func newOrder(h *results.Header) resultOrder {
	o := resultOrder{suites: map[string]int{}, targets: map[string]int{}}
	if h == nil {
		return o
	}
	o.inFileOrder = h.Command == "score"
	for i, s := range h.Suites {
		// Results name a suite by its name, or by its path when it has
		// none (a dataset).
		for _, n := range []string{s.Name, s.Path} {
			if _, ok := o.suites[n]; !ok && n != "" {
				o.suites[n] = i
			}
		}
	}
	o.rankTargets(h.TargetNames())
	return o
}

// rankTargets orders the targets as names lists them.
func (o resultOrder) rankTargets(names []string) {
	for i, t := range names {
		if _, ok := o.targets[t]; !ok {
			o.targets[t] = i
		}
	}
}

// compare is negative when a comes before b, 0 for the same test (or, in
// file order, the same suite): the writers sort stably.
func (o resultOrder) compare(a, b resultKey) int {
	if c := ranked(o.suites, a.suite, b.suite); c != 0 || o.inFileOrder {
		return c
	}
	if c := compareIDs(a.id, b.id); c != 0 {
		return c
	}
	return ranked(o.targets, a.target, b.target)
}

// ranked orders two names by their rank, unranked ones last and by name.
func ranked(rank map[string]int, a, b string) int {
	ra, oka := rank[a]
	rb, okb := rank[b]
	switch {
	case oka && okb:
		if c := cmp.Compare(ra, rb); c != 0 {
			return c
		}
	case oka:
		return -1
	case okb:
		return 1
	}
	return strings.Compare(a, b)
}

// compareIDs orders test ids with the runs of digits in them compared as
// numbers, so that case-2 comes before case-10 as it does in most eval
// files; ids equal that way (case-02, case-2) fall back to their bytes.
func compareIDs(a, b string) int {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		if isDigit(a[i]) && isDigit(b[j]) {
			si, sj := i, j
			for i < len(a) && isDigit(a[i]) {
				i++
			}
			for j < len(b) && isDigit(b[j]) {
				j++
			}
			na, nb := strings.TrimLeft(a[si:i], "0"), strings.TrimLeft(b[sj:j], "0")
			if c := cmp.Compare(len(na), len(nb)); c != 0 {
				return c
			}
			if c := strings.Compare(na, nb); c != 0 {
				return c
			}
			continue
		}
		if c := cmp.Compare(a[i], b[j]); c != 0 {
			return c
		}
		i++
		j++
	}
	if c := cmp.Compare(len(a)-i, len(b)-j); c != 0 {
		return c
	}
	return strings.Compare(a, b)
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }
