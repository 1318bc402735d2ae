package report

import (
	"bufio"
	"encoding/xml"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/results"
)

// junitCase is what the JUnit writer keeps of a result until the end: the
// XML format puts counts before the cases, so the cases wait in memory, in
// this compact form, not as whole results.
type junitCase struct {
	// key is the result's, for the order of the cases.
	key                                          resultKey
	suite, name, target, status, message, detail string
	seconds                                      float64
	// trials and passed count the test's trials and passAtK holds its
	// pass@k and pass^k, when it ran more than once.
	trials, passed int
	passAtK        []agenteval.PassAtK
}

type junitWriter struct {
	w     io.Writer
	cases []junitCase
	// suites total each suite's results, for its pass@k and pass^k.
	suites map[string]*results.Summary
	order  resultOrder
}

// NewJUnit writes JUnit XML, which CI systems show as test reports: one
// testsuite per eval suite, one testcase per test; failures carry the
// reasons, errors the cause. When tests ran several trials, a testsuite's
// properties hold its pass@k, pass^k and tests@k (how many tests ran at
// least k trials) for each k, and a testcase's hold its trials,
// trials_passed, and its own pass@k and pass^k. Suites and cases come in
// the suite's order (the header's order of suites, then test ids), not in
// the order the tests finished.
func NewJUnit(w io.Writer) Writer {
	return &junitWriter{w: w, suites: map[string]*results.Summary{}, order: newOrder(nil)}
}

// Start learns the order of the run's suites and targets.
func (j *junitWriter) Start(h *results.Header) error {
	if h != nil {
		j.order = newOrder(h)
	}
	return nil
}

func (j *junitWriter) Write(r *agenteval.Result) error {
	c := junitCase{key: resultKey{r.Suite, r.TestID, r.Target}, suite: r.Suite, name: r.TestID, target: r.Target, seconds: r.DurationMS / 1000}
	if c.suite == "" {
		c.suite = "agenteval"
	}
	sum := j.suites[c.suite]
	if sum == nil {
		sum = &results.Summary{}
		j.suites[c.suite] = sum
	}
	sum.Add(r)
	if n, passed, _ := results.TrialCounts(r); n > 1 {
		c.trials, c.passed = n, passed
		c.passAtK, _ = results.PassAtK(r)
	}
	switch r.Verdict {
	case agenteval.VerdictPass:
		c.status = "pass"
	case agenteval.VerdictSkip:
		c.status, c.message = "skip", r.Error
	case agenteval.VerdictError:
		c.status, c.message, c.detail = "error", firstLine(r.Error), r.Error
		if r.Error == "" {
			var b strings.Builder
			for _, s := range r.Scores {
				writeFailures(&b, s, "")
			}
			c.message, c.detail = "a grader could not run", b.String()
		}
	default:
		c.status = "fail"
		c.message = fmt.Sprintf("score %.3f below the threshold", r.Score)
		var b strings.Builder
		for _, s := range r.Scores {
			writeFailures(&b, s, "")
		}
		// Trials that failed to run, or a dependency that failed, are
		// said here: no score shows them.
		if r.Error != "" {
			b.WriteString(r.Error + "\n")
		}
		c.detail = b.String()
	}
	j.cases = append(j.cases, c)
	return nil
}

func writeFailures(b *strings.Builder, s agenteval.Score, indent string) {
	if s.Verdict == agenteval.VerdictPass {
		return
	}
	fmt.Fprintf(b, "%s%s %.3f %s: %s\n", indent, s.Name, s.Score, s.Verdict, s.Reason)
	for _, a := range s.Assertions {
		if !a.Passed {
			fmt.Fprintf(b, "%s  ✗ %s", indent, a.Text)
			if a.Evidence != "" {
				fmt.Fprintf(b, ": %s", a.Evidence)
			}
			b.WriteByte('\n')
		}
	}
	for _, n := range s.Scores {
		writeFailures(b, n, indent+"  ")
	}
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

type xmlTestsuites struct {
	XMLName  xml.Name       `xml:"testsuites"`
	Tests    int            `xml:"tests,attr"`
	Failures int            `xml:"failures,attr"`
	Errors   int            `xml:"errors,attr"`
	Skipped  int            `xml:"skipped,attr"`
	Time     string         `xml:"time,attr"`
	Suites   []xmlTestsuite `xml:"testsuite"`
}

type xmlTestsuite struct {
	Name     string         `xml:"name,attr"`
	Tests    int            `xml:"tests,attr"`
	Failures int            `xml:"failures,attr"`
	Errors   int            `xml:"errors,attr"`
	Skipped  int            `xml:"skipped,attr"`
	Time     string         `xml:"time,attr"`
	Props    *xmlProperties `xml:"properties,omitempty"`
	Cases    []xmlTestcase  `xml:"testcase"`
}

type xmlTestcase struct {
	Name      string         `xml:"name,attr"`
	Classname string         `xml:"classname,attr"`
	Time      string         `xml:"time,attr"`
	Props     *xmlProperties `xml:"properties,omitempty"`
	Failure   *xmlProblem    `xml:"failure,omitempty"`
	Error     *xmlProblem    `xml:"error,omitempty"`
	Skipped   *xmlProblem    `xml:"skipped,omitempty"`
}

type xmlProblem struct {
	Message string `xml:"message,attr,omitempty"`
	Text    string `xml:",chardata"`
}

type xmlProperties struct {
	Props []xmlProperty `xml:"property"`
}

type xmlProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

func (p *xmlProperties) add(name, value string) {
	p.Props = append(p.Props, xmlProperty{Name: name, Value: value})
}

func prob(f float64) string { return fmt.Sprintf("%.4f", f) }

// suiteProps is a testsuite's pass@k, pass^k and tests@k for each k, or nil
// when none of its tests ran more than once.
func suiteProps(ps []results.PassAtKSummary) *xmlProperties {
	if len(ps) == 0 {
		return nil
	}
	p := &xmlProperties{}
	for _, v := range ps {
		p.add(fmt.Sprintf("pass@%d", v.K), prob(v.PassAtK))
		p.add(fmt.Sprintf("pass^%d", v.K), prob(v.PassHatK))
		p.add(fmt.Sprintf("tests@%d", v.K), fmt.Sprint(v.Tests))
	}
	return p
}

// caseProps is a testcase's trial counts and pass@k and pass^k, or nil when
// it ran once.
func caseProps(c junitCase) *xmlProperties {
	if c.trials < 2 {
		return nil
	}
	p := &xmlProperties{}
	p.add("trials", fmt.Sprint(c.trials))
	p.add("trials_passed", fmt.Sprint(c.passed))
	for _, v := range c.passAtK {
		p.add(fmt.Sprintf("pass@%d", v.K), prob(v.PassAtK))
		p.add(fmt.Sprintf("pass^%d", v.K), prob(v.PassHatK))
	}
	return p
}

func secs(f float64) string { return fmt.Sprintf("%.3f", f) }

func (j *junitWriter) Close(*results.Summary) error {
	bySuite := map[string]*xmlTestsuite{}
	var names []string
	root := xmlTestsuites{}
	var total float64
	// A run of several targets has a case per test and target: the
	// target goes in the name, so that CI does not take them for one.
	targets := map[string]bool{}
	for _, c := range j.cases {
		targets[c.target] = true
	}
	slices.SortStableFunc(j.cases, func(a, b junitCase) int { return j.order.compare(a.key, b.key) })
	for _, c := range j.cases {
		if len(targets) > 1 {
			c.name += " [" + c.target + "]"
		}
		s := bySuite[c.suite]
		if s == nil {
			s = &xmlTestsuite{Name: c.suite}
			bySuite[c.suite] = s
			names = append(names, c.suite)
		}
		tc := xmlTestcase{Name: c.name, Classname: c.suite, Time: secs(c.seconds), Props: caseProps(c)}
		switch c.status {
		case "fail":
			tc.Failure = &xmlProblem{Message: c.message, Text: c.detail}
			s.Failures++
		case "error":
			tc.Error = &xmlProblem{Message: c.message, Text: c.detail}
			s.Errors++
		case "skip":
			tc.Skipped = &xmlProblem{Message: c.message}
			s.Skipped++
		}
		s.Tests++
		s.Cases = append(s.Cases, tc)
		total += c.seconds
	}
	for _, n := range names {
		s := bySuite[n]
		var t float64
		for _, c := range s.Cases {
			var v float64
			fmt.Sscan(c.Time, &v)
			t += v
		}
		s.Time = secs(t)
		s.Props = suiteProps(j.suites[n].PassAtK)
		root.Suites = append(root.Suites, *s)
		root.Tests += s.Tests
		root.Failures += s.Failures
		root.Errors += s.Errors
		root.Skipped += s.Skipped
	}
	root.Time = secs(total)
	bw := bufio.NewWriter(j.w)
	bw.WriteString(xml.Header)
	enc := xml.NewEncoder(bw)
	enc.Indent("", "  ")
	if err := enc.Encode(root); err != nil {
		return fmt.Errorf("write junit: %w", err)
	}
	bw.WriteByte('\n')
	return bw.Flush()
}
