package testkit

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"testing"

	"tunnelapi/shared/testing/openapi"
)

// LifecycleSpec is one family, or one form of it, to Lifecycle: what an infrastructure-as-code
// tool (the platform's Terraform provider) sends through a resource's whole life.
type LifecycleSpec struct {
	// Name names the subtest (a family, or a family and the form of it the spec creates).
	Name string
	// Path is the family's collection path, such as "/api_keys"; its update form in the
	// platform's OpenAPI (openapi.Update) is what the PATCH carries.
	Path string
	// Create returns the create body, making any prerequisites in a's account.
	Create func(t *testing.T, a *Account) any
	// Echo gives the update value of a member whose update form differs from the read (an id
	// for a read's Ref, say) from what the read returned. Without an entry a member is sent as
	// the read returned it, or as its zero value when the read omits it (as the official
	// clients decode an omitted member).
	Echo map[string]func(read map[string]any) any
	// Change is the one change the PATCH makes besides its echoes: update members and their new
	// values; ChangeWants are the read members it must change and their new values (Change
	// itself when nil). Both default to a new description.
	Change, ChangeWants map[string]any
}

// Refs of a read that an update takes as ids: EchoRef is the id of the Ref in member ("" when
// it is null, as the official clients flatten a missing Ref), EchoRefs the ids of a list of
// Refs, EchoEach each object of a list of objects with only keys.
func EchoRef(member string) func(map[string]any) any {
	return func(read map[string]any) any {
		ref, _ := read[member].(map[string]any)
		id, _ := ref["id"].(string)
		return id
	}
}

// EchoRefs is the ids of the list of Refs in member (see EchoRef).
func EchoRefs(member string) func(map[string]any) any {
	return func(read map[string]any) any {
		out := []any{}
		for _, v := range asList(read[member]) {
			ref, _ := v.(map[string]any)
			out = append(out, ref["id"])
		}
		return out
	}
}

// EchoEach is each object of the list in member with only keys (see EchoRef).
func EchoEach(member string, keys ...string) func(map[string]any) any {
	return func(read map[string]any) any {
		out := []any{}
		for _, v := range asList(read[member]) {
			obj, _ := v.(map[string]any)
			kept := map[string]any{}
			for _, k := range keys {
				kept[k] = obj[k]
			}
			out = append(out, kept)
		}
		return out
	}
}

func asList(v any) []any { l, _ := v.([]any); return l }

// lifecycleChanged is the description the default Change sets.
const lifecycleChanged = "changed by the lifecycle test"

// Lifecycle sends, as a's admin, what an infrastructure-as-code tool sends through a resource's
// life, in order: create; read; a PATCH carrying every member of the family's update form in
// the platform's OpenAPI, each set to what the read returned (Echo), plus one change; read
// again, which must equal the first read but for the change (and updated_at), as the PATCH's
// response must equal it; delete; read, which must be 404. A failing step ends the spec.
func (a *Account) Lifecycle(t *testing.T, spec LifecycleSpec) {
	form, ok := openapi.Update(spec.Path)
	if !ok {
		t.Fatalf("the platform's OpenAPI has no update form for %s/{id}", spec.Path)
	}
	change, wants := spec.Change, spec.ChangeWants
	if change == nil {
		change = map[string]any{"description": lifecycleChanged}
	}
	if wants == nil {
		wants = change
	}
	created := a.Do(t, "POST", spec.Path, spec.Create(t, a)).Expect(t, http.StatusCreated)
	id, _ := created["id"].(string)
	item := spec.Path + "/" + id
	read := a.Do(t, "GET", item, nil).Expect(t, http.StatusOK)

	body := map[string]any{}
	for _, m := range form.Members {
		switch echo, ok := spec.Echo[m.Name]; {
		case ok:
			body[m.Name] = echo(read)
		case hasKey(read, m.Name):
			body[m.Name] = read[m.Name]
		default:
			body[m.Name] = m.Zero()
		}
	}
	for k, v := range change {
		if _, ok := form.Member(k); !ok {
			t.Fatalf("change %s is not a member of the update form of %s", k, spec.Path)
		}
		body[k] = v
	}
	patched := a.Do(t, "PATCH", item, body).Expect(t, http.StatusOK)
	again := a.Do(t, "GET", item, nil).Expect(t, http.StatusOK)
	if diff := lifecycleDiff(read, again, wants); diff != "" {
		t.Errorf("PATCH %s\n%s\nread after it differs from the read before it:\n%s", item, mustJSON(body), diff)
	}
	if diff := lifecycleDiff(again, patched, nil); diff != "" {
		t.Errorf("PATCH %s response differs from the read after it:\n%s", item, diff)
	}

	res := a.Do(t, "DELETE", item, nil)
	if res.Status != http.StatusNoContent {
		t.Fatalf("DELETE %s: %d %s", item, res.Status, res.Body)
	}
	a.Do(t, "GET", item, nil).ExpectError(t, http.StatusNotFound, "", "")
}

func hasKey(m map[string]any, k string) bool { _, ok := m[k]; return ok }

// lifecycleDiff lists the members of after that differ from before, but for updated_at and
// the members of wants, which must have wants' values instead ("" when none differs).
func lifecycleDiff(before, after, wants map[string]any) string {
	keys := slices.Sorted(maps.Keys(before))
	for k := range after {
		if !hasKey(before, k) {
			keys = append(keys, k)
		}
	}
	for k := range wants {
		if !hasKey(before, k) && !hasKey(after, k) {
			keys = append(keys, k)
		}
	}
	out := ""
	for _, k := range keys {
		want, wanted := wants[k], hasKey(wants, k)
		if !wanted {
			if k == "updated_at" {
				continue
			}
			want = before[k]
		}
		if !jsonEqual(want, after[k]) || hasKey(after, k) != (wanted || hasKey(before, k)) {
			out += fmt.Sprintf("  %s: %s, want %s\n", k, mustJSON(after[k]), mustJSON(want))
		}
	}
	return out
}

// jsonEqual compares two values as JSON would carry them (a Go literal's int equals the 1.0 a
// decoded response holds).
func jsonEqual(a, b any) bool {
	var x, y any
	json.Unmarshal([]byte(mustJSON(a)), &x)
	json.Unmarshal([]byte(mustJSON(b)), &y)
	return reflect.DeepEqual(x, y)
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
