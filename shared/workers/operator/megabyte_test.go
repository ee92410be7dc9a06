package operator_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tunnelapi/shared/app"
	"tunnelapi/shared/families/principals"
	"tunnelapi/shared/platform/store"
	"tunnelapi/shared/rules/trafficpolicy/policytest"
	"tunnelapi/shared/testing/testkit"
	"tunnelapi/shared/workers/operator"
)

// operatorCall sends one request to srv signed with operatorCreds (operatorDo) and decodes its
// answer into out (when not nil and the status a success), returning its status.
func operatorCall(t *testing.T, srv *httptest.Server, method, path string, body, out any) int {
	t.Helper()
	status, b := operatorDo(t, srv, operatorCreds, "", method, path, body)
	if out != nil && status < 300 {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s %s: %d %s", method, path, status, b)
		}
	}
	return status
}

// TestTenantPastAMegabyte: a tenant whose endpoints and idempotency records take several of
// DynamoDB's 1 MB answers (nine endpoints with 250 KB traffic policies, each created with an
// Idempotency-Key) is listed whole: every walk of its endpoints, at any limit, returns each
// exactly once, and pages end by size with a next_page_uri rather than at DynamoDB's answer;
// the operator's export holds each endpoint once; and after its deletion (the erasure run to
// its 204) a Scan of the whole table finds no item naming it, idempotency records included.
func TestTenantPastAMegabyte(t *testing.T) {
	s := testkit.App(t)
	srv := operatorServer(t, s)
	var tenant operator.Created
	if status := operatorCall(t, srv, "POST", "/operator/tenants", map[string]string{"email": "big@tenant.test"}, &tenant); status != http.StatusCreated {
		t.Fatalf("create the tenant: %d", status)
	}
	a := s.AccountOf(&principals.Bootstrapped{AccountID: tenant.Tenant.ID, UserID: tenant.AdminUserID, APIKeyID: tenant.APIKeyID, Token: tenant.Token})
	parent, _ := a.ReserveWildcard(t)
	const n = 9
	// About 250 KB, under the limit of 256 KiB, of text that renders at its own size (an HTML
	// page would render three times larger, its <, > and & escaped).
	policy := policytest.CustomResponse(strings.Repeat("a tunnel ", 250<<10/9))
	start := time.Now()
	made := map[string]bool{}
	for i := range n {
		key := http.Header{"Idempotency-Key": {fmt.Sprint("big-", i)}}
		ep := a.DoWith(t, "POST", "/endpoints", key, map[string]any{"url": fmt.Sprintf("https://e%d.%s", i, parent), "traffic_policy": policy}).
			Expect(t, http.StatusCreated)
		made[ep["id"].(string)] = true
	}
	t.Logf("%d endpoints of %d KB made in %v", n, len(policy)>>10, time.Since(start).Round(time.Millisecond))

	start = time.Now()
	// A page holds what fits api.MaxPageBytes (eight), more than one of DynamoDB's answers can
	// (five: 1 MB and the item that crosses it).
	if first := a.Do(t, "GET", "/endpoints", nil).Expect(t, http.StatusOK)["endpoints"].([]any); len(first) < 6 {
		t.Errorf("the first page holds %d of %d endpoints", len(first), n)
	}
	for _, path := range []string{"/endpoints", "/endpoints?limit=4", "/endpoints?limit=1"} {
		var ids []string
		var pages int
		calls := s.RoundTripsOf(t, func() { ids, pages = a.WalkPages(t, path, "endpoints") })
		if !sameSet(ids, made) {
			t.Errorf("the walk of %s (%d pages) returned %d ids for %d endpoints, each once: %v", path, pages, len(ids), n, ids)
		}
		t.Logf("%s: %d endpoints in %d pages, %d queries", path, len(ids), pages, calls["Query"])
	}
	t.Logf("walks in %v", time.Since(start).Round(time.Millisecond))

	start = time.Now()
	var key operator.Created
	if status := operatorCall(t, srv, "POST", "/operator/tenants/"+tenant.Tenant.ID+"/keys", nil, &key); status != http.StatusCreated {
		t.Fatalf("a key for the export: %d", status)
	}
	var export bytes.Buffer
	c := &operator.TenantAPI{Base: s.Server.URL, Token: key.Token}
	if err := operator.Export(t.Context(), c, app.Families, operator.Exported{ID: tenant.Tenant.ID, AdminUserID: tenant.AdminUserID}, key.APIKeyID, &export); err != nil {
		t.Fatal(err)
	}
	var exported []string
	for l := range strings.SplitSeq(strings.TrimSpace(export.String()), "\n") {
		var line operator.Line
		if err := json.Unmarshal([]byte(l), &line); err != nil {
			t.Fatal(err)
		}
		if line.Path == "/endpoints" {
			exported = append(exported, line.Object["id"].(string))
		}
	}
	if !sameSet(exported, made) {
		t.Errorf("the export (%d bytes) holds %d endpoints for %d, each once: %v", export.Len(), len(exported), n, exported)
	}
	t.Logf("export of %d bytes in %v", export.Len(), time.Since(start).Round(time.Millisecond))

	start = time.Now()
	for attempt := 0; ; attempt++ {
		status := operatorCall(t, srv, "DELETE", "/operator/tenants/"+tenant.Tenant.ID, nil, nil)
		if status == http.StatusNoContent {
			break
		}
		if status != http.StatusAccepted || attempt == 20 {
			t.Fatalf("delete the tenant, attempt %d: %d", attempt, status)
		}
	}
	t.Logf("erasure in %v", time.Since(start).Round(time.Millisecond))
	items, err := s.Items(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	left := 0
	for _, it := range items {
		if names(it, tenant.Tenant.ID) {
			left++
			t.Errorf("after the erasure an item names the tenant: pk %s sk %s", str(it, store.AttrPK), str(it, store.AttrSK))
		}
	}
	t.Logf("the table holds %d items, %d of them the tenant's", len(items), left)
}

// sameSet reports whether ids holds each id of want exactly once and nothing else.
func sameSet(ids []string, want map[string]bool) bool {
	seen := map[string]bool{}
	for _, id := range ids {
		if !want[id] || seen[id] {
			return false
		}
		seen[id] = true
	}
	return len(seen) == len(want)
}

// str is the string attribute name of it ("" when absent).
func str(it store.Item, name string) string {
	v, _ := it[name].(*types.AttributeValueMemberS)
	if v == nil {
		return ""
	}
	return v.Value
}
