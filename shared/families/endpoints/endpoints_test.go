package endpoints_test

import (
	"fmt"
	"maps"
	"net/http"
	"strings"
	"testing"
	"time"

	"tunnelapi/shared/families/endpoints"
	"tunnelapi/shared/testing/testkit"
)

// pathEndpoints is the collection path, from the descriptor.
var pathEndpoints = endpoints.EndpointsDescriptor.Path

const policy = "on_http_request:\n  - actions:\n      - type: deny\n        config:\n          status_code: 404\n"

func TestMain(m *testing.M) { testkit.Main(m) }

func TestEndpointsConformance(t *testing.T) {
	s := testkit.App(t)
	s.Conformance(t, testkit.FamilySpec{
		Family: endpoints.EndpointsDescriptor,
		Create: func(t *testing.T, a *testkit.Account, n int) any {
			url := "https://conformance.example.com"
			if n > 0 {
				url = fmt.Sprintf("https://conformance-%d.example.com", n)
			}
			return map[string]any{"url": url, "type": "cloud", "traffic_policy": policy, "description": "d"}
		},
		Update:      map[string]any{"metadata": "m", "pooling_enabled": true},
		UpdateWants: map[string]any{"metadata": "m", "pooling_enabled": true, "description": "d", "url": "https://conformance.example.com"},
		// The URL's host is on no reservation: the create assumes so in its one transaction
		// (TestEndpointOnReservedDomainWarm measures one that is).
	})
}

func TestEndpointShape(t *testing.T) {
	_, a := testkit.AppAccount(t)
	doc := `{"on_http_request":[{"expressions":["req.url.path == '/x'"],"actions":[{"type":"custom-response","config":{"status_code":503}}]}]}`
	e := a.Do(t, "POST", pathEndpoints, map[string]any{"url": "HTTPS://Shape.Example.com:443", "traffic_policy": doc}).Expect(t, 201)
	want := map[string]any{"url": "https://shape.example.com", "public_url": "https://shape.example.com", "proto": "https",
		"hostport": "shape.example.com:443", "type": "cloud", "traffic_policy": doc, "pooling_enabled": false}
	for k, v := range want {
		if fmt.Sprint(e[k]) != fmt.Sprint(v) {
			t.Errorf("%s = %v, want %v", k, e[k], v)
		}
	}
	if b := e["bindings"].([]any); len(b) != 1 || b[0] != "public" {
		t.Errorf("bindings %v", b)
	}
	in := a.Do(t, "POST", pathEndpoints, map[string]any{"url": "tcp://db.internal:5432", "traffic_policy": "on_tcp_connect: []"}).Expect(t, 201)
	if b := in["bindings"].([]any); len(b) != 1 || b[0] != "internal" || in["hostport"] != "db.internal:5432" || in["proto"] != "tcp" {
		t.Errorf("internal endpoint %v", in)
	}
	// The document is stored exactly as given.
	got := a.Do(t, "GET", pathEndpoints+"/"+e["id"].(string), nil).Expect(t, 200)
	if got["traffic_policy"] != doc {
		t.Errorf("traffic_policy %q", got["traffic_policy"])
	}
	// List: every endpoint of the account, newest first (descending ids; KSUIDs order by second).
	ids, _ := a.WalkPages(t, pathEndpoints, endpoints.EndpointsDescriptor.ListKey)
	if len(ids) != 2 || ids[0] <= ids[1] || (ids[0] != in["id"] && ids[0] != e["id"]) || (ids[1] != in["id"] && ids[1] != e["id"]) {
		t.Errorf("list %v", ids)
	}
}

func TestEndpointBadInputsStoreNothing(t *testing.T) {
	s, a := testkit.AppAccount(t)
	e := a.Do(t, "POST", pathEndpoints, map[string]any{"url": "https://taken.example.com", "traffic_policy": policy}).Expect(t, 201)
	path := pathEndpoints + "/" + e["id"].(string)
	body := func(kv ...any) map[string]any {
		m := map[string]any{"url": "https://new.example.com", "traffic_policy": policy}
		for i := 0; i < len(kv); i += 2 {
			if kv[i+1] == nil {
				delete(m, kv[i].(string))
			} else {
				m[kv[i].(string)] = kv[i+1]
			}
		}
		return m
	}
	cases := []struct {
		name, method, path string
		body               any
		code, field        string
	}{
		{"not cloud", "POST", pathEndpoints, body("type", "ephemeral"), "ERR_NGROK_248", "type"},
		{"edge type", "POST", pathEndpoints, body("type", "edge"), "ERR_NGROK_248", "type"},
		{"no url", "POST", pathEndpoints, body("url", nil), "ERR_NGROK_249", "url"},
		{"bad scheme", "POST", pathEndpoints, body("url", "ftp://x.example.com"), "ERR_NGROK_249", "url"},
		{"path", "POST", pathEndpoints, body("url", "https://x.example.com/a"), "ERR_NGROK_249", "url"},
		{"tcp without port", "POST", pathEndpoints, body("url", "tcp://x.example.com"), "ERR_NGROK_249", "url"},
		{"internal binding on public host", "POST", pathEndpoints, body("bindings", []string{"internal"}), "ERR_NGROK_249", "url"},
		{"public binding on internal host", "POST", pathEndpoints, body("url", "https://a.internal", "bindings", []string{"public"}), "ERR_NGROK_249", "url"},
		{"two bindings", "POST", pathEndpoints, body("bindings", []string{"public", "kubernetes"}), "ERR_NGROK_215", "bindings"},
		{"unknown binding", "POST", pathEndpoints, body("bindings", []string{"private"}), "ERR_NGROK_215", "bindings"},
		{"no traffic policy", "POST", pathEndpoints, body("traffic_policy", nil), "ERR_NGROK_215", "traffic_policy"},
		{"empty traffic policy", "POST", pathEndpoints, body("traffic_policy", ""), "ERR_NGROK_215", "traffic_policy"},
		{"broken cel", "POST", pathEndpoints, body("traffic_policy", "on_http_request:\n  - expressions: ['req.method ==']\n    actions: [{type: deny}]"), "ERR_NGROK_215", "traffic_policy"},
		{"unknown action", "POST", pathEndpoints, body("traffic_policy", "on_http_request:\n  - actions: [{type: explode}]"), "ERR_NGROK_215", "traffic_policy"},
		{"unknown phase", "POST", pathEndpoints, body("traffic_policy", `{"on_request":[]}`), "ERR_NGROK_215", "traffic_policy"},
		{"taken url", "POST", pathEndpoints, body("url", "https://taken.example.com"), "ERR_NGROK_215", "url"},
		{"unknown field", "POST", pathEndpoints, body("name", "x"), "ERR_NGROK_214", "name"},
		{"patch bad url", "PATCH", path, map[string]any{"url": "https://x.example.com:99999"}, "ERR_NGROK_249", "url"},
		{"patch bad policy", "PATCH", path, map[string]any{"traffic_policy": "inbound: []"}, "ERR_NGROK_215", "traffic_policy"},
		{"patch type", "PATCH", path, map[string]any{"type": "cloud"}, "ERR_NGROK_214", "type"},
		{"patch empty", "PATCH", path, map[string]any{}, "ERR_NGROK_606", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := a.Do(t, c.method, c.path, c.body).ExpectError(t, 400, c.code, c.field)
			if c.field == "traffic_policy" && !strings.Contains(m["msg"].(string), "traffic_policy") {
				t.Errorf("message %q does not point at the problem", m["msg"])
			}
		})
	}
	if got, _ := a.WalkPages(t, pathEndpoints, endpoints.EndpointsDescriptor.ListKey); len(got) != 1 {
		t.Fatalf("%d endpoints stored, want 1", len(got))
	}
	if got := a.Do(t, "GET", path, nil).Expect(t, 200); got["url"] != "https://taken.example.com" || got["traffic_policy"] != policy {
		t.Fatalf("endpoint changed by refused input: %v", got)
	}
	// Another account may use the same URL: the guard is per account.
	s.NewAccount(t).Do(t, "POST", pathEndpoints, body("url", "https://taken.example.com")).Expect(t, 201)
}

func createConcurrently(t *testing.T, a *testkit.Account, n int, url string, pooling bool) (created []string, refused int) {
	body := map[string]any{"url": url, "traffic_policy": policy, "pooling_enabled": pooling}
	for _, res := range a.RaceWith(t, n, "POST", pathEndpoints, nil, body) {
		switch res.Status {
		case 201:
			created = append(created, res.JSON(t)["id"].(string))
		case 400:
			refused++
		default:
			t.Errorf("status %d: %s", res.Status, res.Body)
		}
	}
	return created, refused
}

// The URL uniqueness and pooling rule holds under 20 concurrent creates of the same URL.
func TestEndpointURLUniquenessUnderConcurrency(t *testing.T) {
	_, a := testkit.AppAccount(t)
	created, refused := createConcurrently(t, a, 20, "https://race.example.com", false)
	if len(created) != 1 || refused != 19 {
		t.Fatalf("non-pooling: %d created, %d refused; want 1 and 19", len(created), refused)
	}
	// Pooling creates cannot join a URL held by a non-pooling endpoint.
	if c, r := createConcurrently(t, a, 3, "https://race.example.com", true); len(c) != 0 || r != 3 {
		t.Fatalf("pooling onto a non-pooling URL: %d created", len(c))
	}
	a.Do(t, "DELETE", pathEndpoints+"/"+created[0], nil).Expect(t, 204)

	pooled, refused := createConcurrently(t, a, 20, "https://race.example.com", true)
	if len(pooled) != 20 || refused != 0 {
		t.Fatalf("pooling: %d created, %d refused; want 20 and 0", len(pooled), refused)
	}
	if c, _ := createConcurrently(t, a, 1, "https://race.example.com", false); len(c) != 0 {
		t.Fatal("a non-pooling endpoint joined a pooled URL")
	}
	// Pooling cannot be turned off while others share the URL.
	a.Do(t, "PATCH", pathEndpoints+"/"+pooled[0], map[string]any{"pooling_enabled": false}).ExpectError(t, 400, "ERR_NGROK_215", "pooling_enabled")
	for _, id := range pooled[1:] {
		a.Do(t, "DELETE", pathEndpoints+"/"+id, nil).Expect(t, 204)
	}
	a.Do(t, "PATCH", pathEndpoints+"/"+pooled[0], map[string]any{"pooling_enabled": false}).Expect(t, 200)
	if c, _ := createConcurrently(t, a, 1, "https://race.example.com", true); len(c) != 0 {
		t.Fatal("a pooling endpoint joined a URL whose only endpoint stopped pooling")
	}
	// Moving the URL frees the old one.
	a.Do(t, "PATCH", pathEndpoints+"/"+pooled[0], map[string]any{"url": "https://moved.example.com"}).Expect(t, 200)
	if c, _ := createConcurrently(t, a, 1, "https://race.example.com", false); len(c) != 1 {
		t.Fatal("the old URL is still held after the endpoint moved")
	}
	a.Do(t, "POST", pathEndpoints, map[string]any{"url": "https://moved.example.com", "traffic_policy": policy}).ExpectError(t, http.StatusBadRequest, "ERR_NGROK_215", "url")
}

// An endpoint on a reserved domain references it from what the process knows of the domain's
// guard, which its one transaction asserts: the second endpoint under a wildcard is one
// TransactWriteItems. A stale fact never makes a wrong reference: after the domain is deleted
// and reserved again by another account, the next endpoint of the first account has no domain,
// and the other account's has its own.
func TestEndpointOnReservedDomainWarm(t *testing.T) {
	s, a, b := testkit.AppTwoAccounts(t)
	wild := fmt.Sprintf("warm%d.example.net", time.Now().UnixNano())
	reserve := func(acct *testkit.Account) string {
		return acct.Do(t, "POST", "/reserved_domains", map[string]any{"domain": "*." + wild}).Expect(t, http.StatusCreated)["id"].(string)
	}
	create := func(acct *testkit.Account, host string) map[string]any {
		return acct.Do(t, "POST", pathEndpoints, map[string]any{"url": "https://" + host + "." + wild, "traffic_policy": policy}).Expect(t, http.StatusCreated)
	}
	domainOf := func(e map[string]any) any {
		if d, ok := e["domain"].(map[string]any); ok {
			return d["id"]
		}
		return e["domain"]
	}
	w := reserve(a)
	first := create(a, "one")
	var second map[string]any
	got := s.RoundTripsOf(t, func() { second = create(a, "two") })
	if want := map[string]int{"TransactWriteItems": 1}; !maps.Equal(got, want) {
		t.Errorf("an endpoint on a known reserved domain made DynamoDB calls %v, want %v", got, want)
	}
	if domainOf(first) != w || domainOf(second) != w {
		t.Fatalf("endpoints under *.%s: domains %v and %v, want %s", wild, domainOf(first), domainOf(second), w)
	}
	for _, e := range []map[string]any{first, second} {
		a.Do(t, "DELETE", pathEndpoints+"/"+e["id"].(string), nil).Expect(t, http.StatusNoContent)
	}
	a.Do(t, "DELETE", "/reserved_domains/"+w, nil).Expect(t, http.StatusNoContent)
	if e := create(a, "three"); domainOf(e) != nil {
		t.Fatalf("endpoint after its domain was deleted: domain %v, want none", domainOf(e))
	}
	w2 := reserve(b)
	if e := create(a, "four"); domainOf(e) != nil {
		t.Fatalf("endpoint under another account's domain: domain %v, want none", domainOf(e))
	}
	if e := create(b, "five"); domainOf(e) != w2 {
		t.Fatalf("the new holder's endpoint: domain %v, want %s", domainOf(e), w2)
	}
}
