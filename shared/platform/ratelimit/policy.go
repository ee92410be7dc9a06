package ratelimit

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// EnvVar is the environment variable whose value Parse reads (package config calls it).
const EnvVar = "RATE_LIMIT"

// Bounds of a policy: at least one request per window; windows of whole seconds up to a day.
const (
	MaxRequests = 1_000_000
	MaxWindow   = 24 * time.Hour
)

// policyName names the one quota policy in the RateLimit and RateLimit-Policy fields.
const policyName = `"default"`

// Policy is a limit of Requests per rolling Window. The zero Policy limits nothing.
type Policy struct {
	Requests int64
	Window   time.Duration // whole seconds
}

// Parse reads a RATE_LIMIT value: "<requests>/<seconds>" such as "120/60", or "off"; empty is
// off too. Anything else is an error naming the variable and what it expects.
func Parse(s string) (Policy, error) {
	s = strings.TrimSpace(s)
	if s == "" || strings.EqualFold(s, "off") {
		return Policy{}, nil
	}
	reqs, secs, ok := strings.Cut(s, "/")
	n, err1 := strconv.ParseInt(reqs, 10, 64)
	w, err2 := strconv.ParseInt(secs, 10, 64)
	if !ok || err1 != nil || err2 != nil {
		return Policy{}, fmt.Errorf("ratelimit: %s=%q: want <requests>/<seconds> (such as 120/60) or off", EnvVar, s)
	}
	if n < 1 || n > MaxRequests {
		return Policy{}, fmt.Errorf("ratelimit: %s=%q: requests must be 1..%d", EnvVar, s, MaxRequests)
	}
	if w < 1 || w > int64(MaxWindow/time.Second) {
		return Policy{}, fmt.Errorf("ratelimit: %s=%q: the window must be 1..%d seconds", EnvVar, s, int64(MaxWindow/time.Second))
	}
	return Policy{Requests: n, Window: time.Duration(w) * time.Second}, nil
}

// Enabled reports whether p limits anything.
func (p Policy) Enabled() bool { return p.Requests > 0 }

// String is p as RATE_LIMIT spells it.
func (p Policy) String() string {
	if !p.Enabled() {
		return "off"
	}
	return fmt.Sprintf("%d/%d", p.Requests, p.seconds())
}

// Field is the RateLimit-Policy field value announcing p.
func (p Policy) Field() string {
	return fmt.Sprintf("%s;q=%d;w=%d", policyName, p.Requests, p.seconds())
}

func (p Policy) seconds() int64 { return int64(p.Window / time.Second) }

// state is one account's counts as a request sees them: prev requests in the window before
// the current one, cur in the current one (this request included), at fraction frac (0..1) of
// the current window.
type state struct {
	prev, cur int64
	frac      float64
}

// estimate is the number of requests in the rolling window ending now: the current window's
// count plus the part of the previous window's still inside the rolling window.
func (s state) estimate() float64 {
	return float64(s.prev)*(1-s.frac) + float64(s.cur)
}

// remaining is the quota left in state s (never negative).
func (p Policy) remaining(s state) int64 {
	return max(0, int64(math.Floor(float64(p.Requests)-s.estimate()+1e-9)))
}

// allowance is how many requests the current window may count, at fraction frac of it, with
// prev counted in the window before: the largest count whose estimate is within the limit.
func (p Policy) allowance(prev int64, frac float64) int64 {
	return int64(math.Floor(float64(p.Requests) - float64(prev)*(1-frac) + 1e-9))
}

// regain is wait in whole seconds, rounded up: at least a second (the fields' resolution); with
// the whole quota left it is the window.
func (p Policy) regain(s state, have int64) time.Duration { return wholeSeconds(p.wait(s, have)) }

// wait is how long, if no request is made meanwhile, until the quota left exceeds have: in the
// current window the previous window's weight decays; from the next one on, the current
// window's count becomes the decaying one.
func (p Policy) wait(s state, have int64) time.Duration {
	target := float64(p.Requests - have - 1) // the estimate at which have+1 requests are left
	if target < 0 {
		return p.Window
	}
	var frac float64 // of the current window, from its start, at which the target is reached
	switch {
	case float64(s.cur) <= target && s.prev > 0:
		frac = 1 - (target-float64(s.cur))/float64(s.prev)
	case s.cur > 0:
		frac = 1 + 1 - target/float64(s.cur)
	default:
		frac = s.frac
	}
	return max(0, time.Duration((frac-s.frac)*float64(p.Window)))
}

// window is the index of the fixed window t falls in and the fraction of it elapsed.
func (p Policy) window(t time.Time) (index int64, frac float64) {
	ms, w := t.UnixMilli(), p.Window.Milliseconds()
	return ms / w, float64(ms%w) / float64(w)
}
