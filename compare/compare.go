// Package compare compares two runs test by test: which tests regressed
// (pass to fail or error), were fixed, are new or gone; how each score
// moved, down to the turn and the check that changed, with both reasons;
// and how pass rates, pass@k and pass^k, cost, tokens and latency moved.
// A test run with several trials is judged on its pass rate, with a note
// when the difference is within noise for that many trials.
//
// It may import the root package, report, results and the standard
// library.
package compare

import (
	"math"
	"sort"
	"time"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/report"
	"github.com/agenteval/agenteval/results"
)

// Input is one side of a comparison: a run's header (nil when its file has
// none), a label for people, and its results, read once in order.
type Input struct {
	Header  *results.Header
	Label   string
	Results func(fn func(*agenteval.Result) error) error
}

// Options configure Compare.
type Options struct {
	// MinDelta ignores smaller drops: a pass that became a fail with a
	// score drop (or a pass-rate drop, with trials) below it is not a
	// regression. An execution error is always one.
	MinDelta float64
}

// Change classifies a test.
type Change string

// The changes, from worst to least interesting.
const (
	Regressed Change = "regressed"
	Fixed     Change = "fixed"
	New       Change = "new"
	Gone      Change = "gone"
	Changed   Change = "changed"
	Unchanged Change = "unchanged"
)

// Comparison is the outcome of Compare.
type Comparison struct {
	Base     Side    `json:"base"`
	New      Side    `json:"new"`
	MinDelta float64 `json:"min_delta,omitempty"`
	// Targets, OnlyBase and OnlyNew say how the runs' targets were
	// matched when the two runs did not have the same targets: the pairs
	// compared (a target with itself, or the one target of each run with
	// the other), and the targets found in one run only, whose tests are
	// new or gone. All are empty when both ran the same targets.
	Targets  []TargetPair `json:"targets,omitempty"`
	OnlyBase []string     `json:"only_base_targets,omitempty"`
	OnlyNew  []string     `json:"only_new_targets,omitempty"`
	// MultiTarget is set when either run tested more than one target:
	// a test is then named with its target.
	MultiTarget bool    `json:"multi_target,omitempty"`
	Summary     Summary `json:"summary"`
	Tests       []Test  `json:"tests"`
}

// TargetPair is a target of the base run compared with one of the new.
type TargetPair struct {
	Base string `json:"base"`
	New  string `json:"new"`
}

// Side describes one run.
type Side struct {
	Label   string    `json:"label"`
	RunID   string    `json:"run_id,omitempty"`
	Started time.Time `json:"started,omitzero"`
	Target  string    `json:"target,omitempty"`
	Judge   string    `json:"judge,omitempty"`
	Commit  string    `json:"commit,omitempty"`
	Total   int       `json:"total"`
	Passed  int       `json:"passed"`
	Failed  int       `json:"failed"`
	Errored int       `json:"errored"`
	Skipped int       `json:"skipped"`
	// PassRate is passed/total.
	PassRate float64                  `json:"pass_rate"`
	PassAtK  []results.PassAtKSummary `json:"pass_at_k,omitempty"`
	Usage    agenteval.Usage          `json:"usage"`
	// Latency is over the tests' durations.
	MeanMS float64 `json:"mean_ms"`
	P95MS  float64 `json:"p95_ms"`
}

// Summary counts the changes.
type Summary struct {
	Regressed int `json:"regressed"`
	Fixed     int `json:"fixed"`
	New       int `json:"new"`
	Gone      int `json:"gone"`
	Changed   int `json:"changed"`
	Unchanged int `json:"unchanged"`
	// Ignored counts drops smaller than --min-delta.
	Ignored int `json:"ignored,omitempty"`
	// Noisy counts regressions and fixes whose pass-rate difference is
	// within noise for their number of trials.
	Noisy int `json:"noisy,omitempty"`
	// SingleTrial counts regressions judged on one trial each.
	SingleTrial int `json:"single_trial,omitempty"`
}

// Test is one test's comparison.
type Test struct {
	Suite  string `json:"suite,omitempty"`
	TestID string `json:"test_id"`
	// Target is the target the test ran against: the new run's, or the
	// base run's for a test that is gone. BaseTarget is the base run's
	// when it has another name (two runs of one target each, compared).
	Target     string   `json:"target,omitempty"`
	BaseTarget string   `json:"base_target,omitempty"`
	Change     Change   `json:"change"`
	Base       *Outcome `json:"base,omitempty"`
	New        *Outcome `json:"new,omitempty"`
	// Delta is the new score minus the base score.
	Delta float64 `json:"delta,omitempty"`
	// RateDelta is the new pass rate minus the base one, when either ran
	// several trials.
	RateDelta *float64 `json:"rate_delta,omitempty"`
	// Noise says whether a pass-rate difference is within noise for the
	// trials run, and WithinNoise is that verdict.
	Noise       string `json:"noise,omitempty"`
	WithinNoise bool   `json:"within_noise,omitempty"`
	// Ignored says why a drop is not counted as a regression.
	Ignored string `json:"ignored,omitempty"`
	// Checks are the scores and assertions that changed.
	Checks []Check `json:"checks,omitempty"`
}

// Outcome is how a test ended in one run.
type Outcome struct {
	Verdict agenteval.Verdict `json:"verdict"`
	Score   float64           `json:"score"`
	Error   string            `json:"error,omitempty"`
	// Trials and Passed are the trials run and passed (1 and 0 or 1 for a
	// test run once).
	Trials     int                 `json:"trials"`
	Passed     int                 `json:"passed"`
	PassAtK    []agenteval.PassAtK `json:"pass_at_k,omitempty"`
	Tokens     int64               `json:"tokens,omitempty"`
	CostUSD    *float64            `json:"cost_usd,omitempty"`
	DurationMS float64             `json:"duration_ms"`
	scores     []agenteval.Score
}

// Rate is the pass rate over trials.
func (o *Outcome) Rate() float64 {
	if o.Trials == 0 {
		return 0
	}
	return float64(o.Passed) / float64(o.Trials)
}

// Check is a score or assertion whose outcome changed. Path names it from
// the top: "turn-3 › tool_calls › expected call 1: …".
type Check struct {
	Path string     `json:"path"`
	Base *CheckSide `json:"base,omitempty"`
	New  *CheckSide `json:"new,omitempty"`
}

// CheckSide is a check's outcome in one run.
type CheckSide struct {
	Verdict agenteval.Verdict `json:"verdict"`
	Score   float64           `json:"score"`
	Reason  string            `json:"reason,omitempty"`
}

// testKey names a result: a test of a suite, against a target. A run of
// several targets holds one result per target for each test, and each is
// compared with the same target's result of the other run.
type testKey struct{ suite, id, target string }

// Compare reads both runs and compares them.
func Compare(base, cur Input, opt Options) (*Comparison, error) {
	c := &Comparison{MinDelta: opt.MinDelta}
	baseOut := map[testKey]*Outcome{}
	var baseOrder []testKey
	var bs sideAcc
	if err := base.Results(func(r *agenteval.Result) error {
		k := testKey{r.Suite, r.TestID, r.Target}
		if _, dup := baseOut[k]; !dup {
			baseOrder = append(baseOrder, k)
		}
		baseOut[k] = outcome(r)
		bs.add(r)
		return nil
	}); err != nil {
		return nil, err
	}
	// The new run is read whole before any test is compared: which of
	// the base run's targets a new result is compared with depends on
	// every target the new run has.
	newOut := map[testKey]*Outcome{}
	var newOrder []testKey
	var ns sideAcc
	if err := cur.Results(func(r *agenteval.Result) error {
		k := testKey{r.Suite, r.TestID, r.Target}
		if _, dup := newOut[k]; !dup {
			newOrder = append(newOrder, k)
		}
		newOut[k] = outcome(r) // a repeated test: the later result counts
		ns.add(r)
		return nil
	}); err != nil {
		return nil, err
	}
	toBase := c.matchTargets(targetsOf(baseOrder), targetsOf(newOrder))
	var tests []Test
	seen := map[testKey]bool{}
	for _, k := range newOrder {
		bk := k
		bt, paired := toBase[k.target]
		if paired {
			bk.target = bt
		}
		var b *Outcome
		if paired {
			b = baseOut[bk]
		}
		if b != nil {
			seen[bk] = true
		}
		t := diff(k, b, newOut[k], opt)
		if b != nil && bk.target != k.target {
			t.BaseTarget = bk.target
		}
		tests = append(tests, t)
	}
	for _, k := range baseOrder {
		if !seen[k] {
			tests = append(tests, diff(k, baseOut[k], nil, opt))
		}
	}
	for i := range tests {
		c.Summary.count(&tests[i])
	}
	c.Tests = tests
	c.Base = bs.side(base)
	c.New = ns.side(cur)
	return c, nil
}

// targetsOf lists the targets of a run's results, in order of appearance.
func targetsOf(keys []testKey) []string {
	var out []string
	seen := map[string]bool{}
	for _, k := range keys {
		if !seen[k.target] {
			seen[k.target] = true
			out = append(out, k.target)
		}
	}
	return out
}

// matchTargets decides which base target each new target is compared
// with, and records it in c when the runs' targets differ. A target is
// compared with the target of the same name; two runs of one target each
// are compared with each other whatever their names, as when a new
// version of an agent is run as a target of its own. It returns the base
// target of each new target that has one.
func (c *Comparison) matchTargets(base, cur []string) map[string]string {
	c.MultiTarget = len(base) > 1 || len(cur) > 1
	out := map[string]string{}
	if len(base) == 0 || len(cur) == 0 {
		return out // a run without results: nothing to match
	}
	if len(base) == 1 && len(cur) == 1 {
		out[cur[0]] = base[0]
		if base[0] != cur[0] {
			c.Targets = []TargetPair{{Base: base[0], New: cur[0]}}
		}
		return out
	}
	inBase := map[string]bool{}
	for _, t := range base {
		inBase[t] = true
	}
	same := len(base) == len(cur)
	var pairs []TargetPair
	for _, t := range cur {
		if inBase[t] {
			out[t] = t
			pairs = append(pairs, TargetPair{Base: t, New: t})
		} else {
			same = false
			c.OnlyNew = append(c.OnlyNew, t)
		}
	}
	for _, t := range base {
		if _, ok := out[t]; !ok {
			c.OnlyBase = append(c.OnlyBase, t)
		}
	}
	if !same {
		c.Targets = pairs
	}
	return out
}

// Regressions is how many tests regressed.
func (c *Comparison) Regressions() int { return c.Summary.Regressed }

func (s *Summary) count(t *Test) {
	switch t.Change {
	case Regressed:
		s.Regressed++
		if t.RateDelta == nil {
			s.SingleTrial++
		}
	case Fixed:
		s.Fixed++
	case New:
		s.New++
	case Gone:
		s.Gone++
	case Changed:
		s.Changed++
	default:
		s.Unchanged++
	}
	if t.Ignored != "" {
		s.Ignored++
	}
	if t.WithinNoise && (t.Change == Regressed || t.Change == Fixed) {
		s.Noisy++
	}
}

func outcome(r *agenteval.Result) *Outcome {
	o := &Outcome{Verdict: r.Verdict, Score: r.Score, DurationMS: r.DurationMS, PassAtK: r.PassAtK, scores: trimScores(r.Scores)}
	if r.Error != "" {
		o.Error = report.FirstFailure(r)
	}
	if r.Usage != nil {
		o.Tokens = r.Usage.InputTokens + r.Usage.OutputTokens
		o.CostUSD = r.Usage.CostUSD
	}
	if len(r.Trials) > 1 {
		o.Trials = len(r.Trials)
		for _, tr := range r.Trials {
			if tr.Verdict == agenteval.VerdictPass {
				o.Passed++
			}
		}
	} else {
		o.Trials = 1
		if r.Verdict == agenteval.VerdictPass {
			o.Passed = 1
		}
	}
	return o
}

// trimScores keeps what comparing needs: names, verdicts, scores, reasons
// and assertions, not details or usage.
func trimScores(ss []agenteval.Score) []agenteval.Score {
	if len(ss) == 0 {
		return nil
	}
	out := make([]agenteval.Score, len(ss))
	for i, s := range ss {
		out[i] = agenteval.Score{Name: s.Name, Score: s.Score, Verdict: s.Verdict, Reason: s.Reason, Assertions: s.Assertions, Scores: trimScores(s.Scores)}
	}
	return out
}

const eps = 1e-9

func failing(v agenteval.Verdict) bool {
	return v == agenteval.VerdictFail || v == agenteval.VerdictError
}

func diff(k testKey, b, n *Outcome, opt Options) Test {
	t := Test{Suite: k.suite, TestID: k.id, Target: k.target, Base: b, New: n}
	switch {
	case b == nil:
		t.Change = New
		return t
	case n == nil:
		t.Change = Gone
		return t
	}
	t.Delta = round(n.Score - b.Score)
	t.Checks = diffScores("", b.scores, n.scores)
	if b.Trials > 1 || n.Trials > 1 {
		d := round(n.Rate() - b.Rate())
		t.RateDelta = &d
		p := fisherP(b.Passed, b.Trials, n.Passed, n.Trials)
		switch {
		case math.Abs(d) < eps:
		case p >= noiseP:
			t.Noise, t.WithinNoise = fmtNoise("within noise", b, n, p), true
		default:
			t.Noise = fmtNoise("beyond noise", b, n, p)
		}
		switch {
		case n.Verdict == agenteval.VerdictError && b.Verdict != agenteval.VerdictError:
			t.Change = Regressed
		case d < -eps && -d >= opt.MinDelta-eps:
			t.Change = Regressed
		case d < -eps:
			t.Change = Changed
			t.Ignored = fmtIgnored("pass-rate drop", -d, opt.MinDelta)
		case d > eps && d >= opt.MinDelta-eps:
			t.Change = Fixed
		case d > eps || math.Abs(t.Delta) > eps || len(t.Checks) > 0 || b.Verdict != n.Verdict:
			t.Change = Changed
		default:
			t.Change = Unchanged
		}
		return t
	}
	switch {
	case b.Verdict == agenteval.VerdictPass && n.Verdict == agenteval.VerdictError:
		t.Change = Regressed
	case b.Verdict == agenteval.VerdictPass && n.Verdict == agenteval.VerdictFail:
		if drop := -t.Delta; drop < opt.MinDelta-eps {
			t.Change = Changed
			t.Ignored = fmtIgnored("score drop", drop, opt.MinDelta)
		} else {
			t.Change = Regressed
		}
	case failing(b.Verdict) && n.Verdict == agenteval.VerdictPass:
		t.Change = Fixed
	case b.Verdict != n.Verdict || math.Abs(t.Delta) > eps || len(t.Checks) > 0:
		t.Change = Changed
	default:
		t.Change = Unchanged
	}
	return t
}

func round(x float64) float64 { return math.Round(x*1e6) / 1e6 }

// diffScores lists the scores and assertions whose outcome differs, at
// every depth, matching scores by name (and by position among scores of
// the same name).
func diffScores(path string, b, n []agenteval.Score) []Check {
	var out []Check
	type keyed struct {
		name string
		nth  int
	}
	keyOf := func(ss []agenteval.Score) ([]keyed, map[keyed]*agenteval.Score) {
		seen := map[string]int{}
		keys := make([]keyed, len(ss))
		m := map[keyed]*agenteval.Score{}
		for i := range ss {
			k := keyed{ss[i].Name, seen[ss[i].Name]}
			seen[ss[i].Name]++
			keys[i] = k
			m[k] = &ss[i]
		}
		return keys, m
	}
	bk, bm := keyOf(b)
	nk, nm := keyOf(n)
	order := append([]keyed{}, nk...)
	for _, k := range bk {
		if nm[k] == nil {
			order = append(order, k)
		}
	}
	for _, k := range order {
		bs, ns := bm[k], nm[k]
		p := k.name
		if path != "" {
			p = path + " › " + k.name
		}
		side := func(s *agenteval.Score) *CheckSide {
			if s == nil {
				return nil
			}
			return &CheckSide{Verdict: s.Verdict, Score: s.Score, Reason: s.Reason}
		}
		if bs == nil || ns == nil || bs.Verdict != ns.Verdict || math.Abs(bs.Score-ns.Score) > eps {
			out = append(out, Check{Path: p, Base: side(bs), New: side(ns)})
		}
		if bs == nil || ns == nil {
			continue
		}
		out = append(out, diffScores(p, bs.Scores, ns.Scores)...)
		if len(bs.Scores) == 0 && len(ns.Scores) == 0 {
			// A composite's assertions repeat its graders', compared above.
			out = append(out, diffAssertions(p, bs.Assertions, ns.Assertions)...)
		}
	}
	return out
}

// diffAssertions lists assertions, matched by text, that passed in one run
// and not in the other.
func diffAssertions(path string, b, n []agenteval.Assertion) []Check {
	if len(b) == 0 || len(n) == 0 {
		return nil
	}
	bm := map[string]agenteval.Assertion{}
	for _, a := range b {
		bm[a.Text] = a
	}
	var out []Check
	for _, a := range n {
		ba, ok := bm[a.Text]
		if !ok || ba.Passed == a.Passed {
			continue
		}
		side := func(a agenteval.Assertion) *CheckSide {
			cs := &CheckSide{Verdict: agenteval.VerdictFail, Reason: a.Evidence}
			if a.Passed {
				cs.Verdict, cs.Score = agenteval.VerdictPass, 1
			}
			return cs
		}
		out = append(out, Check{Path: path + " › " + a.Text, Base: side(ba), New: side(a)})
	}
	return out
}

// sideAcc sums one run's results.
type sideAcc struct {
	sum   results.Summary
	usage agenteval.Usage
	ms    []float64
}

func (a *sideAcc) add(r *agenteval.Result) {
	a.sum.Add(r)
	// A result's usage counts the agent, the simulated user and the judge;
	// the summary's counts only graders.
	a.usage.Add(r.Usage)
	a.ms = append(a.ms, r.DurationMS)
}

func (a *sideAcc) side(in Input) Side {
	s := Side{Label: in.Label, Total: a.sum.Total, Passed: a.sum.Passed, Failed: a.sum.Failed, Errored: a.sum.Errored,
		Skipped: a.sum.Skipped, PassAtK: a.sum.PassAtK, Usage: a.usage}
	if h := in.Header; h != nil {
		s.RunID, s.Started, s.Target, s.Judge = h.RunID, h.Started, h.Target, h.Judge
		if h.Git != nil {
			s.Commit = h.Git.Commit
		}
	}
	if s.Total > 0 {
		s.PassRate = float64(s.Passed) / float64(s.Total)
	}
	if len(a.ms) > 0 {
		total := 0.0
		for _, m := range a.ms {
			total += m
		}
		s.MeanMS = total / float64(len(a.ms))
		sort.Float64s(a.ms)
		s.P95MS = a.ms[int(math.Ceil(0.95*float64(len(a.ms))))-1]
	}
	return s
}
