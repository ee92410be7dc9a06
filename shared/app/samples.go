package app

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"tunnelapi/shared/platform/resource"
)

// The sample events of a function are events/<Dir>/*.json: in name order, one walk through its
// routes (create, list, get, update, delete, …), each answered with SampleStatus of its method.
// They hold placeholders: TokenPlaceholder (a bearer token), IDPlaceholder (the id the walk's
// create returned), ChildIDPlaceholder and ParentIDPlaceholder (the id the walk's create of a
// sub-resource returned, such as an HTTPS edge's route, and the id of the resource it is under)
// and the ones the function's set-up fills (SetupFile).
const (
	TokenPlaceholder    = "{{token}}"
	IDPlaceholder       = "{{id}}"
	ChildIDPlaceholder  = "{{child_id}}"
	ParentIDPlaceholder = "{{parent_id}}"
)

// SetupFile is the name of a function's set-up in its folder of sample events: what its samples
// refer to besides their own resource, as data that package samples (shared/testing/samples)
// interprets. It is no sample event.
const SetupFile = "setup.json"

// CreatedIDPlaceholder is the placeholder the id created by a POST to the route pattern path
// fills: ChildIDPlaceholder under a path that names a parent, else IDPlaceholder.
func CreatedIDPlaceholder(path string) string {
	if strings.Contains(path, "{") {
		return ChildIDPlaceholder
	}
	return IDPlaceholder
}

// SampleCreated records in vars the id a sample's 201 answer created (body, the answer's JSON),
// for the samples after it: under CreatedIDPlaceholder of the sample's route (routeKey, "POST
// /path"), and for a sub-resource also the resource it is under as ParentIDPlaceholder. It
// returns the id, "" when the body has none.
func SampleCreated(vars map[string]string, routeKey string, body []byte) string {
	var created struct {
		ID string `json:"id"`
	}
	if json.Unmarshal(body, &created) != nil || created.ID == "" {
		return ""
	}
	_, path, _ := strings.Cut(routeKey, " ")
	if CreatedIDPlaceholder(path) == IDPlaceholder {
		vars[IDPlaceholder] = created.ID
	} else {
		vars[ChildIDPlaceholder], vars[ParentIDPlaceholder] = created.ID, vars[IDPlaceholder]
	}
	return created.ID
}

// TenantCreated records in vars, as IDPlaceholder, the tenant an operator sample's 201 answer
// names (body, the answer's JSON: {"tenant": {"id": …}, …}), for the samples after it; it
// returns the id, "" when the body has none.
func TenantCreated(vars map[string]string, body []byte) string {
	var created struct {
		Tenant struct {
			ID string `json:"id"`
		} `json:"tenant"`
	}
	if json.Unmarshal(body, &created) != nil || created.Tenant.ID == "" {
		return ""
	}
	vars[IDPlaceholder] = created.Tenant.ID
	return created.Tenant.ID
}

// SampleFiles returns the sample events of the function in folder dir (its set-up aside), in
// name order, under the repository root.
func SampleFiles(root, dir string) ([]string, error) {
	all, err := filepath.Glob(filepath.Join(root, "events", dir, "*.json"))
	if err != nil {
		return nil, fmt.Errorf("sample events of %s: %w", dir, err)
	}
	var files []string
	for _, f := range all {
		if filepath.Base(f) != SetupFile {
			files = append(files, f)
		}
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no sample events in events/%s", dir)
	}
	sort.Strings(files)
	return files, nil
}

// SampleStatus is the documented success status of a sample request with method.
func SampleStatus(method string) int {
	return map[string]int{"POST": 201, "GET": 200, "PATCH": 200, "PUT": 200, "DELETE": 204}[method]
}

// SampleStatusOf is the documented status of a sample request to route (its RouteKey, "POST
// /tunnel_sessions/{id}/stop") with method, served by families: SampleStatus of its method, or
// for an action on an item (a POST under an item's path) the status its route declares.
func SampleStatusOf(families []*resource.Descriptor, method, route string) int {
	if method == "POST" && strings.Count(route, "/") > 2 {
		for _, d := range families {
			if st := d.Status(route); st != 0 {
				return st
			}
		}
	}
	return SampleStatus(method)
}

// FillSample replaces each placeholder of vars in a sample event's text with its value, escaped
// for where placeholders sit: inside a JSON string (the request body) that is itself a JSON
// string of the event. Ids and tokens come out unchanged.
func FillSample(text string, vars map[string]string) string {
	for k, v := range vars {
		once, _ := json.Marshal(v)
		twice, _ := json.Marshal(string(once[1 : len(once)-1]))
		text = strings.ReplaceAll(text, k, string(twice[1:len(twice)-1]))
	}
	return text
}
