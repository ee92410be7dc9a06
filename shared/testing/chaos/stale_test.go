package chaos

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/anishathalye/porcupine"
)

// staleCache answers a GET of one resource with the first answer it saw for it, forever: a
// read served from a stale cache, which the service must never do.
func staleCache(next http.Handler) http.Handler {
	var mu sync.Mutex
	seen := map[string]*httptest.ResponseRecorder{}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || strings.Count(r.URL.Path, "/") != 2 {
			next.ServeHTTP(w, r)
			return
		}
		mu.Lock()
		rec, ok := seen[r.URL.Path]
		mu.Unlock()
		if !ok {
			rec = httptest.NewRecorder()
			next.ServeHTTP(rec, r)
			if rec.Code == http.StatusOK {
				mu.Lock()
				seen[r.URL.Path] = rec
				mu.Unlock()
			}
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		w.Write(bytes.Clone(rec.Body.Bytes()))
	})
}

// The checker is known to work: a service that serves reads from a stale cache, with no fault
// at all, records a history porcupine finds not linearizable.
func TestCheckerCatchesStaleReads(t *testing.T) {
	f := newFaulty(t, staleCache)
	h := newHistory(t, f, f.stack.NewAccount(t))
	h.record(*clients, *operations)
	if res := check(t, "stale-cache", h.ops); res != porcupine.Illegal {
		t.Fatalf("a history with reads from a stale cache is %q, want %q", res, porcupine.Illegal)
	}
}
