package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"

	"tunnelapi/shared/rules/trafficpolicy/policytest"
	"tunnelapi/shared/testing/testkit"
)

// Request tricks beside a request's path value, query and body (bits of trick), used by
// FuzzAllRoutes and the campaign.
const (
	// trickTwoAuth sends the Authorization header twice.
	trickTwoAuth = 1 << iota
	// trickRawPath puts the path value into the path unescaped ("..", "/", "%2e" as they are).
	trickRawPath
)

// campaignInput is one input of the adversarial campaign the API was hardened against, with
// the answer it must get.
type campaignInput struct {
	name                   string
	route                  string // "METHOD pattern", as testkit.AppRoutes lists it
	pathValue, query, body string
	trick                  uint8
	// needs is the collection whose new resource's id is the path value (set by the table
	// test, which creates it first; FuzzAllRoutes leaves such inputs out of its seeds).
	needs  string
	status int
	code   string // expected error_code when set
	field  string // expected details.field when set
}

const someKey = "ak_2BxzRWYdf4fWcQOi6JZ7zaSN6Tc"

// prerequisite is the create body of the collection at path that campaign inputs need; an
// endpoint is one label under parent, a wildcard the account has reserved.
func prerequisite(path, parent string) string {
	return map[string]string{
		"/endpoints":   `{"url":"https://patched.` + parent + `","traffic_policy":"on_http_request: []"}`,
		"/credentials": `{"acl":["bind:x.example.com"]}`,
	}[path]
}

// campaign lists the inputs the campaign reported, each with its answer: the CPU-heavy
// policies, the items too large to store, long id lists, what strict decoding refuses,
// non-canonical paths, two Authorization headers and malformed filters get their 4xx naming
// the field; the large valid documents are stored (201 or 200), never a 5xx. Its endpoints are
// one label under parent, a wildcard the account has reserved.
func campaign(parent string) []campaignInput {
	nested := strings.Repeat("[", 246) + "1" + strings.Repeat("]", 246)
	celPolicy := `{"on_http_request":[{"expressions":["size(` + nested + `) > 0","size(` + nested + `) > 0"],"actions":[{"type":"deny"}]}]}`
	var celLarge string
	for _, c := range policytest.Cases() {
		if c.Name == "campaign: nested list expressions (250 KB)" {
			celLarge = c.Doc
		}
	}
	rules := make([]string, 20000)
	for i := range rules {
		rules[i] = fmt.Sprintf("bind:host-%05d.example.com", i)
	}
	policyIDs := make([]string, 29000)
	for i := range policyIDs {
		policyIDs[i] = "ipp_2BxzRWYdf4fWcQOi6JZ7zaSN6Tc"
	}
	endpoint := func(host, policy string) string {
		return `{"url":"https://` + host + `.` + parent + `","traffic_policy":` + testkit.JSONString(policy) + `}`
	}
	policy := func(p string) string { return `{"traffic_policy":` + testkit.JSONString(p) + `}` }
	html152 := policytest.CustomResponse(policytest.HTMLPage(152 << 10))
	html250 := policytest.CustomResponse(policytest.HTMLPage(250_000))
	html250KiB := policytest.CustomResponse(policytest.HTMLPage(250 << 10)) // over the 256 KiB document limit
	return []campaignInput{
		{name: "nested CEL lists (578 bytes)", route: "POST /endpoints", body: endpoint("cel", celPolicy), status: 400, field: "traffic_policy"},
		{name: "nested CEL lists (578 bytes), update", route: "PATCH /endpoints/{id}", needs: "/endpoints", body: policy(celPolicy), status: 400, field: "traffic_policy"},
		{name: "nested CEL lists (250 KB)", route: "POST /endpoints", body: endpoint("cel-large", celLarge), status: 400, field: "traffic_policy"},
		{name: "nested CEL lists (250 KB), update", route: "PATCH /endpoints/{id}", needs: "/endpoints", body: policy(celLarge), status: 400, field: "traffic_policy"},
		{name: "152 KiB HTML custom response", route: "POST /endpoints", body: endpoint("html", html152), status: 201},
		{name: "152 KiB HTML custom response, update", route: "PATCH /endpoints/{id}", needs: "/endpoints", body: policy(html152), status: 200},
		{name: "250 KB HTML custom response", route: "POST /endpoints", body: endpoint("html-large", html250), status: 201},
		{name: "250 KB HTML custom response, update", route: "PATCH /endpoints/{id}", needs: "/endpoints", body: policy(html250), status: 200},
		{name: "250 KiB HTML custom response", route: "POST /endpoints", body: endpoint("html-kib", html250KiB), status: 400, field: "traffic_policy"},
		{name: "250 KiB HTML custom response, update", route: "PATCH /endpoints/{id}", needs: "/endpoints", body: policy(html250KiB), status: 400, field: "traffic_policy"},
		{name: "20,000 ACL rules", route: "POST /credentials", body: `{"acl":` + marshal(rules) + `}`, status: 400, code: "ERR_NGROK_215", field: "acl"},
		{name: "20,000 ACL rules, update", route: "PATCH /credentials/{id}", needs: "/credentials", body: `{"acl":` + marshal(rules) + `}`,
			status: 400, code: "ERR_NGROK_215", field: "acl"},
		{name: "29,000 ip_policy_ids", route: "POST /ip_restrictions", body: `{"type":"dashboard","ip_policy_ids":` + marshal(policyIDs) + `}`,
			status: 400, field: "ip_policy_ids"},
		{name: "member name in capitals", route: "POST /api_keys", body: `{"DESCRIPTION":"x"}`, status: 400, code: "ERR_NGROK_214", field: "DESCRIPTION"},
		{name: "member name by Unicode folding", route: "POST /api_keys", body: `{"de\u017fcription":"x"}`,
			status: 400, code: "ERR_NGROK_214", field: "deſcription"},
		{name: "duplicate members", route: "POST /credentials", body: `{"description":"a","description":"b"}`, status: 400, code: "ERR_NGROK_213", field: "description"},
		{name: "NUL in a string", route: "POST /bot_users", body: `{"name":"a\u0000b"}`, status: 400, code: "ERR_NGROK_215", field: "name"},
		{name: "lone surrogate", route: "POST /ip_policies", body: `{"description":"\ud800"}`, status: 400, code: "ERR_NGROK_213", field: "description"},
		{name: "dot-dot path", route: "DELETE /credentials/{id}", pathValue: "../api_keys/" + someKey, trick: trickRawPath, status: 404},
		{name: "empty path segment", route: "GET /api_keys/{id}", pathValue: "/" + someKey, trick: trickRawPath, status: 404},
		{name: "encoded dot-dot", route: "GET /endpoints/{id}", pathValue: "%2e%2e", trick: trickRawPath, status: 404},
		{name: "two Authorization headers", route: "GET /api_keys", trick: trickTwoAuth, status: 400, code: "ERR_NGROK_201", field: "Authorization"},
		{name: "filter with an invalid escape", route: "GET /credentials", query: `filter=obj.description%20%3D%3D%20%22%5Cq%22`,
			status: 400, code: "ERR_NGROK_250", field: "filter"},
		{name: "filter with invalid UTF-8", route: "GET /credentials", query: `filter=obj.description%20%3D%3D%20%22%FF%22`,
			status: 400, code: "ERR_NGROK_250", field: "filter"},
		{name: "filter with a malformed number", route: "GET /credentials", query: `filter=obj.created_at%20%3D%3D%201.2.3`,
			status: 400, code: "ERR_NGROK_250", field: "filter"},
	}
}

// send makes one request of route ("METHOD pattern") with its path values set to pathValue,
// query and body (for methods that take one), and tricks; it fails the test on a 5xx or an
// error that is not a well-formed envelope whose status_code matches the response and whose
// details carry the operation id.
func send(t *testing.T, a *testkit.Account, route, pathValue, query, body string, trick uint8) *testkit.Response {
	t.Helper()
	method, pattern, _ := strings.Cut(route, " ")
	value := url.PathEscape(pathValue)
	if trick&trickRawPath != 0 {
		value = pathSafe(pathValue)
	}
	path := pattern
	for strings.Contains(path, "{") {
		i, j := strings.IndexByte(path, '{'), strings.IndexByte(path, '}')
		path = path[:i] + value + path[j+1:]
	}
	if query != "" {
		path += "?" + requestLineSafe(query)
	}
	var b any
	if method == "POST" || method == "PATCH" || method == "PUT" {
		b = body
	}
	var headers http.Header
	if trick&trickTwoAuth != 0 {
		headers = http.Header{"Authorization": {"Bearer " + a.Token, "Bearer " + a.Token}}
	}
	res := a.DoWith(t, method, path, headers, b)
	if res.Status >= 500 {
		t.Fatalf("%s %s %.300q: %d %s", method, path, body, res.Status, res.Body)
	}
	if res.Status >= 400 {
		var env struct {
			StatusCode *int              `json:"status_code"`
			Msg        *string           `json:"msg"`
			Details    map[string]string `json:"details"`
		}
		if err := json.Unmarshal(res.Body, &env); err != nil || env.StatusCode == nil || *env.StatusCode != res.Status ||
			env.Msg == nil || env.Details["operation_id"] != res.Header.Get("Ngrok-Operation-Id") {
			t.Fatalf("malformed error envelope for %s %s: %s", method, path, res.Body)
		}
	}
	return res
}

// check compares res with the input's answer. A resource a valid create stored is deleted, so
// that the input can be sent again (fuzzing repeats its seeds).
func (c campaignInput) check(t *testing.T, a *testkit.Account, res *testkit.Response) {
	t.Helper()
	if c.status >= 400 {
		res.ExpectError(t, c.status, c.code, c.field)
		return
	}
	out := res.Expect(t, c.status)
	if method, pattern, _ := strings.Cut(c.route, " "); method == "POST" {
		a.Do(t, "DELETE", pattern+"/"+out["id"].(string), nil).Expect(t, http.StatusNoContent)
	}
}

// campaignLarge reports whether the campaign runs at its larger size (CAMPAIGN=large, as make
// fuzz runs it).
func campaignLarge() bool { return os.Getenv("CAMPAIGN") == "large" }

// TestCampaign replays the campaign against the real stack: every input it reported gets its
// answer, and its kinds of bad input sent to every route they apply to get a 4xx naming what
// is wrong, never a 5xx. make test runs it at a smaller size; make fuzz (CAMPAIGN=large) adds
// every adversarial policy on both policy routes, bodies over the size cap and more path forms.
func TestCampaign(t *testing.T) {
	_, a := testkit.AppAccount(t)
	parent, _ := a.ReserveWildcard(t)
	t.Run("reported inputs", func(t *testing.T) {
		for _, c := range campaign(parent) {
			t.Run(c.name, func(t *testing.T) {
				if c.needs != "" {
					created := a.Do(t, "POST", c.needs, prerequisite(c.needs, parent)).Expect(t, http.StatusCreated)
					c.pathValue = created["id"].(string)
					defer func() { a.Do(t, "DELETE", c.needs+"/"+c.pathValue, nil).Expect(t, http.StatusNoContent) }()
				}
				c.check(t, a, send(t, a, c.route, c.pathValue, c.query, c.body, c.trick))
			})
		}
	})

	routes := testkit.AppRoutes()
	// Bodies strict decoding refuses, each naming the member (or the body) at fault.
	bodies := map[string]string{
		"member name in capitals":        `{"DESCRIPTION":"x"}`,
		"member name by Unicode folding": `{"de\u017fcription":"x"}`,
		"duplicate members":              `{"description":"a","description":"b"}`,
		"NUL in a string":                `{"description":"a\u0000b"}`,
		"lone surrogate":                 `{"description":"\ud800"}`,
		"invalid UTF-8":                  "{\"description\":\"\xff\"}",
		"nested 10,000 deep":             strings.Repeat(`{"a":`, 10000) + "1" + strings.Repeat("}", 10000),
		"not an object":                  `[]`,
		"trailing data":                  `{} {}`,
	}
	pathValues := []string{"../api_keys/" + someKey, "/" + someKey, "%2e%2e", "."}
	if campaignLarge() {
		bodies["over the body cap"] = `{"description":"` + strings.Repeat("x", 1<<20) + `"}`
		bodies["deeply nested arrays"] = strings.Repeat("[", 100000) + strings.Repeat("]", 100000)
		pathValues = append(pathValues, "..", "a/../b", "..%2f"+someKey, "%2F"+someKey, "./"+someKey, someKey+"/.")
	}
	t.Run("bad bodies on every route that takes one", func(t *testing.T) {
		refused, absent := 0, 0
		// Strict decoding of each family's PATCH body, behind the lookup of an existing item, is
		// the conformance suite's (its "strict JSON" step).
		defer func() {
			t.Logf("%d refused with a 400, %d answered 404 for their path", refused, absent)
			if refused == 0 {
				t.Error("no bad body reached a decoder")
			}
		}()
		for _, route := range routes {
			method, pattern, _ := strings.Cut(route, " ")
			if method != "POST" && method != "PATCH" && method != "PUT" {
				continue
			}
			for name, body := range bodies {
				res := send(t, a, route, someKey, "", body, 0)
				// A route whose path names a resource may answer that it does not exist first.
				if res.Status == http.StatusNotFound && strings.Contains(pattern, "{") {
					absent++
					continue
				}
				refused++
				if e := res.ExpectError(t, http.StatusBadRequest, "", ""); e["details"].(map[string]any)["field"] == nil {
					t.Errorf("%s, %s: the 400 names no field: %s", route, name, res.Body)
				}
			}
		}
	})
	t.Run("non-canonical paths on every route", func(t *testing.T) {
		for _, route := range routes {
			if !strings.Contains(route, "{") {
				continue
			}
			for _, v := range pathValues {
				send(t, a, route, v, "", `{}`, trickRawPath).ExpectError(t, http.StatusNotFound, "", "")
			}
		}
	})
	t.Run("two Authorization headers on every route", func(t *testing.T) {
		for _, route := range routes {
			send(t, a, route, someKey, "", `{}`, trickTwoAuth).ExpectError(t, http.StatusBadRequest, "ERR_NGROK_201", "Authorization")
		}
	})
	if !campaignLarge() {
		return
	}
	t.Run("adversarial policies on both policy routes", func(t *testing.T) {
		ep := a.Do(t, "POST", "/endpoints", prerequisite("/endpoints", parent)).Expect(t, http.StatusCreated)["id"].(string)
		for i, c := range policytest.Cases() {
			for _, req := range []struct{ route, pathValue, body string }{
				{"POST /endpoints", "", `{"url":"https://adversarial-` + fmt.Sprint(i) + `.` + parent + `","traffic_policy":` + testkit.JSONString(c.Doc) + `}`},
				{"PATCH /endpoints/{id}", ep, `{"traffic_policy":` + testkit.JSONString(c.Doc) + `}`},
			} {
				res := send(t, a, req.route, req.pathValue, "", req.body, 0)
				switch {
				case res.Status == http.StatusCreated:
					a.Do(t, "DELETE", "/endpoints/"+res.JSON(t)["id"].(string), nil).Expect(t, http.StatusNoContent)
				case res.Status == http.StatusOK:
				default:
					res.ExpectError(t, http.StatusBadRequest, "", "traffic_policy")
				}
			}
		}
	})
}

func marshal(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}
