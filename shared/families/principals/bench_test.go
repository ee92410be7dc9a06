package principals_test

import (
	"context"
	"net/http"
	"strconv"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"tunnelapi/shared/app"
	"tunnelapi/shared/platform/store"
	"tunnelapi/shared/testing/benchkit"
	"tunnelapi/shared/testing/testkit"
)

// BenchmarkRequestsVsBareOperations measures each request kind through the server, auth and
// audit event included, against its own DynamoDB calls replayed bare on the same DynamoDB Local
// in the same run, interleaved: the request's consistent BatchGetItem for a GET (goal: p50
// ratio ≤ 1.10), its TransactWriteItems for a create (≤ 1.15), and its read plus transaction
// for an update and a delete, replayed on a twin key so that every condition still holds.
func BenchmarkRequestsVsBareOperations(b *testing.B) {
	s := testkit.Shared(b, app.Families...)
	a := s.NewAccount(b)
	ctx := context.Background()
	newKey := func() (id, token string) {
		k := a.Do(b, "POST", "/api_keys", map[string]any{"description": "bench"}).Expect(b, http.StatusCreated)
		return k["id"].(string), k["token"].(string)
	}
	do := func(method, path string, body any, status int) {
		s.Calls.Reset()
		if res := a.Do(b, method, path, body); res.Status != status {
			b.Fatalf("%s %s: %d %s", method, path, res.Status, res.Body)
		}
	}
	read := func(subst map[string]string) {
		in := s.Calls.Last("BatchGetItem").(*dynamodb.BatchGetItemInput)
		if _, err := s.DB.Client.BatchGetItem(ctx, benchkit.ReplayBatchGet(in, subst)); err != nil {
			b.Fatal(err)
		}
	}
	n := 0
	write := func(subst map[string]string) {
		n++
		in := s.Calls.Last("TransactWriteItems").(*dynamodb.TransactWriteItemsInput)
		if _, err := s.DB.Client.TransactWriteItems(ctx, benchkit.ReplayTransact(in, subst, "#bench"+strconv.Itoa(n))); err != nil {
			b.Fatal(err)
		}
	}
	// twin maps the op's key onto the baseline's: the same kind of item in the same state.
	twin := func(id, token, id2, token2 string) map[string]string {
		return map[string]string{id: id2, store.TokenHash(token): store.TokenHash(token2)}
	}
	b.Run("get", func(b *testing.B) {
		id, _ := newKey()
		benchkit.Compare(b, "get", func() { do("GET", "/api_keys/"+id, nil, http.StatusOK) }, func() { read(nil) })
	})
	b.Run("create", func(b *testing.B) {
		benchkit.Compare(b, "create", func() { do("POST", "/api_keys", map[string]any{"description": "bench"}, http.StatusCreated) },
			func() { write(nil) })
	})
	b.Run("update", func(b *testing.B) {
		id, tok := newKey()
		id2, tok2 := newKey()
		m := twin(id, tok, id2, tok2)
		i := 0
		benchkit.Compare(b, "update", func() {
			i++
			do("PATCH", "/api_keys/"+id, map[string]any{"description": "bench " + strconv.Itoa(i)}, http.StatusOK)
		}, func() { read(m); write(m) })
	})
	b.Run("delete", func(b *testing.B) {
		var id, tok string
		var m map[string]string
		benchkit.CompareSetup(b, "delete", func() {
			var id2, tok2 string
			id, tok = newKey()
			id2, tok2 = newKey()
			m = twin(id, tok, id2, tok2)
		}, func() { do("DELETE", "/api_keys/"+id, nil, http.StatusNoContent) }, nil, func() { read(m); write(m) })
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
