package principals_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tunnelapi/shared/families/principals"
	"tunnelapi/shared/platform/resource"
	"tunnelapi/shared/platform/store"
	"tunnelapi/shared/testing/testkit"
)

// TestIdempotencyKeyExpires: a retried API key create gets the first response, token
// included, while the record holds the token only sealed; once the window has passed the key
// is free again, although DynamoDB Local has not yet removed the record by its TTL.
func TestIdempotencyKeyExpires(t *testing.T) {
	s, a := testkit.AppAccount(t)
	s.Deps.Kit.IdempotencyWindow = 3 * time.Second // long enough for a request pair under load, short enough to wait out
	t.Cleanup(func() { s.Deps.Kit.IdempotencyWindow = 0 })
	const key = "deploy-7f3a"
	hdr := http.Header{resource.IdempotencyHeader: {key}}
	body := map[string]any{"description": "ci"}

	first := a.DoWith(t, "POST", "/api_keys", hdr, body)
	created := first.Expect(t, http.StatusCreated)
	retry := a.DoWith(t, "POST", "/api_keys", hdr, body)
	if retry.Expect(t, http.StatusCreated); string(retry.Body) != string(first.Body) || retry.Header.Get(resource.ReplayedHeader) != "true" {
		t.Fatalf("retry within the window: %s (replayed %q), want the first response %s", retry.Body, retry.Header.Get(resource.ReplayedHeader), first.Body)
	}
	a.DoWith(t, "POST", "/api_keys", hdr, map[string]any{"description": "other"}).ExpectError(t, http.StatusUnprocessableEntity, "ERR_NGROK_215", resource.IdempotencyHeader)

	var rec store.Item
	recKey := store.IdempotencyKey(a.AccountID, a.APIKeyID, store.TokenHash(key))
	read := func() store.Item {
		items, err := s.DB.GetMany(t.Context(), recKey)
		if err != nil {
			t.Fatal(err)
		}
		return items[0]
	}
	if rec = read(); rec == nil {
		t.Fatal("no idempotency record stored")
	}
	token := created["token"].(string)
	for name, v := range rec {
		if sv, ok := v.(*types.AttributeValueMemberS); ok && strings.Contains(sv.Value, token[28:]) {
			t.Fatalf("the record's %s holds the token in plaintext", name)
		}
	}
	if _, sealed := rec["sealed"]; !sealed {
		t.Fatalf("the record of a response with a token is not sealed: %v", rec)
	}

	time.Sleep(4 * time.Second)
	if read() == nil {
		t.Log("DynamoDB Local removed the expired record already; the in-code expiry check was not exercised")
	}
	third := a.DoWith(t, "POST", "/api_keys", hdr, body).Expect(t, http.StatusCreated)
	if third["id"] == created["id"] {
		t.Fatalf("after the window the key still replays %s", created["id"])
	}
}

// TestLargeACLs: 20,000 ACL rules (516 KB) are refused by the credential's own limit; rules
// within that count whose credential would not fit one stored item are refused by the size
// accounting; both name acl, on create and update, and change nothing.
func TestLargeACLs(t *testing.T) {
	_, a := testkit.AppAccount(t)
	many := make([]string, 20000)
	for i := range many {
		many[i] = fmt.Sprintf("bind:host-%05d.example.com", i)
	}
	long := make([]string, principals.MaxACLRules)
	for i := range long {
		long[i] = fmt.Sprintf("bind:%s-%04d=%s", strings.Repeat("k", 200), i, strings.Repeat("v", 200))
	}
	id := a.Do(t, "POST", "/credentials", map[string]any{"acl": []string{"bind:x.example.com"}}).Expect(t, http.StatusCreated)["id"].(string)
	for _, c := range []struct {
		acl []string
		why string
	}{{many, "at most"}, {long, "too large to store"}} {
		for _, e := range []map[string]any{
			a.Do(t, "POST", "/credentials", map[string]any{"acl": c.acl}).ExpectError(t, http.StatusBadRequest, "ERR_NGROK_215", "acl"),
			a.Do(t, "PATCH", "/credentials/"+id, map[string]any{"acl": c.acl}).ExpectError(t, http.StatusBadRequest, "ERR_NGROK_215", "acl"),
		} {
			if msg := e["msg"].(string); !strings.Contains(msg, c.why) {
				t.Errorf("%d rules: %q does not say %q", len(c.acl), msg, c.why)
			}
		}
	}
	got := a.Do(t, "GET", "/credentials/"+id, nil).Expect(t, http.StatusOK)["acl"].([]any)
	if len(got) != 1 {
		t.Fatalf("after the refusals the ACL has %d rules", len(got))
	}
	if n := len(a.Do(t, "GET", "/credentials", nil).Expect(t, http.StatusOK)["credentials"].([]any)); n != 1 {
		t.Fatalf("after the refusals the account has %d credentials", n)
	}
	// Half as many of those rules fit.
	fits := long[:principals.MaxACLRules/2]
	a.Do(t, "PATCH", "/credentials/"+id, map[string]any{"acl": fits}).Expect(t, http.StatusOK)
	// The limit itself is accepted, on create and update.
	limit := many[:principals.MaxACLRules]
	created := a.Do(t, "POST", "/credentials", map[string]any{"acl": limit}).Expect(t, http.StatusCreated)
	if n := len(created["acl"].([]any)); n != principals.MaxACLRules {
		t.Fatalf("created with %d rules", n)
	}
	if n := len(a.Do(t, "PATCH", "/credentials/"+id, map[string]any{"acl": limit}).Expect(t, http.StatusOK)["acl"].([]any)); n != principals.MaxACLRules {
		t.Fatalf("updated to %d rules", n)
	}
}

// TestIdempotencyKeyBelongsToItsCaller: an Idempotency-Key is the key of the API key that sent
// it. Another API key of the same account (a bot's, or another of the same admin's) sending the
// same key with the same body makes a create of its own: it never gets the first create's
// response, whose token only its creator may see. The first key's retry still replays.
func TestIdempotencyKeyBelongsToItsCaller(t *testing.T) {
	s, a := testkit.AppAccount(t)
	bot := a.Do(t, "POST", "/bot_users", map[string]any{"name": "ci"}).Expect(t, http.StatusCreated)["id"].(string)
	botKey := a.Do(t, "POST", "/api_keys", map[string]any{"owner_id": bot}).Expect(t, http.StatusCreated)["token"].(string)
	sibling := a.Do(t, "POST", "/api_keys", map[string]any{"description": "second admin key"}).Expect(t, http.StatusCreated)["token"].(string)

	hdr := http.Header{resource.IdempotencyHeader: {"shared-key-1"}}
	body := map[string]any{"description": "made once"}
	first := a.DoWith(t, "POST", "/api_keys", hdr, body)
	created := first.Expect(t, http.StatusCreated)
	for who, token := range map[string]string{"the bot's key": botKey, "another key of the same admin": sibling} {
		res := s.DoWith(t, "POST", "/api_keys", token, hdr, body)
		other := res.Expect(t, http.StatusCreated)
		if other["id"] == created["id"] || other["token"] == created["token"] || res.Header.Get(resource.ReplayedHeader) != "" {
			t.Fatalf("%s sending the same Idempotency-Key got the first create's response (id %v, replayed %q): %s",
				who, other["id"], res.Header.Get(resource.ReplayedHeader), res.Body)
		}
	}
	retry := a.DoWith(t, "POST", "/api_keys", hdr, body)
	if retry.Expect(t, http.StatusCreated); string(retry.Body) != string(first.Body) || retry.Header.Get(resource.ReplayedHeader) != "true" {
		t.Fatalf("the first key's retry: %s (replayed %q), want the first response", retry.Body, retry.Header.Get(resource.ReplayedHeader))
	}
}
