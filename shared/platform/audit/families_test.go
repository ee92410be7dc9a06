package audit_test

import (
	"net/http"
	"testing"

	"tunnelapi/shared/platform/audit"
	"tunnelapi/shared/testing/testkit"
)

// Every mutation of the access, backend (every kind) and endpoint families records its audit event, with the
// resource as GET returns it, in the mutation's own transaction.
func TestAuditEventsOfAccessBackendsAndEndpoints(t *testing.T) {
	_, a := testkit.AppAccount(t)
	type step struct {
		path, kind  string
		body, patch any
	}
	pol := a.Do(t, "POST", "/ip_policies", map[string]any{}).Expect(t, http.StatusCreated)["id"].(string)
	child := a.Do(t, "POST", "/backends/tunnel_group", map[string]any{}).Expect(t, http.StatusCreated)["id"].(string)
	steps := []step{
		{"/ip_policies", "ip_policy", map[string]any{"description": "x"}, map[string]any{"description": "y"}},
		{"/ip_policy_rules", "ip_policy_rule", map[string]any{"ip_policy_id": pol, "cidr": "192.0.2.0/24", "action": "deny"}, map[string]any{"cidr": "192.0.2.0/25"}},
		{"/ip_restrictions", "ip_restriction", map[string]any{"type": "agent", "ip_policy_ids": []string{pol}}, map[string]any{"enforced": true}},
		{"/backends/tunnel_group", "tunnel_group_backend", map[string]any{"labels": map[string]string{"a": "b"}}, map[string]any{"description": "d"}},
		{"/backends/static", "static_backend", map[string]any{"address": "a.example.com:443"}, map[string]any{"tls": map[string]any{"enabled": true}}},
		{"/backends/http_response", "http_response_backend", map[string]any{"status_code": 503}, map[string]any{"body": "b"}},
		{"/backends/failover", "failover_backend", map[string]any{"backends": []string{child}}, map[string]any{"backends": []string{}}},
		{"/backends/weighted", "weighted_backend", map[string]any{"backends": map[string]int{child: 1}}, map[string]any{"backends": map[string]int{}}},
		{"/endpoints", "endpoint", map[string]any{"url": "https://audit.internal", "traffic_policy": "on_http_request: []"}, map[string]any{"metadata": "m"}},
	}
	want := map[string]int{}
	for _, st := range steps {
		id := a.Do(t, "POST", st.path, st.body).Expect(t, http.StatusCreated)["id"].(string)
		a.Do(t, "PATCH", st.path+"/"+id, st.patch).Expect(t, http.StatusOK)
		a.Do(t, "DELETE", st.path+"/"+id, nil).Expect(t, http.StatusNoContent)
		for _, verb := range []string{"created", "updated", "deleted"} {
			want[audit.Type(st.kind, verb)]++
		}
	}
	want[audit.Type("ip_policy", "created")]++            // the policy the rule and restriction used
	want[audit.Type("tunnel_group_backend", "created")]++ // the failover and weighted backends' child
	got := map[string]int{}
	for _, ev := range a.AuditLog(t) {
		got[ev.EventType]++
	}
	for typ, n := range want {
		if got[typ] != n {
			t.Errorf("%s recorded %d times, want %d (all: %v)", typ, got[typ], n, got)
		}
	}
}
