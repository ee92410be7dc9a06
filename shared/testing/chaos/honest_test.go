package chaos

import (
	"net/http"
	"testing"

	"tunnelapi/shared/platform/resource"
	"tunnelapi/shared/testing/faults"
)

// expect503 fails t unless a is a 503 with code, Retry-After and the envelope.
func expect503(t *testing.T, what string, a answer, code string) {
	t.Helper()
	if a.err != nil || a.status != http.StatusServiceUnavailable || a.header.Get("Retry-After") == "" || a.errorCode() != code {
		t.Fatalf("%s: %d %v Retry-After %q %s, want 503 %s with Retry-After", what, a.status, a.err, a.header.Get("Retry-After"), a.body, code)
	}
}

// keysDescribed counts the account's API keys with description d (read without faults).
func (f *faulty) keysDescribed(t *testing.T, token, d string) int {
	t.Helper()
	a := f.do(token, "GET", "/api_keys", nil, nil)
	if a.status != 200 {
		t.Fatalf("list: %d %s", a.status, a.body)
	}
	var l struct {
		Keys []struct {
			Description string `json:"description"`
		} `json:"keys"`
	}
	mustJSON(t, a.body, &l)
	n := 0
	for _, k := range l.Keys {
		if k.Description == d {
			n++
		}
	}
	return n
}

// A throttled table is a 503 ERR_NGROK_1501 with Retry-After, for a read and for a create,
// and the create made nothing.
func TestThrottledIsUnavailable(t *testing.T) {
	f := newFaulty(t)
	acct := f.stack.NewAccount(t)
	f.dyn.Set(1, faults.Throttle)
	expect503(t, "list", f.do(acct.Token, "GET", "/api_keys", nil, nil), "ERR_NGROK_1501")
	expect503(t, "create", f.do(acct.Token, "POST", "/api_keys", nil, map[string]any{"description": "throttled"}), "ERR_NGROK_1501")
	f.heal()
	if n := f.keysDescribed(t, acct.Token, "throttled"); n != 0 {
		t.Fatalf("a throttled create made %d keys", n)
	}
	if f.dyn.Injected()[faults.Throttle] == 0 || f.late.Load() != 0 {
		t.Fatalf("injected %v, %d requests past their deadline", f.dyn.Injected(), f.late.Load())
	}
}

// A create DynamoDB applied but answered with an internal error is a 503 ERR_NGROK_1502 (the
// outcome is unknown). With an Idempotency-Key the create reads its key's record after the
// failure and answers with the resource it made (201, replayed); sent again, it answers the
// same. Either way there is exactly one resource per create.
func TestLostCommitIsUnknownAndRetrySafe(t *testing.T) {
	f := newFaulty(t)
	acct := f.stack.NewAccount(t)
	f.dyn.SetWrites(1, faults.InternalAfter)
	expect503(t, "create", f.do(acct.Token, "POST", "/api_keys", nil, map[string]any{"description": "lost unkeyed"}), "ERR_NGROK_1502")
	key := http.Header{resource.IdempotencyHeader: {"lost-commit"}}
	body := map[string]any{"description": "lost keyed"}
	first := f.do(acct.Token, "POST", "/api_keys", key, body)
	if first.status != http.StatusCreated || first.header.Get(resource.ReplayedHeader) != "true" {
		t.Fatalf("keyed create: %d %s, want the committed create read back (201, replayed)", first.status, first.body)
	}
	f.heal()
	a := f.do(acct.Token, "POST", "/api_keys", key, body)
	if a.status != http.StatusCreated || a.header.Get(resource.ReplayedHeader) != "true" || string(a.body) != string(first.body) {
		t.Fatalf("retry: %d %s (replayed %q), want the first create's 201 replayed", a.status, a.body, a.header.Get(resource.ReplayedHeader))
	}
	for _, d := range []string{"lost unkeyed", "lost keyed"} {
		if n := f.keysDescribed(t, acct.Token, d); n != 1 {
			t.Fatalf("%d keys %q after a lost create, want 1 (DynamoDB applied it)", n, d)
		}
	}
}

// A connection held without an answer is a 503 within the request's deadline: every SDK
// attempt and pause fits in it.
func TestHeldConnectionAnswersInTime(t *testing.T) {
	f := newFaulty(t)
	acct := f.stack.NewAccount(t)
	f.proxy.Add(t, faults.Toxic{Type: "timeout", Stream: "upstream", Toxicity: 1, Attributes: map[string]any{"timeout": 0}})
	expect503(t, "list", f.do(acct.Token, "GET", "/api_keys", nil, nil), "ERR_NGROK_1501")
	a := f.do(acct.Token, "POST", "/api_keys", nil, map[string]any{"description": "held"})
	if a.status != http.StatusServiceUnavailable {
		t.Fatalf("create on a held connection: %d %v %s", a.status, a.err, a.body)
	}
	f.heal()
	if f.late.Load() != 0 {
		t.Fatalf("%d requests ran past their deadline", f.late.Load())
	}
}
