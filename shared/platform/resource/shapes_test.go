package resource_test

import (
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"

	"tunnelapi/shared/platform/resource"
	"tunnelapi/shared/testing/testkit"
)

// root is the checkout, from this package.
const root = "../../.."

// Every family's responses are shaped as the platform's: description and metadata are omitted
// when empty (and present once set), in the create, get, list, update and audit forms alike;
// a cloud endpoint carries exactly its members.
func TestResponseShapes(t *testing.T) {
	_, a := testkit.AppAccount(t)
	for _, form := range testkit.SampleForms(t, root, a) {
		t.Run(strings.TrimPrefix(form.Path, "/"), func(t *testing.T) {
			create := maps.Clone(form.Create)
			delete(create, "description")
			delete(create, "metadata")
			created := a.Do(t, "POST", form.Path, create).Expect(t, http.StatusCreated)
			id := created["id"].(string)
			item := form.Path + "/" + id
			// views returns the item as each read shows it: get and its entry in the list.
			views := func() map[string]map[string]any {
				out := map[string]map[string]any{"get": a.Do(t, "GET", item, nil).Expect(t, http.StatusOK)}
				if !form.Family.Offers(resource.OpList) {
					return out
				}
				list := a.Do(t, "GET", form.Path, nil).Expect(t, http.StatusOK)
				for _, v := range list {
					if items, ok := v.([]any); ok {
						for _, it := range items {
							if m := it.(map[string]any); m["id"] == id {
								out["list"] = m
							}
						}
					}
				}
				if out["list"] == nil {
					t.Fatalf("%s not in the list", id)
				}
				return out
			}
			expect := func(when string, v map[string]any, description, metadata string) {
				t.Helper()
				for member, want := range map[string]string{"description": description, "metadata": metadata} {
					got, present := v[member]
					if want == "" && present || want != "" && got != want {
						t.Errorf("%s: %s is %v (present %v), want %q omitted when empty", when, member, got, present, want)
					}
				}
				if form.Path == "/endpoints" {
					keys := slices.Sorted(maps.Keys(v))
					// The sample's URL is public, on the domain its setup reserved.
					want := append(slices.Clone(testkit.CloudEndpointMembers), "domain")
					if description != "" {
						want = append(want, "description")
					}
					if metadata != "" {
						want = append(want, "metadata")
					}
					if slices.Sort(want); !slices.Equal(keys, want) {
						t.Errorf("%s: cloud endpoint members %v, want %v", when, keys, want)
					}
				}
			}
			expect("create", created, "", "")
			for name, v := range views() {
				expect(name, v, "", "")
			}
			if !form.Family.Offers(resource.OpUpdate) {
				return
			}
			res := a.Do(t, "PATCH", item, map[string]any{"description": "set", "metadata": `{"k":"v"}`})
			if res.Status == http.StatusBadRequest && res.JSON(t)["error_code"] == "ERR_NGROK_214" {
				// A family without free text (bot users) never shows the members.
				return
			}
			expect("update setting both", res.Expect(t, http.StatusOK), "set", `{"k":"v"}`)
			for name, v := range views() {
				expect(name+" after setting both", v, "set", `{"k":"v"}`)
			}
			// A supplied empty string is a real value: stored, and then omitted like any empty one.
			expect("update clearing both", a.Do(t, "PATCH", item, map[string]any{"description": "", "metadata": ""}).Expect(t, http.StatusOK), "", "")
			for name, v := range views() {
				expect(name+" after clearing both", v, "", "")
			}
		})
	}
}
