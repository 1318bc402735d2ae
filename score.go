package agenteval

// Verdict is the outcome of a score or a test.
type Verdict string

// The verdicts. VerdictError means the grader or the agent could not run (judge
// down, bad judge output after repair, a field the metric needs is missing);
// it is never used for a plain low score.
const (
	VerdictPass  Verdict = "pass"
	VerdictFail  Verdict = "fail"
	VerdictSkip  Verdict = "skip"
	VerdictError Verdict = "error"
)

// ExecutionStatus says whether a test ran to the end.
type ExecutionStatus string

// The execution statuses, as AgentV names them.
const (
	StatusOK             ExecutionStatus = "ok"
	StatusQualityFailure ExecutionStatus = "quality_failure"
	StatusExecutionError ExecutionStatus = "execution_error"
)

// StatusOf is the execution status of a test or trial with verdict v: a
// test that could not be graded or did not run (error, skip) ended in
// execution_error; one that failed, in quality_failure.
func StatusOf(v Verdict) ExecutionStatus {
	switch v {
	case VerdictPass:
		return StatusOK
	case VerdictFail:
		return StatusQualityFailure
	}
	return StatusExecutionError
}

// DefaultThreshold is the score at or above which a grader or test passes.
const DefaultThreshold = 0.8

// Usage counts the tokens spent on something, and its cost when a price is
// known. A nil CostUSD means "no price known", which is not the same as 0.
type Usage struct {
	Calls int `json:"calls,omitempty"`
	// CachedCalls counts judge calls answered from the cache: no tokens spent.
	CachedCalls  int   `json:"cached_calls,omitempty"`
	InputTokens  int64 `json:"input_tokens"`
	OutputTokens int64 `json:"output_tokens"`
	// CachedTokens counts tokens an agent reports as read from its
	// provider's prompt cache, apart from InputTokens (AgentV's cli
	// token_usage.cached); model targets count them in InputTokens.
	CachedTokens int64    `json:"cached_tokens,omitempty"`
	CostUSD      *float64 `json:"cost_usd,omitempty"`
	// Retries counts the calls' attempts that failed and were made again
	// (429, 5xx, timeouts); WaitedMS, the time spent waiting on backoff,
	// Retry-After and the rate limit.
	Retries  int     `json:"retries,omitempty"`
	WaitedMS float64 `json:"waited_ms,omitempty"`
}

// Add accumulates o into u. The total cost stays known only while the cost of
// every part that used anything is known.
func (u *Usage) Add(o *Usage) {
	if o == nil {
		return
	}
	u.CachedCalls += o.CachedCalls
	u.Retries += o.Retries
	u.WaitedMS += o.WaitedMS
	// A cost with no tokens counts: an agent may report what it spent
	// and nothing else.
	if o.empty() && o.CostUSD == nil {
		return
	}
	known := ((u.empty() && u.CostUSD == nil) || u.CostUSD != nil) && o.CostUSD != nil
	u.Calls += o.Calls
	u.InputTokens += o.InputTokens
	u.OutputTokens += o.OutputTokens
	u.CachedTokens += o.CachedTokens
	if !known {
		u.CostUSD = nil
		return
	}
	c := *o.CostUSD
	if u.CostUSD != nil {
		c += *u.CostUSD
	}
	u.CostUSD = &c
}

func (u *Usage) empty() bool {
	return u.Calls == 0 && u.InputTokens == 0 && u.OutputTokens == 0 && u.CachedTokens == 0
}

// IsZero reports whether nothing was used, not even a cached call, and
// no cost was reported.
func (u *Usage) IsZero() bool {
	return u == nil || (u.empty() && u.CachedCalls == 0 && u.CostUSD == nil)
}

// TokensKnown reports whether the tokens were counted: some call was made
// whose usage came back, or some tokens were reported. An agent that
// reports no usage (a cli or http target that leaves it out) leaves them
// unknown, and budget graders say so instead of reading 0.
func (u *Usage) TokensKnown() bool {
	return u != nil && !u.empty()
}

// Assertion is one checked statement inside a score, with the evidence for
// its outcome.
type Assertion struct {
	Text     string `json:"text"`
	Passed   bool   `json:"passed"`
	Evidence string `json:"evidence,omitempty"`
}

// Score is what a grader returns: a number in [0,1], a verdict, and the
// reasons behind them.
type Score struct {
	Name     string  `json:"name"`
	Type     string  `json:"type"`
	Score    float64 `json:"score"`
	Verdict  Verdict `json:"verdict"`
	Weight   float64 `json:"weight"`
	Required bool    `json:"required,omitempty"`
	Reason   string  `json:"reason,omitempty"`
	// DurationMS is wall time in milliseconds, with microsecond precision.
	DurationMS float64     `json:"duration_ms"`
	Usage      *Usage      `json:"usage,omitempty"`
	Assertions []Assertion `json:"assertions,omitempty"`
	// Details holds structured evidence that does not fit an assertion, such
	// as the inferred user goal of goal accuracy.
	Details map[string]any `json:"details,omitempty"`
	Scores  []Score        `json:"scores,omitempty"`
}

// VerdictFor turns a score into pass or fail against a threshold.
func VerdictFor(score, threshold float64) Verdict {
	if score >= threshold-1e-12 {
		return VerdictPass
	}
	return VerdictFail
}

// Combine aggregates graders' scores into one: the weighted mean of the
// scores that ran, forced to 0 when a required grader failed. Skipped scores
// do not count. The verdict is error when any score is an error, otherwise
// pass when the mean reaches the threshold and no required grader failed.
// With nothing to count the score is 1.
func Combine(scores []Score, threshold float64) (float64, Verdict) {
	var sum, weights float64
	requiredFailed, errored, counted := false, false, 0
	for _, s := range scores {
		switch {
		case s.Verdict == VerdictSkip:
			continue
		case s.Verdict == VerdictError && s.Weight == 0:
			// Shown, never counted: a score of weight 0 cannot make the
			// unit an error either.
			continue
		case s.Verdict == VerdictError:
			errored = true
			continue
		}
		if s.Required && s.Verdict == VerdictFail {
			requiredFailed = true
		}
		counted++
		sum += s.Weight * s.Score
		weights += s.Weight
	}
	mean := 1.0
	switch {
	case weights > 0:
		mean = sum / weights
	case counted == 0 && errored:
		// Nothing could be graded: there is no evidence of success.
		mean = 0
	}
	if requiredFailed {
		mean = 0
	}
	switch {
	case errored:
		return mean, VerdictError
	case requiredFailed:
		return mean, VerdictFail
	}
	return mean, VerdictFor(mean, threshold)
}

// Result is the outcome of one test: one line of a results JSONL file.
type Result struct {
	TestID string `json:"test_id"`
	Suite  string `json:"suite,omitempty"`
	Target string `json:"target,omitempty"`
	// ConversationID groups the tests of one conversation thread, as the
	// eval file's conversation_id says.
	ConversationID string `json:"conversation_id,omitempty"`
	// Tags come from the test's metadata.tags, for filtering reports.
	Tags            []string        `json:"tags,omitempty"`
	Score           float64         `json:"score"`
	Verdict         Verdict         `json:"verdict"`
	ExecutionStatus ExecutionStatus `json:"execution_status"`
	Scores          []Score         `json:"scores"`
	Output          Conversation    `json:"output,omitempty"`
	// Simulation is how the simulated user drove the conversation shown
	// in Output; with several trials, each trial has its own.
	Simulation *Simulation `json:"simulation,omitempty"`
	Trials     []Trial     `json:"trials,omitempty"`
	PassAtK    []PassAtK   `json:"pass_at_k,omitempty"`
	Usage      *Usage      `json:"usage,omitempty"`
	DurationMS float64     `json:"duration_ms"`
	Error      string      `json:"error,omitempty"`
}
