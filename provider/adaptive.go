package provider

import (
	"context"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"sync"
	"time"
)

// Adaptive limits. A provider's rate limits are learned from its answers
// rather than configured: each account (provider, base URL and key) has a
// governor that every call to it passes through. While the provider says
// nothing about its limits, the governor lets every call through at once,
// as if it were not there. Once its answers state a limit
// (x-ratelimit-limit-requests and -tokens, or Anthropic's
// anthropic-ratelimit-*), calls are paced: the governor keeps a token
// bucket that mirrors the provider's, refilled at a share (paceShare) of
// the stated rate, holding what the provider's bucket holds less a
// reserve, and set again from each answer's remaining count, so a run
// spends a burst where the provider allows one and then settles at its
// rate. A 429 that states the limits is a rate limit, not a failure: its
// Retry-After holds every call to the account, and the burst the governor
// allows is halved (additive increase brings it back: one more per window
// of successes); where the provider states no rate, the halving applies to
// the calls in flight instead. One cut per round, and at most one a
// second: the 429s of calls started before the last cut do not cut again.

const (
	// paceShare is the share of a stated rate the governor paces at: the
	// rest absorbs the jitter of arrivals at the provider.
	paceShare = 0.95
	// minShare is as low as 429s at a burst of one take the share.
	minShare = 0.3
	// settle is the time constant of the in-flight average the summary
	// reports.
	settle = 10 * time.Second
	// cutEvery spaces the multiplicative decreases: the 429s of one burst
	// cut once, not once per answer that comes back before its round ends.
	cutEvery = time.Second
)

// maxRateWait bounds one call's waits for the rate limit in all, so that
// a limit that never lifts (a daily quota spent) ends the call with an
// error instead of a hang. A variable for the tests.
var maxRateWait = 10 * time.Minute

// governor paces and limits the calls to one account.
type governor struct {
	name string
	now  func() time.Time
	// afterFunc arms the queue's wake-up: time.AfterFunc, or a fake clock's.
	afterFunc func(time.Duration, func()) func() bool

	mu sync.Mutex
	// ceiling is the largest Concurrency of the models that share the
	// account; limit is the in-flight limit AIMD set, 0 for none.
	ceiling, limit int
	inflight       int
	queue          []*waiter
	wakeAt         time.Time
	stopWake       func() bool
	// hold: no call starts before it (a 429's Retry-After).
	hold time.Time
	// cutAt is the last multiplicative decrease.
	cutAt time.Time
	// okRun counts successes since the in-flight limit last changed.
	okRun int
	// req and tok pace requests and tokens.
	req, tok pace
	// consumed and consumedTok count the requests and tokens taken, less
	// those refunded: with a call's count at its start, they say how much
	// was taken after it, which its answer's remaining count does not
	// include yet.
	consumed, consumedTok float64
	// newest is the start of the call whose answer last set the buckets;
	// an older call's answer says less than that one did.
	newest time.Time
	// ratio is the tokens a call uses per token of its request's
	// estimate (promptSize), a moving average of the usage; 0 before the
	// first. A call's cost in the token bucket is its estimate times it.
	ratio float64
	// lastCost is the cost of the call that came last.
	lastCost float64

	stats govStats
}

// pace is the token bucket of one stated limit (requests or tokens).
type pace struct {
	// stated is the limit per minute the provider states; 0 while it has
	// stated none, and then nothing is paced.
	stated float64
	// share is the share of the stated rate refilled.
	share float64
	// burst is what the bucket holds, burstMax what the provider's holds
	// less reserve: burst is halved by 429s and grows back to burstMax.
	burst, burstMax, reserve float64
	// level is what may be spent at time at; below zero while in debt.
	level float64
	at    time.Time
	// okRun is what succeeded since the last change.
	okRun float64
	// whole: one call may cost more than the bucket holds, and waits for
	// it to be full (tokens); its burst is never cut, as that would hold
	// such a call back less than the provider does.
	whole bool
}

func (p *pace) on() bool { return p.stated > 0 }

// shareOr is the share of the rate paced at, or paceShare when unpaced.
func (p *pace) shareOr() float64 {
	if !p.on() {
		return paceShare
	}
	return p.share
}

// rate is the refill per second.
func (p *pace) rate() float64 { return p.share * p.stated / 60 }

func (p *pace) refill(now time.Time) {
	if d := now.Sub(p.at).Seconds(); d > 0 {
		p.level = math.Min(p.burst, p.level+d*p.rate())
	}
	p.at = now
}

// ready reports whether the bucket holds need now, or else when it will.
func (p *pace) ready(now time.Time, need float64) (bool, time.Time) {
	p.refill(now)
	if p.level >= need {
		return true, time.Time{}
	}
	d := time.Duration((need - p.level) / p.rate() * float64(time.Second))
	return false, now.Add(max(d, time.Millisecond))
}

// reserveOf is the part of a provider's bucket the governor leaves
// unspent, for what it cannot see: arrivals bunched on the way, other
// clients of the account.
func reserveOf(size float64) float64 { return math.Max(1, math.Ceil(size/10)) }

// learn takes a limit's state from the answer to a call that started at
// start, after which since more was taken. The bucket's size is the
// provider's: what remained plus what the time to reset refills (or the
// minute's limit, when the answer gives no reset), less a reserve. The
// level is set from the remaining count only by the newest answer.
func (p *pace) learn(l limitInfo, now, start time.Time, since float64, newest bool) {
	if l.perMinute > 0 {
		if p.stated == 0 {
			p.share = paceShare
		}
		p.stated = l.perMinute
	}
	if !p.on() {
		return
	}
	perSecond := p.stated / 60
	size := p.stated
	if l.hasRemaining && l.hasReset {
		size = math.Min(p.stated, l.remaining+l.reset.Seconds()*perSecond)
	}
	if r := reserveOf(size); size-r > p.burstMax {
		p.burstMax, p.reserve = math.Max(1, size-r), r
	} else if p.burstMax == 0 {
		p.burstMax, p.reserve = 1, r
	}
	if p.burst == 0 {
		p.burst, p.level, p.at = p.burstMax, p.burstMax, now
	}
	if l.hasRemaining && newest {
		p.refill(now)
		est := l.remaining - p.reserve + p.rate()*now.Sub(start).Seconds() - since
		p.level, p.at = math.Min(p.burst, est), now
	}
}

// cut halves the burst, or, at a burst of one (or for a bucket that is
// spent whole), the share of the rate.
func (p *pace) cut() {
	if p.burst > 1 && !p.whole {
		p.burst = math.Max(1, math.Floor(p.burst/2))
		p.level = math.Min(p.level, p.burst)
	} else {
		p.share = math.Max(minShare, p.share*0.9)
	}
	p.okRun = 0
}

// grow is additive increase after a success that spent n: the burst
// grows by one per burst of successes, the share by a point per second's
// worth of them.
func (p *pace) grow(n float64) {
	p.okRun += n
	switch {
	case p.burst < p.burstMax && p.okRun >= p.burst:
		p.burst++
		p.okRun = 0
	case p.burst >= p.burstMax && p.share < paceShare && p.okRun >= p.stated/60:
		p.share = math.Min(paceShare, p.share+0.01)
		p.okRun = 0
	}
}

// waiter is a call queued for the governor.
type waiter struct {
	cost  float64
	size  float64
	ready chan struct{}
	t     *ticket
}

// ticket is a call the governor let through.
type ticket struct {
	start time.Time
	// at and atTok are the consumed counts after it was taken.
	at, atTok float64
	// size is the request's estimated tokens, cost what the token bucket
	// took for it.
	size, cost float64
	// paced and pacedTok say the request rate and the token rate were
	// stated when it started.
	paced, pacedTok bool
}

// outcome is what came of a call, for the governor.
type outcome struct {
	// answered: the provider answered (its headers are in rate).
	answered bool
	status   int
	rate     rateInfo
	// retryAfter is the 429's Retry-After.
	retryAfter time.Duration
	// tokens is what a successful call used.
	tokens float64
}

// limited reports a 429 that states the limits: a rate limit to wait
// out.
func (o outcome) limited() bool { return o.status == 429 && o.rate.known() }

type govStats struct {
	calls, n429 int64
	waited      time.Duration
	// avg is the in-flight count's moving average at avgAt; settled is
	// what it was when a queued call last started, while the limits held
	// calls back.
	avg, settled float64
	avgAt        time.Time
	queued       bool
	// cutTo is the lowest in-flight limit AIMD set; 0 if none.
	cutTo int
}

func newGovernor(name string) *governor {
	return &governor{name: name, now: time.Now, tok: pace{whole: true}, afterFunc: func(d time.Duration, f func()) func() bool {
		return time.AfterFunc(d, f).Stop
	}}
}

// rateWaitError is the failure of a call whose waits for the rate limit
// would pass maxRateWait.
type rateWaitError struct {
	waited, bound time.Duration
	// hold is the wait the provider asked for, or paced the wait its
	// stated limit sets, when that is what would pass the bound.
	hold, paced time.Duration
}

// roundWait rounds a wait for a message: to the second from ten seconds
// on, else to the millisecond.
func roundWait(d time.Duration) time.Duration {
	if d >= 10*time.Second {
		return d.Round(time.Second)
	}
	return d.Round(time.Millisecond)
}

func (e *rateWaitError) Error() string {
	switch {
	case e.hold > 0:
		return fmt.Sprintf("the provider asked to wait %s, more than is left of the %s a call may wait for the rate limit", roundWait(e.hold), e.bound)
	case e.paced > 0:
		return fmt.Sprintf("the limit the provider states would hold the call %s, more than is left of the %s a call may wait for the rate limit", roundWait(e.paced), e.bound)
	}
	return fmt.Sprintf("waited %s for the rate limit, the most a call may wait", e.waited.Round(time.Millisecond))
}

// acquire waits until the account takes a call: a slot under the in-flight
// limit, the pace and any hold, in the order the calls came. bound is how
// long it may wait; estimate gives the request's tokens, asked only
// while tokens are paced. It returns the ticket to give done, and how long
// it waited.
func (g *governor) acquire(ctx context.Context, bound time.Duration, estimate func() float64) (*ticket, time.Duration, error) {
	g.mu.Lock()
	now := g.now()
	var size, cost float64
	if g.tok.on() && estimate != nil {
		size = estimate()
		cost = size
		if g.ratio > 0 {
			cost *= g.ratio
		}
	}
	g.lastCost = cost
	if len(g.queue) == 0 {
		ok, at := g.canStart(now, cost)
		if ok {
			t := g.start(now, cost)
			t.size = size
			g.mu.Unlock()
			return t, 0, nil
		}
		if d := at.Sub(now); d > bound && !at.Equal(g.hold) {
			g.mu.Unlock()
			return nil, 0, &rateWaitError{bound: maxRateWait, paced: d}
		}
	}
	if h := g.hold.Sub(now); h > bound {
		g.mu.Unlock()
		return nil, 0, &rateWaitError{bound: maxRateWait, hold: h}
	}
	w := &waiter{cost: cost, size: size, ready: make(chan struct{})}
	g.queue = append(g.queue, w)
	g.pump(now)
	g.mu.Unlock()

	begin := time.Now()
	timer := time.NewTimer(bound)
	defer timer.Stop()
	var err error
	select {
	case <-w.ready:
		return w.t, time.Since(begin), nil
	case <-ctx.Done():
		err = context.Cause(ctx)
	case <-timer.C:
		err = &rateWaitError{waited: time.Since(begin), bound: maxRateWait}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	now = g.now()
	if w.t != nil {
		// Let through as it gave up: hand the place back.
		g.end(w.t, now, outcome{})
	} else {
		for i, q := range g.queue {
			if q == w {
				g.queue = append(g.queue[:i], g.queue[i+1:]...)
				break
			}
		}
	}
	g.pump(now)
	return nil, time.Since(begin), err
}

// canStart reports whether a call costing cost tokens may start now, or
// else when it may (zero when only a call ending frees its place).
func (g *governor) canStart(now time.Time, cost float64) (bool, time.Time) {
	if g.limit > 0 && g.inflight >= g.limit {
		return false, time.Time{}
	}
	if now.Before(g.hold) {
		return false, g.hold
	}
	if g.req.on() {
		if ok, at := g.req.ready(now, 1); !ok {
			return false, at
		}
	}
	if g.tok.on() && cost > 0 {
		if ok, at := g.tok.ready(now, math.Min(cost, g.tok.burst)); !ok {
			return false, at
		}
	}
	return true, time.Time{}
}

// start takes a call.
func (g *governor) start(now time.Time, cost float64) *ticket {
	g.average(now)
	g.inflight++
	g.consumed++
	g.consumedTok += cost
	if g.req.on() {
		g.req.level--
	}
	if g.tok.on() {
		g.tok.level -= cost
	}
	g.stats.calls++
	return &ticket{start: now, at: g.consumed, atTok: g.consumedTok, cost: cost, paced: g.req.on(), pacedTok: g.tok.on()}
}

// pump lets the queue's calls through while it may, in order, and arms a
// wake-up for when the first that may not will.
func (g *governor) pump(now time.Time) {
	for len(g.queue) > 0 {
		w := g.queue[0]
		ok, at := g.canStart(now, w.cost)
		if !ok {
			if !at.IsZero() && (g.wakeAt.IsZero() || at.Before(g.wakeAt)) {
				if g.stopWake != nil {
					g.stopWake()
				}
				g.wakeAt = at
				g.stopWake = g.afterFunc(at.Sub(now), g.wake)
			}
			return
		}
		g.queue[0] = nil
		g.queue = g.queue[1:]
		w.t = g.start(now, w.cost)
		w.t.size = w.size
		g.stats.settled, g.stats.queued = g.stats.avg, true
		close(w.ready)
	}
}

func (g *governor) wake() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.wakeAt, g.stopWake = time.Time{}, nil
	g.pump(g.now())
}

// done ends a call: it frees its place, learns from its answer, and lets
// the queue on. After a rate limit's 429 it reports whether the governor
// holds the next call by itself (a Retry-After, a pace, a queue), so that
// the caller need not back off as well.
func (g *governor) done(t *ticket, o outcome) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.now()
	g.end(t, now, o)
	g.pump(now)
	if !o.limited() {
		return false
	}
	if len(g.queue) > 0 {
		return true
	}
	ok, _ := g.canStart(now, g.lastCost)
	return !ok
}

// end is done without the queue.
func (g *governor) end(t *ticket, now time.Time, o outcome) {
	g.average(now)
	g.inflight--
	refused := !o.answered || o.status == 429
	if refused {
		// The provider took nothing: the call's place in the buckets is
		// given back.
		g.consumed--
		g.consumedTok -= t.cost
		t.at--
		t.atTok -= t.cost
		if g.req.on() {
			g.req.level = math.Min(g.req.burst, g.req.level+1)
		}
		if g.tok.on() {
			g.tok.level = math.Min(g.tok.burst, g.tok.level+t.cost)
		}
	}
	if !o.answered {
		return
	}
	if o.status == 429 {
		g.stats.n429++
	}
	newest := !t.start.Before(g.newest)
	if newest {
		g.newest = t.start
	}
	g.req.learn(o.rate.req, now, t.start, g.consumed-t.at, newest)
	g.tok.learn(o.rate.tok, now, t.start, g.consumedTok-t.atTok, newest)
	if o.status >= 200 && o.status < 300 {
		if o.tokens > 0 && t.size > 0 {
			r := math.Min(20, math.Max(0.2, o.tokens/t.size))
			if g.ratio == 0 {
				g.ratio = r
			} else {
				g.ratio += (r - g.ratio) / 10
			}
		}
		g.grow(t)
		return
	}
	if !o.limited() {
		return
	}
	if o.retryAfter > 0 && now.Add(o.retryAfter).After(g.hold) {
		g.hold = now.Add(o.retryAfter)
	}
	// No stated rate, but none remaining and a time it resets: hold
	// until then.
	if !g.req.on() && o.rate.req.hasRemaining && o.rate.req.remaining < 1 && o.rate.req.hasReset {
		if at := t.start.Add(o.rate.req.reset); at.After(g.hold) {
			g.hold = at
		}
	}
	// One cut per round: a call started before the last cut was sent
	// under the old limits, and its 429 says nothing new.
	if g.cutAt.IsZero() || (t.start.After(g.cutAt) && now.Sub(g.cutAt) >= cutEvery) {
		if g.cutFor(t, o) {
			g.cutAt = now
		}
	}
}

// cutFor is the multiplicative decrease for a 429: of the pace the answer
// shows spent, or of the calls in flight where no rate is stated. It
// reports whether it cut.
func (g *governor) cutFor(t *ticket, o outcome) bool {
	reqOut := o.rate.req.hasRemaining && o.rate.req.remaining < 1
	tokOut := o.rate.tok.hasRemaining && o.rate.tok.remaining < math.Max(1, t.cost)
	switch {
	case g.req.on() && t.paced && (reqOut || !g.tok.on()):
		g.req.cut()
	case g.tok.on() && t.pacedTok && (tokOut || !g.req.on()):
		g.tok.cut()
	case !g.req.on() && !g.tok.on():
		n := g.inflight + 1
		if g.limit > 0 {
			n = min(n, g.limit)
		}
		g.limit = max(1, n/2)
		if g.stats.cutTo == 0 || g.limit < g.stats.cutTo {
			g.stats.cutTo = g.limit
		}
		g.okRun = 0
	default:
		return false
	}
	return true
}

// grow is additive increase: the paces' bursts and shares, and the
// in-flight limit by one per window of successes while it binds, until it
// reaches the ceiling and is lifted.
func (g *governor) grow(t *ticket) {
	if g.req.on() {
		g.req.grow(1)
	}
	if g.tok.on() {
		g.tok.grow(t.cost)
	}
	if g.limit > 0 && g.inflight+1 >= g.limit {
		g.okRun++
		if g.okRun >= g.limit {
			g.limit++
			g.okRun = 0
			if g.limit >= g.ceiling {
				g.limit = 0
			}
		}
	}
}

// average moves the in-flight average on to now.
func (g *governor) average(now time.Time) {
	s := &g.stats
	if !s.avgAt.IsZero() {
		a := 1 - math.Exp(-now.Sub(s.avgAt).Seconds()/settle.Seconds())
		s.avg += a * (float64(g.inflight) - s.avg)
	}
	s.avgAt = now
}

// waited adds a call's wait for the rate limit to the account's.
func (g *governor) waited(d time.Duration) {
	if d <= 0 {
		return
	}
	g.mu.Lock()
	g.stats.waited += d
	g.mu.Unlock()
}

// report is the governor's summary line, or "" when the account never
// limited the run.
func (g *governor) report() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	s := g.stats
	if s.n429 == 0 && s.waited == 0 {
		return ""
	}
	inflight := s.avg
	if s.queued {
		inflight = s.settled
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s of 429 in %s, waited %s in all for its rate limit", g.name, plural(s.n429, "answer"), plural(s.calls, "call"), seconds(s.waited))
	if s.calls > 1 {
		fmt.Fprintf(&b, " (%s a call)", seconds(s.waited/time.Duration(s.calls)))
	}
	fmt.Fprintf(&b, ", in-flight settled at %.0f", math.Round(inflight))
	switch {
	case g.req.on() && g.tok.on():
		fmt.Fprintf(&b, "; paced by the %.0f requests and %.0f tokens a minute it states", g.req.stated, g.tok.stated)
	case g.req.on():
		fmt.Fprintf(&b, "; paced by the %.0f requests a minute it states", g.req.stated)
	case g.tok.on():
		fmt.Fprintf(&b, "; paced by the %.0f tokens a minute it states", g.tok.stated)
	}
	if share := math.Min(g.req.shareOr(), g.tok.shareOr()); share < paceShare {
		fmt.Fprintf(&b, ", at %.0f%% of it after its 429s", share*100)
	}
	if s.cutTo > 0 {
		fmt.Fprintf(&b, "; at most %d calls in flight after its 429s", s.cutTo)
	}
	return b.String()
}

func plural(n int64, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func seconds(d time.Duration) string {
	return strings.TrimSuffix(fmt.Sprintf("%.1f", d.Seconds()), ".0") + " s"
}

// The governors, one per account.
var (
	governorsMu sync.Mutex
	governors   = map[string]*governor{}
)

// governorFor is the account's governor, created on first use; the
// ceiling grows to the largest Concurrency of the models sharing it.
func governorFor(cfg Config) *governor {
	key := cfg.Provider + "|" + cfg.BaseURL + "|" + keyID(cfg.APIKey)
	governorsMu.Lock()
	defer governorsMu.Unlock()
	g, ok := governors[key]
	if !ok {
		g = newGovernor(cfg.Provider)
		governors[key] = g
	}
	g.mu.Lock()
	g.ceiling = max(g.ceiling, cfg.Concurrency)
	g.mu.Unlock()
	return g
}

// keyID tells keys apart without keeping them: accounts with different
// keys have limits of their own.
func keyID(key string) string {
	var h uint64 = 14695981039346656037
	for i := 0; i < len(key); i++ {
		h ^= uint64(key[i])
		h *= 1099511628211
	}
	return fmt.Sprintf("%x", h)
}

// ReportRateLimits writes one line for each provider account that limited
// the calls of this process by rate: how many answers of 429 it gave, how
// long the calls waited in all, how many calls were in flight at the end,
// and the pace its stated limits set. It writes nothing when no provider
// limited anything.
func ReportRateLimits(w io.Writer) {
	governorsMu.Lock()
	keys := make([]string, 0, len(governors))
	for k := range governors {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	list := make([]*governor, len(keys))
	for i, k := range keys {
		list[i] = governors[k]
	}
	governorsMu.Unlock()
	names := map[string]int{}
	for _, g := range list {
		names[g.name]++
	}
	for i, g := range list {
		line := g.report()
		if line == "" {
			continue
		}
		if names[g.name] > 1 {
			// Two accounts of one provider: say which.
			base, _, _ := strings.Cut(strings.TrimPrefix(keys[i], g.name+"|"), "|")
			line = strings.Replace(line, g.name+":", g.name+" ("+base+"):", 1)
		}
		fmt.Fprintln(w, line)
	}
}
