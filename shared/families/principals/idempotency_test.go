package principals_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tunnelapi/shared/platform/resource"
	"tunnelapi/shared/platform/store"
)

// TestIdempotencyKeyExpires: a retried API key create gets the first response, token
// included, while the record holds the token only sealed; once the window has passed the key
// is free again, although DynamoDB Local has not yet removed the record by its TTL.
func TestIdempotencyKeyExpires(t *testing.T) {
	s := start(t)
	a := s.NewAccount(t)
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

	var rec store.Item
	recKey := store.IdempotencyKey(a.AccountID, store.TokenHash(key))
	read := func() store.Item {
		items, err := s.DB.GetMany(context.Background(), recKey)
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
	a.DoWith(t, "POST", "/api_keys", hdr, map[string]any{"description": "other"}).ExpectError(t, http.StatusConflict, "ERR_NGROK_409", resource.IdempotencyHeader)
}
