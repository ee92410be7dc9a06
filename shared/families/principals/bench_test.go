package principals_test

import (
	"context"
	"net/http"
	"testing"

	"tunnelapi/shared/app"
	"tunnelapi/shared/platform/store"
	"tunnelapi/shared/testing/benchkit"
	"tunnelapi/shared/testing/testkit"
)

// BenchmarkGetAPIKeyVsGetItem: GET /api_keys/{id} through the server, auth included, against a
// bare consistent GetItem of the same item on the same DynamoDB Local (goal: p50 ratio ≤ 1.3).
func BenchmarkGetAPIKeyVsGetItem(b *testing.B) {
	s := testkit.Shared(b, app.Families...)
	a := s.NewAccount(b)
	k := a.Do(b, "POST", "/api_keys", map[string]any{"description": "bench"}).Expect(b, http.StatusCreated)
	path := "/api_keys/" + k["id"].(string)
	key := store.ResourceKey(a.AccountID, k["id"].(string))
	ctx := context.Background()
	var item struct{}
	benchkit.Compare(b, "get", func() {
		if res := a.Do(b, "GET", path, nil); res.Status != http.StatusOK {
			b.Fatalf("GET: %d", res.Status)
		}
	}, func() {
		if err := s.DB.Get(ctx, key, &item); err != nil {
			b.Fatal(err)
		}
	})
}

// BenchmarkRoundTrips reports DynamoDB calls per request for each operation (goal: get 1,
// list 1 on the critical path, create 1, update and delete at most 2).
func BenchmarkRoundTrips(b *testing.B) {
	s := testkit.Shared(b, app.Families...)
	a := s.NewAccount(b)
	a.Do(b, "GET", "/api_keys", nil).Expect(b, http.StatusOK) // warm the token hint
	var get, list, create, update, del int
	for i := 0; i < b.N; i++ {
		s.Calls.Reset()
		k := a.Do(b, "POST", "/api_keys", map[string]any{}).Expect(b, http.StatusCreated)
		create += s.Calls.Total()
		p := "/api_keys/" + k["id"].(string)
		s.Calls.Reset()
		a.Do(b, "GET", p, nil).Expect(b, http.StatusOK)
		get += s.Calls.Total()
		s.Calls.Reset()
		a.Do(b, "GET", "/api_keys?limit=10", nil).Expect(b, http.StatusOK)
		list += s.Calls.Total()
		s.Calls.Reset()
		a.Do(b, "PATCH", p, map[string]any{"description": "x"}).Expect(b, http.StatusOK)
		update += s.Calls.Total()
		s.Calls.Reset()
		a.Do(b, "DELETE", p, nil).Expect(b, http.StatusNoContent)
		del += s.Calls.Total()
	}
	n := float64(b.N)
	b.ReportMetric(float64(get)/n, "get-calls")
	b.ReportMetric(float64(list)/n, "list-calls(parallel)")
	b.ReportMetric(float64(create)/n, "create-calls")
	b.ReportMetric(float64(update)/n, "update-calls")
	b.ReportMetric(float64(del)/n, "delete-calls")
}
