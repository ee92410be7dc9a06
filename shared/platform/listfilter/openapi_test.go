package listfilter_test

import (
	"net/http"
	"net/url"
	"testing"

	"tunnelapi/shared/testing/openapi"
	"tunnelapi/shared/testing/testkit"
)

// Every list takes `filter` exactly where the platform's OpenAPI description lists it: there a
// valid filter is applied, and elsewhere it is an unknown parameter (231).
func TestListFiltersFollowTheOpenAPI(t *testing.T) {
	_, a := testkit.AppAccount(t)
	checked := 0
	for _, path := range testkit.Collections("GET") {
		op, _ := openapi.Lookup("GET", path)
		res := a.Do(t, "GET", path+"?filter="+url.QueryEscape(`obj.id != ""`), nil)
		if op.Filter {
			res.Expect(t, http.StatusOK)
		} else {
			res.ExpectError(t, http.StatusBadRequest, "ERR_NGROK_231", "filter")
		}
		checked++
	}
	if checked == 0 {
		t.Fatal("no list routes checked")
	}
}
