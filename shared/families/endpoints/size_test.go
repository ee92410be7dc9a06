package endpoints_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tunnelapi/shared/families/endpoints/view"
	"tunnelapi/shared/platform/audit"
	"tunnelapi/shared/platform/store"
	"tunnelapi/shared/rules/trafficpolicy/policytest"
	"tunnelapi/shared/testing/testkit"
)

// eventPayload returns the largest audit-log payload the account has recorded.
func eventPayload(t *testing.T, s *testkit.Stack, account string) int {
	t.Helper()
	largest := 0
	for _, ev := range testkit.QueryAll[audit.LogItem](t, s.DB, store.EventLogKey(account, "").PK) {
		largest = max(largest, len(ev.Payload))
	}
	return largest
}

// TestLargeTrafficPolicies: a cloud endpoint whose custom response is a 152 KB HTML page is
// stored with its audit event (which does not escape the page's <, > and &); a policy whose
// event would not fit one item is a 400 naming traffic_policy, on create and update alike, and
// changes nothing; with an Idempotency-Key the page is stored once more, for retries.
func TestLargeTrafficPolicies(t *testing.T) {
	s, a := testkit.AppAccount(t)
	parent, _ := a.ReserveWildcard(t)
	doc := policytest.CustomResponse(policytest.HTMLPage(152 << 10))
	created := a.Do(t, "POST", pathEndpoints, map[string]any{"url": "https://html." + parent, "traffic_policy": doc}).Expect(t, http.StatusCreated)
	id := created["id"].(string)
	if got := a.Do(t, "GET", pathEndpoints+"/"+id, nil).Expect(t, http.StatusOK)["traffic_policy"]; got != doc {
		t.Fatalf("stored policy differs (%d bytes, sent %d)", len(got.(string)), len(doc))
	}
	if n := eventPayload(t, s, a.AccountID); n > len(doc)+len(doc)/10+2048 {
		t.Fatalf("the audit event of a %d-byte policy takes %d bytes", len(doc), n)
	}
	a.Do(t, "PATCH", pathEndpoints+"/"+id, map[string]any{"traffic_policy": policytest.CustomResponse(policytest.HTMLPage(150 << 10))}).Expect(t, http.StatusOK)

	// Quotes are escaped in the event: 250 KB of them make an event of 500 KB.
	quotes := "on_http_request:\n  - actions:\n      - type: custom-response\n        config:\n          content: '" +
		strings.Repeat(`"`, 250<<10) + "'\n"
	a.Do(t, "POST", pathEndpoints, map[string]any{"url": "https://quotes." + parent, "traffic_policy": quotes}).
		ExpectError(t, http.StatusBadRequest, "ERR_NGROK_215", "traffic_policy")
	a.Do(t, "PATCH", pathEndpoints+"/"+id, map[string]any{"traffic_policy": quotes}).
		ExpectError(t, http.StatusBadRequest, "ERR_NGROK_215", "traffic_policy")
	page := a.Do(t, "GET", pathEndpoints, nil).Expect(t, http.StatusOK)["endpoints"].([]any)
	if len(page) != 1 || page[0].(map[string]any)["url"] != "https://html."+parent {
		t.Fatalf("after the refusals the account has %d endpoints", len(page))
	}

	// A create kept for its retries (Idempotency-Key) stores its response without escaping the
	// page either: it is created once and a retry answers the same.
	key := http.Header{"Idempotency-Key": {"html-page"}}
	body := map[string]any{"url": "https://kept." + parent, "traffic_policy": doc}
	first := a.DoWith(t, "POST", pathEndpoints, key, body).Expect(t, http.StatusCreated)
	again := a.DoWith(t, "POST", pathEndpoints, key, body).Expect(t, http.StatusCreated)
	if first["id"] != again["id"] || again["traffic_policy"] != doc {
		t.Fatalf("a retry answered %v (%d bytes of policy), the create %v", again["id"], len(again["traffic_policy"].(string)), first["id"])
	}
}

// TestURLGuardIsSmall: the URL guard of the longest URL an endpoint can have (a 253-byte host,
// a five-digit port), pooled, with its count at the longest a number takes, is within
// store.SmallItemBytes, from which the store counts the guard's writes unread (store.Tx.Small).
func TestURLGuardIsSmall(t *testing.T) {
	s, a := testkit.AppAccount(t)
	host := strings.Repeat("a", 63) + "." + strings.Repeat("b", 63) + "." + strings.Repeat("c", 63) + "." + strings.Repeat("d", 52) + ".internal"
	url := "tcp://" + host + ":65535"
	if len(host) != 253 {
		t.Fatalf("host of %d bytes, want the longest, 253", len(host))
	}
	a.Do(t, "POST", pathEndpoints, map[string]any{"url": url, "traffic_policy": "on_tcp_connect: []", "pooling_enabled": true}).Expect(t, http.StatusCreated)
	items, err := s.DB.GetMany(t.Context(), view.URLGuardKey(a.AccountID, url))
	if err != nil {
		t.Fatal(err)
	}
	guard := items[0]
	if guard == nil {
		t.Fatal("no URL guard stored for the endpoint")
	}
	for name, v := range guard {
		if n, ok := v.(*types.AttributeValueMemberN); ok {
			n.Value = "-1" + strings.Repeat("2", 37) // 38 digits: the most a number holds
			guard[name] = n
		}
	}
	if n := store.ItemSize(guard); n > store.SmallItemBytes {
		t.Errorf("the largest URL guard takes %d bytes, more than store.SmallItemBytes (%d): %v", n, store.SmallItemBytes, guard)
	}
}
