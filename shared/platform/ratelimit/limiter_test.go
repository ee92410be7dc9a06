package ratelimit

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/store"
	"tunnelapi/shared/testing/fakedb"
)

// These tests run the limiter's logic against the scripted in-memory table: what it counts and
// reads, what it answers, and what a failed count turns into. The same behaviour against
// DynamoDB Local, through the HTTP API and across server instances, is in stack_test.go.

type harness struct {
	db   *fakedb.Table
	l    *Limiter
	logs *bytes.Buffer
	now  time.Time
}

func newHarness(p Policy) *harness {
	h := &harness{db: fakedb.New(), logs: &bytes.Buffer{}}
	lg := slog.New(slog.NewTextHandler(h.logs, nil))
	// A quarter into some window.
	h.now = time.Unix(0, 0).Add(1000*p.Window + p.Window/4)
	h.l = &Limiter{DB: store.New(h.db, "test"), Policy: p, Log: func() *slog.Logger { return lg }, Now: func() time.Time { return h.now }}
	return h
}

// request counts one request of account and returns its refusal and response headers.
func (h *harness) request(account string) (*api.Error, http.Header) {
	hdr := http.Header{}
	e := h.l.Start(context.Background(), account).Settle(hdr)
	return e, hdr
}

func (h *harness) counter(t *testing.T, account string, index int64) string {
	t.Helper()
	k := store.RateKey(account, h.l.Policy.seconds(), index)
	it := h.db.Item(k.PK, k.SK)
	if it == nil {
		return "absent"
	}
	return it["n"].(*types.AttributeValueMemberN).Value
}

func TestCountsAndRefuses(t *testing.T) {
	h := newHarness(Policy{3, 10 * time.Second})
	index, _ := h.l.Policy.window(h.now)
	// t: until the quota grows by one if nothing more is sent, i.e. until enough of this
	// window's count has left the rolling window (next window at 7.5 s, plus 1, 1/2, 1/3 of it).
	for i, want := range []string{`"default";r=2;t=18`, `"default";r=1;t=13`, `"default";r=0;t=11`} {
		e, hdr := h.request("acct_a")
		if e != nil || hdr.Get("RateLimit") != want || hdr.Get("Retry-After") != "" {
			t.Fatalf("request %d: %v, RateLimit %q Retry-After %q; want admitted with %s", i+1, e, hdr.Get("RateLimit"), hdr.Get("Retry-After"), want)
		}
	}
	e, hdr := h.request("acct_a")
	if e == nil || e.Status != http.StatusTooManyRequests || e.Code != api.CodeRateLimited {
		t.Fatalf("4th request: %v; want 429 %s", e, api.CodeRateLimited)
	}
	// 3 in this window: free again at the next window's start plus 1/3 of it (7.5 s + 3.33 s).
	if hdr.Get("Retry-After") != "11" || hdr.Get("RateLimit") != `"default";r=0;t=11` || e.Details["retry_after"] != "11" ||
		!strings.Contains(e.Msg, "at most 3 requests per 10 seconds") {
		t.Errorf("refusal: Retry-After %q RateLimit %q: %+v", hdr.Get("Retry-After"), hdr.Get("RateLimit"), e)
	}
	// The refused request was taken back; another account has its own count.
	if got := h.counter(t, "acct_a", index); got != "3" {
		t.Errorf("counter after a refusal = %s, want 3", got)
	}
	if e, hdr := h.request("acct_b"); e != nil || hdr.Get("RateLimit") != `"default";r=2;t=18` {
		t.Errorf("other account: %v %q", e, hdr.Get("RateLimit"))
	}
	// The counter expires through TTL after the next window, in which it is still read.
	k := store.RateKey("acct_a", 10, index)
	ttl := h.db.Item(k.PK, k.SK)[store.AttrTTL].(*types.AttributeValueMemberN).Value
	if want := (index + 3) * 10; ttl != strconv.FormatInt(want, 10) {
		t.Errorf("ttl = %s, want %d", ttl, want)
	}
}

// The previous window's count is read once per process and window, alongside the first count
// of the window, and weighs in by the part of it still in the rolling window.
func TestPreviousWindow(t *testing.T) {
	h := newHarness(Policy{100, 10 * time.Second})
	for range 80 {
		if e, _ := h.request("acct"); e != nil {
			t.Fatal(e)
		}
	}
	h.now = h.now.Add(10 * time.Second) // a quarter into the next window: 80·0.75 = 60 weigh in
	gets := h.db.Count(fakedb.OpGetItem)
	e, hdr := h.request("acct")
	if e != nil || hdr.Get("RateLimit") != `"default";r=39;t=1` {
		t.Fatalf("first of the next window: %v %q; want r=39 (100 − 60 − 1)", e, hdr.Get("RateLimit"))
	}
	for range 39 {
		if e, _ := h.request("acct"); e != nil {
			t.Fatal(e)
		}
	}
	if e, _ := h.request("acct"); e == nil {
		t.Fatal("41st request of the window admitted with 60 still weighing in")
	}
	if n := h.db.Count(fakedb.OpGetItem) - gets; n != 1 {
		t.Errorf("%d reads of the previous window for 41 requests; want 1", n)
	}
}

// A count that fails admits the request without a RateLimit field and logs why; a failed read
// of the previous window is asked for again by the next request.
func TestFailureAdmits(t *testing.T) {
	h := newHarness(Policy{1, 10 * time.Second})
	h.db.Fail(fakedb.OpUpdateItem, fakedb.Throttled())
	if e, hdr := h.request("acct"); e != nil || hdr.Get("RateLimit") != "" {
		t.Fatalf("failed count: %v %q; want admitted without a RateLimit field", e, hdr.Get("RateLimit"))
	}
	if !strings.Contains(h.logs.String(), "rate limit count failed") {
		t.Errorf("nothing logged: %s", h.logs)
	}
	h.db.Fail(fakedb.OpGetItem, fakedb.Throttled())
	if e, hdr := h.request("acct"); e != nil || hdr.Get("RateLimit") == "" {
		t.Fatalf("failed read of the previous window: %v %q; want decided on this window's count", e, hdr.Get("RateLimit"))
	}
	gets := h.db.Count(fakedb.OpGetItem)
	if e, _ := h.request("acct"); e == nil {
		t.Fatal("second request under a limit of 1 admitted")
	}
	if h.db.Count(fakedb.OpGetItem) != gets+1 {
		t.Error("the previous window was not read again after a failed read")
	}
	// A request whose client went away is not worth a log line. (Two windows on: the refusal
	// above would otherwise answer without asking the table.)
	h.now = h.now.Add(2 * h.l.Policy.Window)
	h.logs.Reset()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	h.db.Fail(fakedb.OpUpdateItem, ctx.Err())
	if e := h.l.Start(ctx, "acct").Settle(http.Header{}); e != nil || h.logs.Len() != 0 {
		t.Errorf("cancelled: %v, logged %q", e, h.logs)
	}
}

// A process leases the account's requests from the table a lease at a time and spends them
// without a round trip: a run of requests costs a few writes, the RateLimit field stays exact
// for one process, and the table never holds more than the last lease's unspent part beyond
// what was served.
func TestLeases(t *testing.T) {
	h := newHarness(Policy{1000, 60 * time.Second})
	index, _ := h.l.Policy.window(h.now)
	for i := 1; i <= 300; i++ {
		e, hdr := h.request("acct")
		if want := fmt.Sprintf(`"default";r=%d;`, 1000-i); e != nil || !strings.HasPrefix(hdr.Get("RateLimit"), want) {
			t.Fatalf("request %d: %v %q, want admitted with %s…", i, e, hdr.Get("RateLimit"), want)
		}
	}
	if n := h.db.Count(fakedb.OpUpdateItem); n > 12 {
		t.Errorf("%d writes for 300 requests", n)
	}
	n, _ := strconv.Atoi(h.counter(t, "acct", index))
	if n < 300 || n >= 300+maxLease {
		t.Errorf("counter %d after 300 requests; want 300 plus at most one lease unspent", n)
	}
}

// A refused lease tells the process when the window has room again: until then requests are
// refused without a write, then served again.
func TestRefusalHeld(t *testing.T) {
	h := newHarness(Policy{3, 10 * time.Second})
	for range 3 {
		if e, _ := h.request("acct"); e != nil {
			t.Fatal(e)
		}
	}
	if e, _ := h.request("acct"); e == nil {
		t.Fatal("4th request of 3 admitted")
	}
	writes := h.db.Count(fakedb.OpUpdateItem)
	e, hdr := h.request("acct")
	if e == nil || hdr.Get("Retry-After") != "11" || h.db.Count(fakedb.OpUpdateItem) != writes {
		t.Fatalf("5th request: %v Retry-After %q, %d more writes; want refused for 11 s without one", e, hdr.Get("Retry-After"), h.db.Count(fakedb.OpUpdateItem)-writes)
	}
	h.now = h.now.Add(11 * time.Second)
	if e, _ := h.request("acct"); e != nil {
		t.Fatalf("at Retry-After: %v", e)
	}
}
