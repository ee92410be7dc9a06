package resource_test

import (
	"encoding/json"
	"testing"

	"tunnelapi/shared/testing/openapi"
	"tunnelapi/shared/testing/testkit"
)

// Every field of a create form in the platform's OpenAPI is accepted by the create route: a
// client sending it must never get 214 (unknown field), whatever the value's own validity.
func TestCreateFormsAcceptEveryDocumentedField(t *testing.T) {
	_, a := testkit.AppAccount(t)
	checked := 0
	for _, path := range testkit.Collections("POST") {
		form, _ := openapi.Create(path)
		for _, m := range form.Members {
			res := a.Do(t, "POST", path, map[string]any{m.Name: m.Zero()})
			var env struct {
				Code string `json:"error_code"`
			}
			json.Unmarshal(res.Body, &env)
			if res.Status >= 500 || env.Code == "ERR_NGROK_214" {
				t.Errorf("POST %s with documented field %q: %d %s", path, m.Name, res.Status, res.Body)
			}
			checked++
		}
	}
	if checked == 0 {
		t.Fatal("no create fields checked")
	}
}
