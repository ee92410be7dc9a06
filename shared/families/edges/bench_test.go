package edges_test

import (
	"net/http"
	"strconv"
	"testing"

	"tunnelapi/shared/testing/benchkit"
	"tunnelapi/shared/testing/testkit"
)

// BenchmarkTLSEdgeVsBareOperations measures, through the server (auth included), GET
// /edges/tls/{id} of an edge with all five modules against its own DynamoDB call replayed bare,
// the consistent BatchGetItem of the same items (goal: p50 ratio ≤ 1.10), and a module PUT
// against its read and its one transaction replayed bare on a twin edge in the same state. It
// also reports the DynamoDB calls of each: GET 1, PUT 2 (the read, one transaction).
func BenchmarkTLSEdgeVsBareOperations(b *testing.B) {
	s, a := testkit.AppAccount(b)
	calls := func(method, path string, body any, status int) int {
		s.Calls.Reset()
		if res := a.Do(b, method, path, body); res.Status != status {
			b.Fatalf("%s %s: %d %s", method, path, res.Status, res.Body)
		}
		return s.Calls.Total()
	}
	replay := &benchkit.Replayer{DB: s.DB, Last: s.Calls.Last}
	read := func(subst map[string]string) { replay.Read(b, subst) }
	write := func(subst map[string]string) { replay.Write(b, subst) }
	b.Run("get", func(b *testing.B) {
		edge, _ := tls.full(b, a)
		path := "/edges/tls/" + edge["id"].(string)
		if got := calls("GET", path, nil, http.StatusOK); got != 1 {
			b.Fatalf("GET with every module made %d DynamoDB calls, want 1", got)
		}
		benchkit.Compare(b, "get", func() { calls("GET", path, nil, http.StatusOK) }, func() { read(nil) })
		b.ReportMetric(float64(calls("GET", path, nil, http.StatusOK)), "get-calls")
	})
	b.Run("module_put", func(b *testing.B) {
		edge, mods := tls.full(b, a)
		twin := tls.create(b, a, map[string]any{})
		for name, m := range mods {
			a.Do(b, "PUT", "/edges/tls/"+twin["id"].(string)+"/"+name, m.body).Expect(b, http.StatusOK)
		}
		// The twin took as many writes as the edge, so both are at the same version.
		a.Do(b, "PATCH", "/edges/tls/"+edge["id"].(string), map[string]any{"description": "bench"}).Expect(b, http.StatusOK)
		for range len(mods) - 1 {
			a.Do(b, "PATCH", "/edges/tls/"+edge["id"].(string), map[string]any{"description": "bench"}).Expect(b, http.StatusOK)
		}
		subst := map[string]string{edge["id"].(string): twin["id"].(string)}
		path := "/edges/tls/" + edge["id"].(string) + "/traffic_policy"
		i := 0
		body := func() any {
			i++
			return map[string]any{"value": tcpPolicy + "# " + strconv.Itoa(i) + "\n"}
		}
		if got := calls("PUT", path, body(), http.StatusOK); got != 2 {
			b.Fatalf("module PUT made %d DynamoDB calls %v, want 2", got, s.Calls.ByName())
		}
		read(subst)
		write(subst)
		benchkit.Compare(b, "module_put", func() { calls("PUT", path, body(), http.StatusOK) }, func() { read(subst); write(subst) })
		b.ReportMetric(float64(s.Calls.ByName()["TransactWriteItems"]), "put-transactions")
	})
}
