package backends_test

import (
	"net/http"
	"strings"
	"testing"

	"tunnelapi/shared/testing/testkit"
)

// Members as the platform's recorded responses carry them, where they differed once.

func TestStaticBackendIDs(t *testing.T) {
	_, a := testkit.AppAccount(t)
	got := a.Do(t, "POST", "/backends/static", map[string]any{"address": "origin.example.com:443"}).Expect(t, http.StatusCreated)
	id, _ := got["id"].(string)
	if !strings.HasPrefix(id, "bkdsc_") || got["uri"] != a.URL("/backends/static/"+id) {
		t.Fatalf("static backend id %v, uri %v: want bkdsc_…", got["id"], got["uri"])
	}
}

func TestHTTPResponseBackendHeaderNamesLowerCase(t *testing.T) {
	_, a := testkit.AppAccount(t)
	got := a.Do(t, "POST", "/backends/http_response", map[string]any{"status_code": 503,
		"headers": map[string]string{"Content-Type": "text/plain", "X-Retry-After": "60"}}).Expect(t, http.StatusCreated)
	testkit.WantMember(t, "create", got, "headers", map[string]any{"content-type": "text/plain", "x-retry-after": "60"})
	got = a.Do(t, "PATCH", "/backends/http_response/"+got["id"].(string), map[string]any{"headers": map[string]string{"X-Only": "1"}}).Expect(t, http.StatusOK)
	testkit.WantMember(t, "update", got, "headers", map[string]any{"x-only": "1"})
	a.Do(t, "POST", "/backends/http_response", map[string]any{"headers": map[string]string{"X-A": "1", "x-a": "2"}}).
		ExpectError(t, http.StatusBadRequest, "ERR_NGROK_215", "headers")
}
