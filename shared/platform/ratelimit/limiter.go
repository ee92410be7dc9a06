package ratelimit

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/auth"
	"tunnelapi/shared/platform/store"
)

// attrCount is the counter item's attribute holding the window's count.
const attrCount = "n"

// Limiter counts requests per account in the table and decides on each. It implements
// auth.Limiter.
//
// What counts: every request whose bearer token names an account (from the process's token
// hint or the token item) and whose caller is then verified, whatever its outcome. A request
// whose caller is refused (a deleted key the process still knew, a deactivated bot's key, an
// address the account's IP restriction refuses) is counted while it runs and given back once
// refused (auth.Admission.Release: a second UpdateItem, on that refusal's path only), so refused
// callers cannot hold an account's own keys at 429; it carries no RateLimit field. Requests
// refused before that (no or malformed Authorization header, a token that does not exist) name
// no account and count against none; API Gateway's own throttling is what bounds them. A
// request over the limit is refused with 429 ERR_NGROK_226 whatever else it would have
// answered; nothing it read is released and nothing is written.
type Limiter struct {
	DB     *store.DB
	Policy Policy
	// Log returns the logger for counts that failed; nil (or a nil logger) logs to
	// slog.Default.
	Log func() *slog.Logger
	// Now is the clock; nil is time.Now. Tests set it to place requests in a window.
	Now func() time.Time

	mu sync.Mutex
	// prev holds, per account, the count of a finished window as read once by this process.
	prev map[string]finished
}

var _ auth.Limiter = (*Limiter)(nil)

// finished is the final count of one account's window.
type finished struct {
	index, count int64
}

// maxCached bounds the finished counts kept; past it the cache starts over.
const maxCached = 10000

// Start counts one request of account and returns its decision, pending until the count's
// round trip returns.
//
// The count is an approximate sliding window over two fixed windows. Time is cut into windows
// of the configured length aligned on the Unix epoch; each window of each account has a counter
// item (store.RateKey) that every request increments with one UpdateItem returning the new
// count n. The count of the window before, p, is read once per process and window (a GetItem
// alongside the first increment of the window; a finished window's count no longer changes)
// and weighted by the part of it still inside the rolling window: at fraction f of the current
// window the estimate is p·(1−f) + n, and the request is admitted while it is at most the limit.
// Concurrent increments are applied one after another by DynamoDB, so of the requests of one
// window no more than the allowance are admitted, whichever processes serve them. A refused
// request takes its increment back (a second UpdateItem, on the 429's path only): refused
// requests do not use quota, so a client that keeps retrying is served again as soon as the
// window moves on. Counter items expire through the table's TTL two windows after their own.
// The counter's UpdateItem runs in parallel with the request's read, adding no round trip: a
// GET waits for the slower of the two calls (BenchmarkGetRateLimitedVsNot).
//
// When the count cannot be made (DynamoDB unavailable, the client gone), the request is admitted
// without a RateLimit field and the failure is logged: the limit protects the service from one
// account's excess and must not itself take the API down.
func (l *Limiter) Start(ctx context.Context, account string) auth.Admission {
	now := time.Now
	if l.Now != nil {
		now = l.Now
	}
	d := &decision{policy: l.Policy, done: make(chan struct{})}
	at := now()
	go func() {
		defer close(d.done)
		l.count(ctx, account, at, d)
	}()
	return d
}

// count increments the window's counter (reading the previous window's count alongside when
// this process does not know it yet) and fills in d.
func (l *Limiter) count(ctx context.Context, account string, at time.Time, d *decision) {
	p := l.Policy
	index, frac := p.window(at)
	secs := p.seconds()
	// A window's counter is still read as the previous one during the next window.
	expires := time.UnixMilli((index + 3) * p.Window.Milliseconds())
	key := store.RateKey(account, secs, index)

	prev, known := l.finished(account, index-1)
	var prevErr error
	var read sync.WaitGroup
	if !known {
		read.Add(1)
		go func() {
			defer read.Done()
			prev, prevErr = l.read(ctx, store.RateKey(account, secs, index-1))
		}()
	}
	cur, err := l.DB.Add(ctx, key, attrCount, 1, expires)
	read.Wait()
	if err != nil {
		l.failed(ctx, account, fmt.Errorf("count the request: %w", err))
		return
	}
	if prevErr != nil {
		// The current window's count alone still bounds the account; the previous one is
		// asked for again by the next request.
		l.failed(ctx, account, fmt.Errorf("read the previous window: %w", prevErr))
		prev = 0
	} else if !known {
		l.remember(account, finished{index - 1, prev})
	}
	s := state{prev: prev, cur: cur, frac: frac}
	d.counted = true
	// Refused requests use no quota: the increment is taken back, detached from the request
	// so that a client hanging up does not leave it counted.
	takeBack := func(why string) {
		if _, err := l.DB.Add(context.WithoutCancel(ctx), key, attrCount, -1, expires); err != nil {
			l.failed(ctx, account, fmt.Errorf("take back %s: %w", why, err))
		}
	}
	if s.estimate() <= float64(p.Requests) {
		d.remaining = p.remaining(s)
		d.reset = p.regain(s, d.remaining)
		d.takeBack = func() { takeBack("a request whose caller was refused") }
		return
	}
	takeBack("a refused request")
	s.cur--
	d.refused = true
	d.reset = p.regain(s, 0)
}

// read returns the count of the counter item at k (0 when absent).
func (l *Limiter) read(ctx context.Context, k store.Key) (int64, error) {
	var it struct {
		N int64 `dynamodbav:"n"`
	}
	err := l.DB.Get(ctx, k, &it)
	if store.IsNotFound(err) {
		return 0, nil
	}
	return it.N, err
}

func (l *Limiter) finished(account string, index int64) (int64, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	f, ok := l.prev[account]
	return f.count, ok && f.index == index
}

func (l *Limiter) remember(account string, f finished) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.prev == nil || len(l.prev) >= maxCached {
		l.prev = make(map[string]finished)
	}
	if cur, ok := l.prev[account]; !ok || cur.index < f.index {
		l.prev[account] = f
	}
}

// failed logs a count that could not be made; a request whose client went away is not worth a
// line.
func (l *Limiter) failed(ctx context.Context, account string, err error) {
	if ctx.Err() != nil {
		return
	}
	log := slog.Default()
	if l.Log != nil {
		if lg := l.Log(); lg != nil {
			log = lg
		}
	}
	op := ""
	if r, ok := api.FromContext(ctx); ok {
		op = r.OpID
	}
	log.Error("rate limit count failed; request admitted", "op", op, "account", account, "err", err.Error())
}

// decision is one request's admission. Its fields are written by the counting goroutine
// before done is closed and only read after.
type decision struct {
	policy Policy
	done   chan struct{}

	counted   bool // false: the count failed and the request is admitted unreported
	refused   bool
	remaining int64
	reset     time.Duration
	// takeBack undoes the count of an admitted request (Release).
	takeBack func()

	// released is set by Release, on the request's goroutine, as Settle is called.
	released bool
}

// Release implements auth.Admission: an admitted request's count is taken back (an UpdateItem,
// on the path of a refused caller only).
func (d *decision) Release(h http.Header) {
	<-d.done
	if d.released || !d.counted || d.refused {
		return
	}
	d.released = true
	d.takeBack()
	if h != nil {
		h.Del("RateLimit")
	}
}

// Settle implements auth.Admission, with the header fields of
// draft-ietf-httpapi-ratelimit-headers-11: every response carries
// `RateLimit-Policy: "default";q=<requests>;w=<seconds>` (api.Server.RateLimitPolicy); every
// response to a counted request also carries `RateLimit: "default";r=<remaining>;t=<seconds>`,
// where r is the quota left after this request and t the seconds until, if the client sends
// nothing more, at least one more request of quota is available again (the draft's effective
// window: within t the client can use no more than r). A 429 has r=0 and a Retry-After equal to
// t: the first moment a request would be admitted.
func (d *decision) Settle(h http.Header) *api.Error {
	<-d.done
	if !d.counted || d.released {
		return nil
	}
	t := int64(d.reset / time.Second)
	if h != nil {
		h.Set("RateLimit", policyName+";r="+strconv.FormatInt(d.remaining, 10)+";t="+strconv.FormatInt(t, 10))
	}
	if !d.refused {
		return nil
	}
	if h != nil {
		h.Set("Retry-After", strconv.FormatInt(t, 10))
	}
	return &api.Error{Status: http.StatusTooManyRequests, Code: api.CodeRateLimited,
		Msg: fmt.Sprintf("API request rate limit exceeded for the account: at most %d requests per %d seconds; retry after %d seconds",
			d.policy.Requests, d.policy.seconds(), t),
		Details: map[string]string{"retry_after": strconv.FormatInt(t, 10)}}
}
