package operator_test

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"tunnelapi/shared/testing/testkit"
	"tunnelapi/shared/workers/operator"
	"tunnelapi/shared/workers/usage"
)

// The operator reads a tenant's usage by day as the usage package sums it from the requests'
// usage lines, and today's in the tenant's get; the CSV export has the same figures; a range
// that is not one is a 400 naming its field, an unknown tenant a 404.
func TestOperatorReadsATenantsUsage(t *testing.T) {
	s, a := testkit.AppAccount(t)
	srv := operatorServer(t, s)
	pol := a.Do(t, "POST", "/ip_policies", map[string]any{"description": "billed"}).Expect(t, http.StatusCreated)["id"].(string)
	a.Do(t, "GET", "/ip_policies/"+pol, nil).Expect(t, http.StatusOK)
	a.Do(t, "GET", "/api_keys/ak_2BxzRWYdf4fWcQOi6JZ7zaSN6Tc", nil).Expect(t, http.StatusNotFound)
	if err := s.Usage.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	today := time.Now().UTC().Format(usage.DayFormat)
	status, out := operatorDo(t, srv, operatorCreds, "", "GET", "/operator/tenants/"+a.AccountID+"/usage?from="+today+"&to="+today, nil)
	var u operator.Usage
	if err := json.Unmarshal(out, &u); status != http.StatusOK || err != nil || len(u.Days) != 1 {
		t.Fatalf("usage: %d %s", status, out)
	}
	want := map[string]map[string]int64{"ip_policies": {"2xx": 2}, "api_keys": {"4xx": 1}}
	d := u.Days[0]
	if u.TenantID != a.AccountID || d.Day != today || !reflect.DeepEqual(d.Requests, want) || d.Mutations != 1 || d.ItemsStored != 1 ||
		d.ReadUnits <= 0 || d.WriteUnits <= 0 {
		t.Fatalf("usage %+v, want requests %v, 1 mutation, 1 item and capacity", u, want)
	}
	status, out = operatorDo(t, srv, operatorCreds, "", "GET", "/operator/tenants/"+a.AccountID, nil)
	var got operator.Tenant
	if err := json.Unmarshal(out, &got); status != http.StatusOK || err != nil || got.UsageToday == nil || !reflect.DeepEqual(*got.UsageToday, d) {
		t.Fatalf("get: %d %s, want usage_today %+v", status, out, d)
	}
	var csv strings.Builder
	if err := usage.WriteCSV(&csv, a.AccountID, u.Days, true); err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(strings.TrimSpace(csv.String()), "\n"); len(lines) != 2 ||
		!strings.HasPrefix(lines[1], a.AccountID+","+today+",3,2,1,0,1,0,0,1,") {
		t.Fatalf("csv:\n%s", csv.String())
	}
	for q, field := range map[string]string{"?from=yesterday": "from", "?to=2026-13-01": "to", "?from=2026-02-01&to=2026-01-01": "from",
		"?from=2020-01-01&to=2026-01-01": "from"} {
		status, out := operatorDo(t, srv, operatorCreds, "", "GET", "/operator/tenants/"+a.AccountID+"/usage"+q, nil)
		var env struct {
			Details map[string]string `json:"details"`
		}
		if err := json.Unmarshal(out, &env); status != http.StatusBadRequest || err != nil || env.Details["field"] != field {
			t.Errorf("%s: %d %s, want a 400 naming %s", q, status, out, field)
		}
	}
	if status, out := operatorDo(t, srv, operatorCreds, "", "GET", "/operator/tenants/acct_2BxzRWYdf4fWcQOi6JZ7zaSN6Tc/usage", nil); status != http.StatusNotFound {
		t.Errorf("an unknown tenant's usage: %d %s", status, out)
	}
}
