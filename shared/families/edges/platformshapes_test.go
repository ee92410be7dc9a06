package edges_test

import (
	"net/http"
	"testing"

	"tunnelapi/shared/testing/testkit"
)

// Members as the platform's recorded responses carry them, where they differed once.

func TestEdgesCarryRetiredPolicyAndNullHostports(t *testing.T) {
	_, a := testkit.AppAccount(t)
	for _, path := range []string{"/edges/tls", "/edges/tcp"} {
		got := a.Do(t, "POST", path, map[string]any{"description": "no hostports"}).Expect(t, http.StatusCreated)
		testkit.WantMember(t, path, got, "policy", nil)
		testkit.WantMember(t, path, got, "hostports", nil)
		got = a.Do(t, "GET", path+"/"+got["id"].(string), nil).Expect(t, http.StatusOK)
		testkit.WantMember(t, path+" read", got, "policy", nil)
		testkit.WantMember(t, path+" read", got, "hostports", nil)
	}
	edge := a.Do(t, "POST", "/edges/https", map[string]any{}).Expect(t, http.StatusCreated)
	if hp, ok := edge["hostports"].([]any); !ok || len(hp) != 0 {
		t.Errorf("an HTTPS edge without hostports: hostports %v, want []", edge["hostports"])
	}
	route := a.Do(t, "POST", "/edges/https/"+edge["id"].(string)+"/routes", map[string]any{"match_type": "path_prefix", "match": "/"}).Expect(t, http.StatusCreated)
	testkit.WantMember(t, "HTTPS route", route, "policy", nil)
}
