package app_test

import (
	"net/http"
	"strings"
	"testing"

	"tunnelapi/shared/testing/samltest"
	"tunnelapi/shared/testing/testkit"
)

// Members as the platform's recorded responses carry them, where they differed once.

// wantMember fails the test unless got has member with the value want (JSON null for nil).
func wantMember(t *testing.T, what string, got map[string]any, member string, want any) {
	t.Helper()
	v, ok := got[member]
	if !ok {
		t.Errorf("%s has no member %s: %v", what, member, got)
	} else if !jsonSame(v, want) {
		t.Errorf("%s: %s = %v, want %v", what, member, v, want)
	}
}

// jsonSame compares a decoded member with a Go literal as JSON carries both.
func jsonSame(got, want any) bool {
	switch w := want.(type) {
	case nil:
		return got == nil
	case string:
		return got == w
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok || len(g) != len(w) {
			return false
		}
		for k, v := range w {
			if !jsonSame(g[k], v) {
				return false
			}
		}
		return true
	}
	return false
}

func TestStaticBackendIDs(t *testing.T) {
	_, a := testkit.AppAccount(t)
	got := a.Do(t, "POST", "/backends/static", map[string]any{"address": "origin.example.com:443"}).Expect(t, http.StatusCreated)
	id, _ := got["id"].(string)
	if !strings.HasPrefix(id, "bkdsc_") || got["uri"] != a.URL("/backends/static/"+id) {
		t.Fatalf("static backend id %v, uri %v: want bkdsc_…", got["id"], got["uri"])
	}
}

func TestEdgesCarryRetiredPolicyAndNullHostports(t *testing.T) {
	_, a := testkit.AppAccount(t)
	for _, path := range []string{"/edges/tls", "/edges/tcp"} {
		got := a.Do(t, "POST", path, map[string]any{"description": "no hostports"}).Expect(t, http.StatusCreated)
		wantMember(t, path, got, "policy", nil)
		wantMember(t, path, got, "hostports", nil)
		got = a.Do(t, "GET", path+"/"+got["id"].(string), nil).Expect(t, http.StatusOK)
		wantMember(t, path+" read", got, "policy", nil)
		wantMember(t, path+" read", got, "hostports", nil)
	}
	edge := a.Do(t, "POST", "/edges/https", map[string]any{}).Expect(t, http.StatusCreated)
	if hp, ok := edge["hostports"].([]any); !ok || len(hp) != 0 {
		t.Errorf("an HTTPS edge without hostports: hostports %v, want []", edge["hostports"])
	}
	route := a.Do(t, "POST", "/edges/https/"+edge["id"].(string)+"/routes", map[string]any{"match_type": "path_prefix", "match": "/"}).Expect(t, http.StatusCreated)
	wantMember(t, "HTTPS route", route, "policy", nil)
}

func TestHTTPResponseBackendHeaderNamesLowerCase(t *testing.T) {
	_, a := testkit.AppAccount(t)
	got := a.Do(t, "POST", "/backends/http_response", map[string]any{"status_code": 503,
		"headers": map[string]string{"Content-Type": "text/plain", "X-Retry-After": "60"}}).Expect(t, http.StatusCreated)
	wantMember(t, "create", got, "headers", map[string]any{"content-type": "text/plain", "x-retry-after": "60"})
	got = a.Do(t, "PATCH", "/backends/http_response/"+got["id"].(string), map[string]any{"headers": map[string]string{"X-Only": "1"}}).Expect(t, http.StatusOK)
	wantMember(t, "update", got, "headers", map[string]any{"x-only": "1"})
	a.Do(t, "POST", "/backends/http_response", map[string]any{"headers": map[string]string{"X-A": "1", "x-a": "2"}}).
		ExpectError(t, http.StatusBadRequest, "ERR_NGROK_215", "headers")
}

func TestSAMLModuleIdPMetadataURL(t *testing.T) {
	_, a := testkit.AppAccount(t)
	edge := a.Do(t, "POST", "/edges/https", map[string]any{}).Expect(t, http.StatusCreated)["id"].(string)
	route := a.Do(t, "POST", "/edges/https/"+edge+"/routes", map[string]any{"match_type": "path_prefix", "match": "/",
		"saml": map[string]any{"idp_metadata": samltest.IdPMetadata(t)}}).Expect(t, http.StatusCreated)
	saml, _ := route["saml"].(map[string]any)
	wantMember(t, "saml module", saml, "idp_metadata_url", "")
}
