package principals_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"tunnelapi/shared/families/principals"
)

// TestLargeACLs: 20,000 ACL rules (516 KB) are refused by the credential's own limit; rules
// within that count whose credential would not fit one stored item are refused by the size
// accounting; both name acl, on create and update, and change nothing.
func TestLargeACLs(t *testing.T) {
	s := start(t)
	a := s.NewAccount(t)
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
}
