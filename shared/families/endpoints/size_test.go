package endpoints_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"tunnelapi/shared/platform/audit"
	"tunnelapi/shared/platform/store"
	"tunnelapi/shared/testing/testkit"
)

// htmlPage is an HTML page of about n bytes, dense in the characters JSON encoders escape for
// HTML (<, > and &), and free of quotes.
func htmlPage(n int) string {
	const row = "<p><b>&lt;</b>&amp;<i>&gt;</i></p>\n"
	return "<html><body><table>\n" + strings.Repeat(row, n/len(row)) + "</table></body></html>"
}

// customResponse is a policy answering every request with content.
func customResponse(t *testing.T, content string) string {
	t.Helper()
	doc := map[string]any{"on_http_request": []any{map[string]any{"actions": []any{map[string]any{
		"type": "custom-response", "config": map[string]any{"status_code": 200, "content": content,
			"headers": map[string]string{"content-type": "text/html"}}}}}}}
	// As a person writes it: <, > and & as they are.
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// eventPayload returns the largest audit-log payload the account has recorded.
func eventPayload(t *testing.T, s *testkit.Stack, account string) int {
	t.Helper()
	items, err := s.DB.QueryAll(context.Background(), store.EventLogKey(account, "").PK)
	if err != nil {
		t.Fatal(err)
	}
	largest := 0
	for _, raw := range items {
		var ev audit.LogItem
		if err := store.Unmarshal(raw, &ev); err != nil {
			t.Fatal(err)
		}
		largest = max(largest, len(ev.Payload))
	}
	return largest
}

// TestLargeTrafficPolicies: a cloud endpoint whose custom response is a 152 KB HTML page is
// stored with its audit event (which does not escape the page's <, > and &); a policy whose
// event would not fit one item is a 400 naming traffic_policy, on create and update alike, and
// changes nothing.
func TestLargeTrafficPolicies(t *testing.T) {
	s := start(t)
	a := s.NewAccount(t)
	doc := customResponse(t, htmlPage(152<<10))
	created := a.Do(t, "POST", pathEndpoints, map[string]any{"url": "https://html.example.com", "traffic_policy": doc}).Expect(t, http.StatusCreated)
	id := created["id"].(string)
	if got := a.Do(t, "GET", pathEndpoints+"/"+id, nil).Expect(t, http.StatusOK)["traffic_policy"]; got != doc {
		t.Fatalf("stored policy differs (%d bytes, sent %d)", len(got.(string)), len(doc))
	}
	if n := eventPayload(t, s, a.AccountID); n > len(doc)+len(doc)/10+2048 {
		t.Fatalf("the audit event of a %d-byte policy takes %d bytes", len(doc), n)
	}
	a.Do(t, "PATCH", pathEndpoints+"/"+id, map[string]any{"traffic_policy": customResponse(t, htmlPage(150<<10))}).Expect(t, http.StatusOK)

	// Quotes are escaped in the event: 250 KB of them make an event of 500 KB.
	quotes := "on_http_request:\n  - actions:\n      - type: custom-response\n        config:\n          content: '" +
		strings.Repeat(`"`, 250<<10) + "'\n"
	a.Do(t, "POST", pathEndpoints, map[string]any{"url": "https://quotes.example.com", "traffic_policy": quotes}).
		ExpectError(t, http.StatusBadRequest, "ERR_NGROK_215", "traffic_policy")
	a.Do(t, "PATCH", pathEndpoints+"/"+id, map[string]any{"traffic_policy": quotes}).
		ExpectError(t, http.StatusBadRequest, "ERR_NGROK_215", "traffic_policy")
	page := a.Do(t, "GET", pathEndpoints, nil).Expect(t, http.StatusOK)["endpoints"].([]any)
	if len(page) != 1 || page[0].(map[string]any)["url"] != "https://html.example.com" {
		t.Fatalf("after the refusals the account has %d endpoints", len(page))
	}
}
