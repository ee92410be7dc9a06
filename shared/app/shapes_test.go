package app_test

import (
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"

	"tunnelapi/shared/app"
	"tunnelapi/shared/platform/resource"
	"tunnelapi/shared/testing/testkit"
)

// sampleForm is a family's create and update bodies, taken from its sample events.
type sampleForm struct {
	Family         *resource.Descriptor
	Path           string // the collection path
	Create, Update map[string]any
	// Modules are the bodies of the item's module PUTs (<path>/{id}/<module>), by module.
	Modules map[string]map[string]any
}

// sampleForms returns the create and update bodies of every family's sample events
// (events/<dir>/), with their setups made in a's account; it fails the test if a family of
// app.Families has none (no update body for a family that serves no update).
func sampleForms(t *testing.T, a *testkit.Account) []sampleForm {
	t.Helper()
	var out []sampleForm
	for _, f := range app.Functions() {
		files, err := app.SampleFiles(root, f.Dir)
		if err != nil {
			t.Fatal(err)
		}
		vars, err := app.SampleSetup(t.Context(), f.Dir, accountCreator(t, a))
		if err != nil {
			t.Fatal(err)
		}
		forms := map[string]*sampleForm{}
		for _, file := range files {
			ev := readSample(t, file, vars)
			method, path, _ := strings.Cut(ev.RouteKey, " ")
			var body map[string]any
			if ev.Body != "" {
				if err := json.Unmarshal([]byte(ev.Body), &body); err != nil {
					t.Fatalf("%s: body: %v", file, err)
				}
			}
			coll := strings.TrimSuffix(path, "/{id}")
			if base, module, ok := strings.Cut(path, "/{id}/"); ok && method == "PUT" && forms[base] != nil && !strings.Contains(module, "/") {
				if forms[base].Modules == nil {
					forms[base].Modules = map[string]map[string]any{}
				}
				forms[base].Modules[module] = body
			}
			if strings.Contains(coll, "{") {
				continue // a sub-resource
			}
			if forms[coll] == nil {
				forms[coll] = &sampleForm{Path: coll}
			}
			switch {
			case method == "POST" && path == coll:
				forms[coll].Create = body
			case method == "PATCH" && path != coll:
				forms[coll].Update = body
			}
		}
		for _, d := range f.Families {
			if !d.Offers(resource.OpCreate) {
				continue // reported, never created through the API (tunnel sessions and tunnels)
			}
			form := forms[d.Path]
			if form == nil || form.Create == nil || (form.Update == nil) == d.Offers(resource.OpUpdate) {
				t.Fatalf("events/%s has no create sample for %s, or an update sample exactly when the family serves no update", f.Dir, d.Path)
			}
			form.Family = d
			out = append(out, *form)
		}
	}
	return out
}

// cloudEndpointMembers are the members the platform returns for every cloud endpoint, besides
// description and metadata when set, domain when the URL's host is on a reserved domain (every
// public http, https and tls endpoint's is) and tcp_addr when it is a reserved address.
var cloudEndpointMembers = []string{"id", "uri", "created_at", "updated_at", "type", "url", "public_url", "proto",
	"hostport", "bindings", "pooling_enabled", "traffic_policy"}

// Every family's responses are shaped as the platform's: description and metadata are omitted
// when empty (and present once set), in the create, get, list, update and audit forms alike;
// a cloud endpoint carries exactly its members.
func TestResponseShapes(t *testing.T) {
	_, a := testkit.AppAccount(t)
	for _, form := range sampleForms(t, a) {
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
					want := append(slices.Clone(cloudEndpointMembers), "domain")
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
