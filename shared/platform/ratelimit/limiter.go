package ratelimit

import (
	"context"
	"fmt"
	"log/slog"
	"math"
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

// Leases: a process counts requests in the table a lease at a time and spends the lease
// locally. The first lease of a window is one request; each lease used up doubles the next, up
// to maxLease and to a leaseShare-th of what the window has left as the process last saw it, so
// that what several processes hold unspent when the window fills is a small part of it.
const (
	maxLease   = 64
	leaseShare = 8
)

// Limiter counts requests per account in the table and decides on each. It implements
// auth.Limiter.
//
// What counts: every request whose bearer token names an account (from the process's token
// hint or the token item) and whose caller is then verified, whatever its outcome. A request
// whose caller is refused (a deleted key the process still knew, a deactivated bot's key, an
// address the account's IP restriction refuses) is counted while it runs and given back once
// refused (auth.Admission.Release), so refused callers cannot hold an account's own keys at
// 429; it carries no RateLimit field. Requests refused before that (no or malformed
// Authorization header, a token that does not exist) name no account and count against none;
// API Gateway's own throttling is what bounds them. A request over the limit is refused with
// 429 ERR_NGROK_226 whatever else it would have answered; nothing it read is released and
// nothing is written.
type Limiter struct {
	DB     *store.DB
	Policy Policy
	// Log returns the logger for counts that failed; nil (or a nil logger) logs to
	// slog.Default.
	Log func() *slog.Logger
	// Now is the clock; nil is time.Now. Tests set it to place requests in a window.
	Now func() time.Time

	mu sync.Mutex
	// shares holds this process's part of each account's current window.
	shares map[string]*share
}

var _ auth.Limiter = (*Limiter)(nil)

// share is this process's part of one account's window index.
type share struct {
	index int64
	// prev is the final count of the window before, read once (prevKnown).
	prev      int64
	prevKnown bool
	// table is the window's count in the table as of this process's last lease; left is what
	// this process holds of it unspent: leased, not yet spent by a request here.
	table, left int64
	// next is the size of the next lease.
	next int64
	// until is when the window as last seen has room again after a refusal: no lease can be
	// had before it, so requests until then are refused here without asking the table.
	until time.Time
}

// maxCached bounds the accounts whose shares are kept; past it the cache starts over.
const maxCached = 10000

// Start counts one request of account and returns its decision: at once when this process
// holds a lease of the account's window, else pending until the lease's round trip returns.
//
// The count is an approximate sliding window over two fixed windows. Time is cut into windows
// of the configured length aligned on the Unix epoch; each window of each account has a counter
// item (store.RateKey) holding how many requests processes have leased in it. The count of the
// window before, p, is read once per process and window (a GetItem alongside the window's first
// lease; a finished window's count no longer changes) and weighted by the part of it still
// inside the rolling window: at fraction f of the current window, with n leased, the estimate is
// p·(1−f) + n, and a request is admitted while it is at most the limit. A process's first lease
// of a window is one request, added to the counter alongside that read and taken back when the
// estimate is over the limit; every later lease is an UpdateItem that adds its size only while
// the estimate stays within the limit (store.AddUpTo), and requests then spend it here without
// a round trip. DynamoDB applies concurrent leases one after another, so of the requests of one
// window no more than the allowance are admitted, whichever processes serve them. A refused
// lease returns the count that refused it, from which the process knows when the window has
// room again and refuses until then without asking. Counter items expire through the table's
// TTL two windows after their own.
//
// When the count cannot be made (DynamoDB unavailable, the client gone), the request is admitted
// without a RateLimit field and the failure is logged: the limit protects the service from one
// account's excess and must not itself take the API down.
func (l *Limiter) Start(ctx context.Context, account string) auth.Admission {
	p := l.Policy
	at := l.now()
	index, frac := p.window(at)
	d := &decision{policy: p, done: make(chan struct{}), l: l, account: account, index: index}
	l.mu.Lock()
	sh := l.share(account, index)
	switch {
	case sh.left > 0:
		sh.left--
		d.admit(state{prev: sh.prev, cur: sh.table - sh.left, frac: frac})
	case at.Before(sh.until):
		d.refuse(sh.until.Sub(at))
	}
	if d.counted {
		l.mu.Unlock()
		close(d.done)
		return d
	}
	size := int64(1)
	if sh.prevKnown {
		size = min(sh.next, max(1, (p.allowance(sh.prev, frac)-sh.table)/leaseShare))
	}
	prev, known := sh.prev, sh.prevKnown
	l.mu.Unlock()
	go func() {
		defer close(d.done)
		if known {
			l.lease(ctx, account, at, prev, size, d)
		} else {
			l.first(ctx, account, at, d)
		}
	}()
	return d
}

func (l *Limiter) now() time.Time {
	if l.Now != nil {
		return l.Now()
	}
	return time.Now()
}

// share returns account's share of window index, a fresh one when this process has none for it
// (a refusal's until carries over: it may reach into the next window). A lease answered after
// this process moved on to a later window gets a share kept nowhere. l.mu is held.
func (l *Limiter) share(account string, index int64) *share {
	sh := l.shares[account]
	if sh != nil && sh.index == index {
		return sh
	}
	if sh != nil && sh.index > index {
		return &share{index: index}
	}
	if l.shares == nil || len(l.shares) >= maxCached {
		l.shares = make(map[string]*share)
	}
	fresh := &share{index: index, next: 2}
	if sh != nil && sh.index < index {
		fresh.until = sh.until
	}
	l.shares[account] = fresh
	return fresh
}

// counter is the key of account's counter of window index and when it expires: a window's
// counter is still read as the previous one during the next window.
func (l *Limiter) counter(account string, index int64) (store.Key, time.Time) {
	p := l.Policy
	return store.RateKey(account, p.seconds(), index), time.UnixMilli((index + 3) * p.Window.Milliseconds())
}

// first makes this process's first lease of the window (one request) while it reads the count
// of the window before, and fills in d.
func (l *Limiter) first(ctx context.Context, account string, at time.Time, d *decision) {
	p := l.Policy
	_, frac := p.window(at)
	key, expires := l.counter(account, d.index)
	var prev int64
	var prevErr error
	var read sync.WaitGroup
	read.Add(1)
	go func() {
		defer read.Done()
		prev, prevErr = l.read(ctx, store.RateKey(account, p.seconds(), d.index-1))
	}()
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
	}
	s := state{prev: prev, cur: cur, frac: frac}
	admitted := s.estimate() <= float64(p.Requests)
	if !admitted {
		s.cur-- // taken back below
	}
	l.mu.Lock()
	sh := l.share(account, d.index)
	if prevErr == nil {
		sh.prev, sh.prevKnown = prev, true
	}
	sh.table = max(sh.table, s.cur)
	if admitted {
		d.admit(s)
	} else {
		sh.until = at.Add(p.wait(s, 0))
		d.refuse(p.wait(s, 0))
	}
	l.mu.Unlock()
	if !admitted {
		// Detached from the request, so that a client hanging up does not leave it counted.
		if _, err := l.DB.Add(context.WithoutCancel(ctx), key, attrCount, -1, expires); err != nil {
			l.failed(ctx, account, fmt.Errorf("take back a refused request: %w", err))
		}
	}
}

// lease leases size requests of the window (fewer when only fewer fit) for the request of d and
// the ones after it, and fills in d.
func (l *Limiter) lease(ctx context.Context, account string, at time.Time, prev, size int64, d *decision) {
	p := l.Policy
	_, frac := p.window(at)
	key, expires := l.counter(account, d.index)
	allowance := p.allowance(prev, frac)
	n, ok, err := l.DB.AddUpTo(ctx, key, attrCount, size, allowance, expires)
	if err == nil && !ok && size > 1 && allowance-n >= 1 {
		size = allowance - n
		n, ok, err = l.DB.AddUpTo(ctx, key, attrCount, size, allowance, expires)
	}
	if err != nil {
		l.failed(ctx, account, fmt.Errorf("count the request: %w", err))
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	sh := l.share(account, d.index)
	sh.table = max(sh.table, n)
	if !ok {
		s := state{prev: prev, cur: n, frac: frac}
		sh.until = at.Add(p.wait(s, 0))
		d.refuse(p.wait(s, 0))
		return
	}
	sh.left += size - 1
	sh.next = min(2*size, maxLease)
	d.admit(state{prev: prev, cur: sh.table - sh.left, frac: frac})
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

// giveBack returns a request's count to this process's lease of the window it was counted in.
func (l *Limiter) giveBack(account string, index int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if sh := l.shares[account]; sh != nil && sh.index == index {
		sh.left++
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

// decision is one request's admission. Its fields are written before done is closed and only
// read after.
type decision struct {
	policy  Policy
	done    chan struct{}
	l       *Limiter
	account string
	index   int64

	counted   bool // false: the count failed and the request is admitted unreported
	refused   bool
	remaining int64
	reset     time.Duration

	// released is set by Release, on the request's goroutine, as Settle is called.
	released bool
}

// admit fills in an admitted request's decision from the account's state with it counted.
func (d *decision) admit(s state) {
	d.counted = true
	d.remaining = d.policy.remaining(s)
	d.reset = d.policy.regain(s, d.remaining)
}

// refuse fills in a refused request's decision: room again after wait.
func (d *decision) refuse(wait time.Duration) {
	d.counted, d.refused = true, true
	d.reset = wholeSeconds(wait)
}

// Release implements auth.Admission: an admitted request's count goes back to this process's
// lease, for the account's next request.
func (d *decision) Release(h http.Header) {
	<-d.done
	if d.released || !d.counted || d.refused {
		return
	}
	d.released = true
	d.l.giveBack(d.account, d.index)
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
// t: the first moment a request would be admitted. With several processes serving the account,
// r is as this process last saw the window.
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

// wholeSeconds is d rounded up to whole seconds, at least one (the fields' resolution).
func wholeSeconds(d time.Duration) time.Duration {
	secs := int64(math.Ceil(d.Seconds() - 1e-9))
	return time.Duration(max(1, secs)) * time.Second
}
