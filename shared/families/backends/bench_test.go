package backends_test

import (
	"net/http"
	"testing"

	"tunnelapi/shared/testing/benchkit"
	"tunnelapi/shared/testing/testkit"
)

// BenchmarkCycleCheck is what the cycle check costs an update: a PATCH adding a weighted child
// (one level of nesting to walk, proved in the update's transaction) against a PATCH adding a
// static child (no walk), interleaved; each starts from a failover backend without children.
func BenchmarkCycleCheck(b *testing.B) {
	_, a := testkit.AppAccount(b)
	newB := func(path string, body any) string {
		return a.Do(b, "POST", path, body).Expect(b, http.StatusCreated)["id"].(string)
	}
	st := newB("/backends/static", map[string]any{"address": "a.example.com:1"})
	w := newB("/backends/weighted", map[string]any{"backends": map[string]int{st: 1}})
	walked, plain := newB("/backends/failover", map[string]any{}), newB("/backends/failover", map[string]any{})
	patch := func(id string, children []string) func() {
		return func() {
			a.Do(b, "PATCH", "/backends/failover/"+id, map[string]any{"backends": children}).Expect(b, http.StatusOK)
		}
	}
	benchkit.CompareSetup(b, "add-weighted-child", patch(walked, []string{}), patch(walked, []string{w}), patch(plain, []string{}), patch(plain, []string{st}))
}
