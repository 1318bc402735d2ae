package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/internal/redact"
	"github.com/cenkalti/backoff/v5"
	"golang.org/x/time/rate"
)

// Error is a provider failure, already redacted. Status is the last HTTP
// status seen (0 when there was no response), Attempts how many calls were
// made.
type Error struct {
	Spec     string
	Status   int
	Attempts int
	Msg      string
	// Spent is what the call's attempts cost: one call, its retries and
	// waits, no tokens (none are reported for a failed attempt).
	Spent agenteval.Usage
	// counted is set when Msg already says how many attempts were made.
	counted bool
}

// SpentUsage gives agenteval.UsageOf what the failed call spent.
func (e *Error) SpentUsage() *agenteval.Usage {
	u := e.Spent
	return &u
}

func (e *Error) Error() string {
	s := e.Spec + ": " + e.Msg
	if e.Attempts > 1 && !e.counted {
		s += fmt.Sprintf(" (gave up after %d attempts)", e.Attempts)
	}
	return s
}

// reliable wraps a raw adapter with the shared limits.
type reliable struct {
	cfg Config
	raw agenteval.Model
	sem chan struct{}
	lim *rate.Limiter
	// gov paces the account's calls by the limits its answers state
	// (adaptive.go).
	gov *governor

	mu    sync.Mutex
	fatal *Error // once credentials fail, every later call fails at once
}

// The limits are per provider, not per model: two judges on one account
// share its rate limit.
var (
	limitsMu sync.Mutex
	sems     = map[string]chan struct{}{}
	limiters = map[string]*rate.Limiter{}
)

func newReliable(cfg Config, raw agenteval.Model) *reliable {
	redact.Add(cfg.APIKey)
	key := cfg.Provider + "|" + cfg.BaseURL
	limitsMu.Lock()
	defer limitsMu.Unlock()
	// Models opened with the same limit share it; a different limit gets a
	// limiter of its own rather than resizing one in use.
	semKey := fmt.Sprintf("%s|%d", key, cfg.Concurrency)
	sem, ok := sems[semKey]
	if !ok {
		sem = make(chan struct{}, cfg.Concurrency)
		sems[semKey] = sem
	}
	r := &reliable{cfg: cfg, raw: raw, sem: sem, gov: governorFor(cfg)}
	if cfg.RequestsPerMinute > 0 {
		lim, ok := limiters[key]
		if !ok {
			lim = rate.NewLimiter(rate.Limit(cfg.RequestsPerMinute/60), 1)
			limiters[key] = lim
		}
		r.lim = lim
	}
	return r
}

// Generate calls the model, retrying transient failures. A failed call's
// *Error says what it spent (agenteval.UsageOf).
func (r *reliable) Generate(ctx context.Context, req *agenteval.ModelRequest) (*agenteval.ModelResponse, error) {
	r.mu.Lock()
	fatal := r.fatal
	r.mu.Unlock()
	if fatal != nil {
		// The same failure, without the first call's spending: this one
		// made no attempt.
		e := *fatal
		e.Spent = agenteval.Usage{}
		return nil, &agenteval.FatalError{Err: &e}
	}
	clock := &callClock{budget: r.cfg.CallBudget}
	resp, err := r.generate(ctx, req, clock)
	spent := agenteval.Usage{Retries: max(clock.attempts-1, 0), WaitedMS: float64(clock.waited.Microseconds()) / 1000}
	if clock.attempts > 0 {
		spent.Calls = 1
	}
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			// No tokens are known for failed attempts; the cost of none is
			// $0 where the model's price is known.
			spent.CostUSD = r.cfg.Prices.Cost(r.cfg.Provider, r.cfg.Model, 0, 0)
			e.Spent = spent
		}
		return nil, err
	}
	resp.Usage.Calls, resp.Usage.Retries, resp.Usage.WaitedMS = spent.Calls, spent.Retries, spent.WaitedMS
	resp.Usage.CostUSD = r.cfg.Prices.Cost(r.cfg.Provider, r.cfg.Model, resp.Usage.InputTokens, resp.Usage.OutputTokens)
	return resp, nil
}

// generate is Generate's retry loop; clock counts its attempts and waits.
func (r *reliable) generate(ctx context.Context, req *agenteval.ModelRequest, clock *callClock) (*agenteval.ModelResponse, error) {
	bo := backoff.NewExponentialBackOff()
	bo.InitialInterval = r.cfg.RetryWait
	bo.MaxInterval = 30 * time.Second
	bo.Reset()
	spec := r.cfg.String()
	var last *Error // the previous attempt's failure
	// failures counts the failed attempts that MaxRetries bounds: all but
	// rate limits, which only slow a call down (see rateLimited); limited
	// counts the rate limits in a row.
	for failures, limited := 0, 0; ; {
		resp, class, err := r.attempt(ctx, req, clock)
		if err == nil {
			return resp, nil
		}
		if ctx.Err() != nil {
			return nil, &Error{Spec: spec, Attempts: clock.attempts, Msg: "cancelled: " + context.Cause(ctx).Error()}
		}
		if class.budgetOut {
			return nil, r.budgetError(spec, class, last, clock)
		}
		e := &Error{Spec: spec, Status: class.status, Attempts: clock.attempts, Msg: Redact(class.describe(err, r.cfg))}
		if class.rateOut {
			return nil, e
		}
		if class.rateLimited {
			limited++
			if err := r.waitOutRateLimit(ctx, class, e, bo, clock, limited); err != nil {
				return nil, err
			}
			last = e
			continue
		}
		limited = 0
		failures++
		attempt := failures
		// Nothing listens at the endpoint: after one more try (a server
		// may be starting), every later call would fail the same way.
		if class.refused && attempt >= 2 {
			class.fatal = true
		}
		if class.fatal {
			r.mu.Lock()
			r.fatal = e
			r.mu.Unlock()
			return nil, &agenteval.FatalError{Err: e}
		}
		if !class.retryable || attempt > r.cfg.MaxRetries {
			return nil, e
		}
		wait := bo.NextBackOff()
		if class.retryAfter > 0 {
			wait = class.retryAfter
		}
		if left := clock.left(); wait >= left {
			e.Msg += fmt.Sprintf("; gave up: the call budget of %s (--call-budget) would run out before the next attempt", r.cfg.CallBudget)
			if class.retryAfter > 0 {
				e.Msg += fmt.Sprintf(", which the server asked to wait %s for", class.retryAfter.Round(time.Millisecond))
			}
			return nil, e
		}
		clock.waited += wait
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, &Error{Spec: spec, Attempts: clock.attempts, Msg: "cancelled while waiting to retry: " + e.Msg}
		case <-t.C:
		}
		last = e
	}
}

// waitOutRateLimit waits before the next attempt after a rate limit's
// 429: the governor holds and paces the next attempt by itself when the
// provider said when to come back or states its rate; else the call
// backs off, as it does from the third 429 in a row whatever the governor
// does, so that the waits add up to maxRateWait, which bounds them, and a
// call never spins. The wait grows the call budget rather than spending
// it.
func (r *reliable) waitOutRateLimit(ctx context.Context, class errClass, e *Error, bo *backoff.ExponentialBackOff, clock *callClock, inRow int) error {
	left := maxRateWait - clock.rateWaited
	if left <= 0 {
		e.Msg += fmt.Sprintf("; gave up: the call waited %s in all for the rate limit, the most a call may wait", maxRateWait)
		return e
	}
	if class.retryAfter >= left {
		e.Msg += fmt.Sprintf("; gave up: the server asked to wait %s, and a call waits at most %s in all for the rate limit",
			class.retryAfter.Round(time.Millisecond), maxRateWait)
		return e
	}
	if class.held && inRow < 3 {
		return nil
	}
	wait := min(bo.NextBackOff(), left)
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return &Error{Spec: e.Spec, Attempts: clock.attempts, Msg: "cancelled while waiting out the rate limit: " + e.Msg}
	case <-t.C:
	}
	clock.rateWait(wait)
	r.gov.waited(wait)
	return nil
}

// callClock is one call's budget (--call-budget). It starts when the
// first attempt begins, after its wait for the concurrency limit and the
// rate limit: time queued behind other calls is not the call's own.
type callClock struct {
	budget   time.Duration
	start    time.Time
	deadline time.Time
	// waited is time spent on backoff, Retry-After and the rate limit.
	waited time.Duration
	// rateWaited is the part of waited spent on a provider's rate limit
	// (its governor's holds and pace, and backing off its 429s): it moves
	// the deadline on, as a rate limit slows a call down without failing
	// it, and maxRateWait bounds it.
	rateWaited time.Duration
	// attempts counts the attempts that began.
	attempts int
}

// rateWait counts a wait for the rate limit, and moves the deadline on.
func (c *callClock) rateWait(d time.Duration) {
	c.waited += d
	c.rateWaited += d
	if !c.start.IsZero() {
		c.deadline = c.deadline.Add(d)
	}
}

// begin counts an attempt, and starts the clock at the first.
func (c *callClock) begin() {
	c.attempts++
	if c.start.IsZero() {
		c.start = time.Now()
		c.deadline = c.start.Add(c.budget)
	}
}

// left is what remains of the budget; all of it before the call begins.
func (c *callClock) left() time.Duration {
	if c.start.IsZero() {
		return c.budget
	}
	return time.Until(c.deadline)
}

// budgetError says that the call budget ran out (or, where the rate limit
// would hold the next attempt past it, that it would), after how many
// attempts and how long, and what the attempt before had failed with.
func (r *reliable) budgetError(spec string, class errClass, last *Error, clock *callClock) *Error {
	made, took := clock.attempts, time.Since(clock.start).Round(time.Millisecond)
	var msg string
	switch {
	case !class.queued:
		msg = fmt.Sprintf("the call budget of %s ran out after %s over %s (--call-budget): the last attempt had no answer when it ran out",
			r.cfg.CallBudget, attemptsText(made), took)
	case clock.left() > 0:
		msg = fmt.Sprintf("gave up after %s over %s: the call budget of %s (--call-budget) would run out before the next attempt could start (%s)",
			attemptsText(made), took, r.cfg.CallBudget, r.queueText())
	default:
		msg = fmt.Sprintf("the call budget of %s ran out after %s over %s (--call-budget): the next attempt could not start within it (%s)",
			r.cfg.CallBudget, attemptsText(made), took, r.queueText())
	}
	e := &Error{Spec: spec, Attempts: made, counted: true, Msg: msg}
	if last != nil {
		e.Status = last.Status
		e.Msg += "; the attempt before: " + last.Msg
	}
	return e
}

// queueText says what a call waits for before it starts.
func (r *reliable) queueText() string {
	if r.lim != nil {
		return fmt.Sprintf("the rate limit of %g requests a minute, and at most %d calls at once", r.cfg.RequestsPerMinute, r.cfg.Concurrency)
	}
	return fmt.Sprintf("at most %d calls at once", r.cfg.Concurrency)
}

func attemptsText(n int) string {
	if n == 1 {
		return "1 attempt"
	}
	return fmt.Sprintf("%d attempts", n)
}

// trimmedErr is an error whose text loses a suffix.
type trimmedErr struct {
	err    error
	suffix string
}

func (e trimmedErr) Error() string { return strings.TrimSuffix(e.err.Error(), e.suffix) }

// errClass is how the retry loop treats a failed attempt.
type errClass struct {
	status     int
	retryAfter time.Duration
	retryable  bool
	fatal      bool
	timedOut   bool
	refused    bool // nothing listens at the endpoint, or its host is unknown
	// budgetOut: the call budget ran out during the attempt, or before it
	// could start (queued).
	budgetOut, queued bool
	// limited: the rate limit would delay the first attempt past the
	// caller's deadline.
	limited bool
	// rateLimited: a 429 whose answer states the provider's limits, a
	// rate limit to wait out rather than a failure to retry a few times;
	// held: the governor holds the next attempt by itself. rateOut: the
	// call waited for the rate limit as long as a call may.
	rateLimited, held, rateOut bool
}

// attempt makes one call, within the per-call timeout and what is left of
// the call budget. It first waits for a slot under the concurrency limit
// and for the rate limit: for the first attempt as long as ctx allows, and
// then the budget starts; for a retry, no longer than the budget allows.
// Time spent waiting for the rate limit is added to clock.waited.
func (r *reliable) attempt(ctx context.Context, req *agenteval.ModelRequest, clock *callClock) (*agenteval.ModelResponse, errClass, error) {
	wctx, cancel := clock.waitContext(ctx)
	select {
	case r.sem <- struct{}{}:
	case <-wctx.Done():
		cancel()
		return nil, errClass{budgetOut: ctx.Err() == nil, queued: true}, wctx.Err()
	}
	cancel()
	defer func() { <-r.sem }()
	// The account's governor: its wait moves the budget's deadline on.
	ticket, waited, err := r.gov.acquire(ctx, maxRateWait-clock.rateWaited, func() float64 { return promptSize(req) })
	clock.rateWait(waited)
	r.gov.waited(waited)
	if err != nil {
		if ctx.Err() != nil {
			return nil, errClass{}, err
		}
		return nil, errClass{rateOut: true}, err
	}
	wctx, cancel = clock.waitContext(ctx)
	defer cancel()
	if r.lim != nil {
		t0 := time.Now()
		// Wait fails at once when the wait would pass wctx's deadline.
		err := r.lim.Wait(wctx)
		clock.waited += time.Since(t0)
		if err != nil {
			r.gov.done(ticket, outcome{})
			if ctx.Err() != nil {
				return nil, errClass{}, err
			}
			if !clock.start.IsZero() {
				return nil, errClass{budgetOut: true, queued: true}, err
			}
			return nil, errClass{limited: true}, err
		}
	}
	clock.begin()
	timeout, byBudget := r.cfg.Timeout, false
	if left := clock.left(); left < timeout {
		timeout, byBudget = max(left, time.Millisecond), true
	}
	actx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	actx, ci := withCallInfo(actx)
	resp, err := r.raw.Generate(actx, req)
	status, ra := ci.get()
	o := outcome{answered: status != 0, status: status, rate: ci.limits(), retryAfter: ra}
	if err == nil {
		o.tokens = float64(resp.Usage.InputTokens + resp.Usage.OutputTokens)
		r.gov.done(ticket, o)
		return resp, errClass{}, nil
	}
	if o.limited() && !rateLimitText(err) {
		// A 429 for a request too large, or a spent quota: waiting does
		// not help.
		o.status = 0
	}
	held := r.gov.done(ticket, o)
	c := errClass{status: status, retryAfter: ra}
	switch {
	case ctx.Err() != nil:
	case o.limited():
		c.rateLimited, c.held = true, held
	case status == http.StatusTooManyRequests && !rateLimitText(err):
		// Neither is retried; a spent quota fails every later call too.
		c.fatal = quotaText(err)
	case errors.Is(actx.Err(), context.DeadlineExceeded) && byBudget:
		c.budgetOut = true
	case errors.Is(actx.Err(), context.DeadlineExceeded):
		c.timedOut, c.retryable = true, true
	case status == http.StatusUnauthorized || status == http.StatusForbidden || status == http.StatusNotFound:
		c.fatal = true
	case status == http.StatusTooManyRequests || status == http.StatusRequestTimeout || status == http.StatusConflict || status >= 500:
		c.retryable = true
	case status >= 200 && status < 300:
		// The server answered but the body did not parse: a proxy's error
		// page, a cut connection. Worth another try.
		c.retryable = true
	case status == 0:
		var ne net.Error
		c.retryable = errors.As(err, &ne) || errors.Is(err, net.ErrClosed) || isConnErr(err)
		c.refused = errors.Is(err, syscall.ECONNREFUSED) || isNoSuchHost(err)
	}
	return nil, c, err
}

// promptSize estimates the tokens of a request, for pacing by a limit on
// tokens: a quarter of the bytes it takes on the wire, its messages, tool
// calls, tools and schema with an allowance for the envelope. The governor
// calls it only while it paces tokens (the schemas are encoded for it),
// and scales it by what calls turn out to use.
func promptSize(req *agenteval.ModelRequest) float64 {
	n := 64
	for _, m := range req.Messages {
		n += len(m.Content) + 32
		for _, c := range m.ToolCalls {
			n += 64 + len(c.Name) + len(c.RawArgs)
			if c.RawArgs == "" {
				n += jsonLen(c.Args)
			}
		}
	}
	for _, t := range req.Tools {
		n += 64 + len(t.Name) + len(t.Description) + jsonLen(t.Parameters)
	}
	if sc := req.Schema; sc != nil {
		n += 64 + len(sc.Name) + len(sc.JSON)
		if sc.JSON == nil {
			n += jsonLen(sc.Schema)
		}
	}
	return float64(n) / 4
}

// jsonLen is the length of v encoded, 0 when it does not encode.
func jsonLen(v any) int {
	if v == nil {
		return 0
	}
	b, err := json.Marshal(v)
	if err != nil {
		return 0
	}
	return len(b)
}

// rateLimitText tells a 429 that waiting lifts from the two that it does
// not: a request larger than the limit, and a spent quota.
func rateLimitText(err error) bool {
	return !quotaText(err) && !strings.Contains(strings.ToLower(err.Error()), "request too large")
}

// quotaText recognises OpenAI's 429 for an account out of credit
// (insufficient_quota): no call succeeds until it is topped up.
func quotaText(err error) bool {
	s := strings.ToLower(err.Error())
	return strings.Contains(s, "insufficient_quota") || strings.Contains(s, "exceeded your current quota")
}

// waitContext bounds a wait before an attempt: by the budget's deadline
// once the call has begun, else only by ctx.
func (c *callClock) waitContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if c.start.IsZero() {
		return ctx, func() {}
	}
	return context.WithDeadline(ctx, c.deadline)
}

// isNoSuchHost reports a DNS failure: a base URL with a typo.
func isNoSuchHost(err error) bool {
	var de *net.DNSError
	return errors.As(err, &de) && de.IsNotFound
}

// reachHint says what to check when nothing answers at a provider's
// endpoint.
func reachHint(cfg Config) string {
	switch {
	case cfg.Provider == "ollama":
		return fmt.Sprintf("is Ollama running at %s? Start it with 'ollama serve', or point OLLAMA_HOST at it", strings.TrimSuffix(strings.TrimSuffix(cfg.BaseURL, "/"), "/v1"))
	case cfg.BaseURL != "":
		return "is a server running there? Check the base URL you configured (a *_BASE_URL variable, or the target's)"
	}
	return "check the network and the base URL"
}

func isConnErr(err error) bool {
	var oe *net.OpError
	return errors.As(err, &oe) || errors.Is(err, context.DeadlineExceeded)
}

// describe explains a failure in one line that says what to do. The
// status it names once is trimmed from the adapter's own text.
func (c errClass) describe(err error, cfg Config) string {
	if c.status != 0 {
		err = trimmedErr{err, fmt.Sprintf(" (HTTP %d)", c.status)}
	}
	switch {
	case c.timedOut:
		return fmt.Sprintf("no answer within %s (the per-call timeout)", cfg.Timeout)
	case c.limited:
		return fmt.Sprintf("the rate limit of %g requests a minute would hold the call past its deadline", cfg.RequestsPerMinute)
	case c.rateOut:
		return fmt.Sprintf("rate limited for too long: %v; lower -j, or run when the provider's limit allows more", err)
	case c.status == http.StatusTooManyRequests && c.fatal:
		return fmt.Sprintf("the account's quota is spent (HTTP 429); check its plan and billing: %v", err)
	case c.status == http.StatusUnauthorized || c.status == http.StatusForbidden:
		return fmt.Sprintf("authentication failed (HTTP %d); check %s", c.status, cfg.APIKeyEnv)
	case c.status == http.StatusNotFound:
		return fmt.Sprintf("model or endpoint not found (HTTP 404); check the model name %q and the base URL: %v", cfg.Model, err)
	case c.status == http.StatusTooManyRequests:
		return fmt.Sprintf("rate limited (HTTP 429): %v", err)
	case c.status >= 500:
		return fmt.Sprintf("server error (HTTP %d): %v", c.status, err)
	case c.status >= 200 && c.status < 300:
		return fmt.Sprintf("the response could not be read: %v", err)
	case c.refused:
		return fmt.Sprintf("cannot reach %s: %v; %s", cfg.BaseURL, err, reachHint(cfg))
	case c.status == 0:
		return fmt.Sprintf("request failed: %v", err)
	}
	return fmt.Sprintf("HTTP %d: %v", c.status, err)
}
