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
	// Every URL is one label under a wildcard the account reserves at its first create; the
	// updated endpoint keeps the first URL, known only then.
	var parent string
	wants := map[string]any{"metadata": "m", "pooling_enabled": true, "description": "d"}
	s.Conformance(t, testkit.FamilySpec{
		Family: endpoints.EndpointsDescriptor,
		Create: func(t *testing.T, a *testkit.Account, n int) any {
			if parent == "" {
				parent, _ = a.ReserveWildcard(t)
				wants["url"] = "https://conformance." + parent
			}
			url := "https://conformance." + parent
			if n > 0 {
				url = fmt.Sprintf("https://conformance-%d.%s", n, parent)
			}
			return map[string]any{"url": url, "type": "cloud", "traffic_policy": policy, "description": "d"}
		},
		Update:      map[string]any{"metadata": "m", "pooling_enabled": true},
		UpdateWants: wants,
		// The wildcard's guard is known to the process from the earlier creates: the create
		// asserts it in its one transaction (TestEndpointOnReservedDomainWarm measures it too).
	})
}

func TestEndpointShape(t *testing.T) {
	_, a := testkit.AppAccount(t)
	name, domain := a.ReserveDomain(t)
	doc := `{"on_http_request":[{"expressions":["req.url.path == '/x'"],"actions":[{"type":"custom-response","config":{"status_code":503}}]}]}`
	e := a.Do(t, "POST", pathEndpoints, map[string]any{"url": "HTTPS://" + strings.ToUpper(name) + ":443", "traffic_policy": doc}).Expect(t, 201)
	want := map[string]any{"url": "https://" + name, "public_url": "https://" + name, "proto": "https",
		"hostport": name + ":443", "type": "cloud", "traffic_policy": doc, "pooling_enabled": false}
	for k, v := range want {
		if fmt.Sprint(e[k]) != fmt.Sprint(v) {
			t.Errorf("%s = %v, want %v", k, e[k], v)
		}
	}
	if b := e["bindings"].([]any); len(b) != 1 || b[0] != "public" {
		t.Errorf("bindings %v", b)
	}
	if d, _ := e["domain"].(map[string]any); d["id"] != domain {
		t.Errorf("domain %v, want a ref to %s", e["domain"], domain)
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
	parent, _ := a.ReserveWildcard(t)
	theirs, _ := s.NewAccount(t).ReserveDomain(t)
	e := a.Do(t, "POST", pathEndpoints, map[string]any{"url": "https://taken." + parent, "traffic_policy": policy}).Expect(t, 201)
	// A kubernetes endpoint is served on no public address, so it needs no reserved domain.
	kube := a.Do(t, "POST", pathEndpoints, map[string]any{"url": "https://" + testkit.UniqueName("kube", "example.com"),
		"bindings": []string{"kubernetes"}, "traffic_policy": policy}).Expect(t, 201)
	path, kubePath := pathEndpoints+"/"+e["id"].(string), pathEndpoints+"/"+kube["id"].(string)
	body := func(kv ...any) map[string]any {
		m := map[string]any{"url": "https://new." + parent, "traffic_policy": policy}
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
		{"taken url", "POST", pathEndpoints, body("url", "https://taken."+parent), "ERR_NGROK_215", "url"},
		{"unreserved host", "POST", pathEndpoints, body("url", "https://"+testkit.UniqueName("none", "example.com")), "ERR_NGROK_319", "url"},
		{"deeper than the wildcard", "POST", pathEndpoints, body("url", "https://a.b."+parent), "ERR_NGROK_319", "url"},
		{"the wildcard's parent", "POST", pathEndpoints, body("url", "https://"+parent), "ERR_NGROK_319", "url"},
		{"unreserved wildcard", "POST", pathEndpoints, body("url", "https://*."+testkit.UniqueName("none", "example.com")), "ERR_NGROK_318", "url"},
		{"wildcard under the wildcard", "POST", pathEndpoints, body("url", "tls://*.x."+parent), "ERR_NGROK_321", "url"},
		{"another account's domain", "POST", pathEndpoints, body("url", "https://"+theirs), "ERR_NGROK_320", "url"},
		{"http off port 80", "POST", pathEndpoints, body("url", "http://new."+parent+":8080"), "ERR_NGROK_249", "url"},
		{"https off port 443", "POST", pathEndpoints, body("url", "https://new."+parent+":8443"), "ERR_NGROK_249", "url"},
		{"tls off port 443", "POST", pathEndpoints, body("url", "tls://new."+parent+":80"), "ERR_NGROK_249", "url"},
		{"patch to an unreserved host", "PATCH", path, map[string]any{"url": "https://" + testkit.UniqueName("none", "example.com")}, "ERR_NGROK_319", "url"},
		{"patch to another account's domain", "PATCH", path, map[string]any{"url": "https://" + theirs}, "ERR_NGROK_320", "url"},
		{"patch off the port", "PATCH", path, map[string]any{"url": "https://taken." + parent + ":444"}, "ERR_NGROK_249", "url"},
		{"patch kubernetes to public", "PATCH", kubePath, map[string]any{"bindings": []string{"public"}}, "ERR_NGROK_319", "bindings"},
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
	if got, _ := a.WalkPages(t, pathEndpoints, endpoints.EndpointsDescriptor.ListKey); len(got) != 2 {
		t.Fatalf("%d endpoints stored, want 2", len(got))
	}
	if got := a.Do(t, "GET", path, nil).Expect(t, 200); got["url"] != "https://taken."+parent || got["traffic_policy"] != policy {
		t.Fatalf("endpoint changed by refused input: %v", got)
	}
	if got := a.Do(t, "GET", kubePath, nil).Expect(t, 200); fmt.Sprint(got["bindings"]) != "[kubernetes]" || got["domain"] != nil {
		t.Fatalf("kubernetes endpoint changed by refused input: %v", got)
	}
	// Another account may use the same URL: the guard is per account (an internal URL, as a
	// public one is on a domain only one account holds).
	s.NewAccount(t).Do(t, "POST", pathEndpoints, map[string]any{"url": "tcp://db.internal:5432", "traffic_policy": policy}).Expect(t, 201)
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
	parent, _ := a.ReserveWildcard(t)
	race, moved := "https://race."+parent, "https://moved."+parent
	created, refused := createConcurrently(t, a, 20, race, false)
	if len(created) != 1 || refused != 19 {
		t.Fatalf("non-pooling: %d created, %d refused; want 1 and 19", len(created), refused)
	}
	// Pooling creates cannot join a URL held by a non-pooling endpoint.
	if c, r := createConcurrently(t, a, 3, race, true); len(c) != 0 || r != 3 {
		t.Fatalf("pooling onto a non-pooling URL: %d created", len(c))
	}
	a.Do(t, "DELETE", pathEndpoints+"/"+created[0], nil).Expect(t, 204)

	pooled, refused := createConcurrently(t, a, 20, race, true)
	if len(pooled) != 20 || refused != 0 {
		t.Fatalf("pooling: %d created, %d refused; want 20 and 0", len(pooled), refused)
	}
	if c, _ := createConcurrently(t, a, 1, race, false); len(c) != 0 {
		t.Fatal("a non-pooling endpoint joined a pooled URL")
	}
	// Pooling cannot be turned off while others share the URL.
	a.Do(t, "PATCH", pathEndpoints+"/"+pooled[0], map[string]any{"pooling_enabled": false}).ExpectError(t, 400, "ERR_NGROK_215", "pooling_enabled")
	for _, id := range pooled[1:] {
		a.Do(t, "DELETE", pathEndpoints+"/"+id, nil).Expect(t, 204)
	}
	a.Do(t, "PATCH", pathEndpoints+"/"+pooled[0], map[string]any{"pooling_enabled": false}).Expect(t, 200)
	if c, _ := createConcurrently(t, a, 1, race, true); len(c) != 0 {
		t.Fatal("a pooling endpoint joined a URL whose only endpoint stopped pooling")
	}
	// Moving the URL frees the old one.
	a.Do(t, "PATCH", pathEndpoints+"/"+pooled[0], map[string]any{"url": moved}).Expect(t, 200)
	if c, _ := createConcurrently(t, a, 1, race, false); len(c) != 1 {
		t.Fatal("the old URL is still held after the endpoint moved")
	}
	a.Do(t, "POST", pathEndpoints, map[string]any{"url": moved, "traffic_policy": policy}).ExpectError(t, http.StatusBadRequest, "ERR_NGROK_215", "url")
}

// An endpoint on a reserved domain references it from what the process knows of the domain's
// guard, which its one transaction asserts: the second endpoint under a wildcard is one
// TransactWriteItems. A stale fact never makes a wrong answer: after the domain is deleted the
// next endpoint of the account under it is refused as unreserved, after another account
// reserves it as that account's, and the other account's endpoint has it as its domain.
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
	refused := func(acct *testkit.Account, host, code string) {
		acct.Do(t, "POST", pathEndpoints, map[string]any{"url": "https://" + host + "." + wild, "traffic_policy": policy}).
			ExpectError(t, http.StatusBadRequest, code, "url")
	}
	refused(a, "three", endpoints.CodeHostNotReserved)
	w2 := reserve(b)
	refused(a, "four", endpoints.CodeDomainOfAnotherAccount)
	if e := create(b, "five"); domainOf(e) != w2 {
		t.Fatalf("the new holder's endpoint: domain %v, want %s", domainOf(e), w2)
	}
}

// A public endpoint is on a reserved domain of its account, so it always has domain: one
// created before its domain is reserved is refused (it used to be created without domain, and
// the domain could then be deleted under it); reserved first, it has domain, and the domain
// cannot be deleted while the endpoint is on it. A PATCH making a kubernetes endpoint public
// references the domain reserved since it was created.
func TestEndpointNeedsItsReservedDomain(t *testing.T) {
	_, a := testkit.AppAccount(t)
	name := testkit.UniqueName("first", "example.com")
	create := map[string]any{"url": "https://" + name, "traffic_policy": policy}
	a.Do(t, "POST", pathEndpoints, create).ExpectError(t, http.StatusBadRequest, endpoints.CodeHostNotReserved, "url")
	kube := a.Do(t, "POST", pathEndpoints, map[string]any{"url": "tls://" + name, "bindings": []string{"kubernetes"},
		"traffic_policy": "on_tcp_connect: []"}).Expect(t, http.StatusCreated)
	if kube["domain"] != nil {
		t.Fatalf("kubernetes endpoint on an unreserved host: domain %v", kube["domain"])
	}
	domain := a.Do(t, "POST", "/reserved_domains", map[string]any{"domain": name}).Expect(t, http.StatusCreated)["id"].(string)
	e := a.Do(t, "POST", pathEndpoints, create).Expect(t, http.StatusCreated)
	if d, _ := e["domain"].(map[string]any); d["id"] != domain {
		t.Fatalf("endpoint on a reserved domain: domain %v, want a ref to %s", e["domain"], domain)
	}
	got := a.Do(t, "PATCH", pathEndpoints+"/"+kube["id"].(string), map[string]any{"bindings": []string{"public"}}).Expect(t, http.StatusOK)
	if d, _ := got["domain"].(map[string]any); d["id"] != domain {
		t.Fatalf("kubernetes endpoint made public: domain %v, want a ref to %s", got["domain"], domain)
	}
	a.Do(t, "DELETE", "/reserved_domains/"+domain, nil).ExpectError(t, http.StatusBadRequest, "ERR_NGROK_446", "id")
	for _, id := range []string{e["id"].(string), kube["id"].(string)} {
		a.Do(t, "DELETE", pathEndpoints+"/"+id, nil).Expect(t, http.StatusNoContent)
	}
	a.Do(t, "DELETE", "/reserved_domains/"+domain, nil).Expect(t, http.StatusNoContent)

	// A wildcard host is served on its exact reservation; internal endpoints keep any port.
	parent, wild := a.ReserveWildcard(t)
	onWild := a.Do(t, "POST", pathEndpoints, map[string]any{"url": "tls://*." + parent, "traffic_policy": "on_tcp_connect: []"}).Expect(t, http.StatusCreated)
	if d, _ := onWild["domain"].(map[string]any); d["id"] != wild {
		t.Fatalf("endpoint on *.%s: domain %v, want a ref to %s", parent, onWild["domain"], wild)
	}
	a.Do(t, "POST", pathEndpoints, map[string]any{"url": "https://api.internal:8443", "traffic_policy": policy}).Expect(t, http.StatusCreated)
}

// A traffic policy reading a secret (secrets.get) is accepted whether or not the vault and the
// secret exist: the policy reads them when a request runs it, the reference documents no check
// when it is stored, and an infrastructure-as-code tool creates endpoints and secrets in any
// order. The endpoint is stored with the document as given, on create and on update.
func TestEndpointPolicyMayNameAbsentSecrets(t *testing.T) {
	_, a := testkit.AppAccount(t)
	parent, _ := a.ReserveWildcard(t)
	doc := func(vault, secret string) string {
		return "on_http_request:\n  - expressions: [\"req.headers['x-token'][0] != secrets.get('" + vault + "', '" + secret + "')\"]\n" +
			"    actions: [{type: deny, config: {status_code: 401}}]\n"
	}
	absent := doc("no-such-vault", "no-such-secret")
	e := a.Do(t, "POST", pathEndpoints, map[string]any{"url": "https://secrets." + parent, "traffic_policy": absent}).Expect(t, http.StatusCreated)
	if e["traffic_policy"] != absent {
		t.Fatalf("traffic_policy %q, want the document as sent", e["traffic_policy"])
	}
	vault := a.Do(t, "POST", "/vaults", map[string]any{"name": "endpoint-secrets"}).Expect(t, http.StatusCreated)["id"].(string)
	inVault := doc("endpoint-secrets", "not-yet-stored")
	got := a.Do(t, "PATCH", pathEndpoints+"/"+e["id"].(string), map[string]any{"traffic_policy": inVault}).Expect(t, http.StatusOK)
	if got["traffic_policy"] != inVault {
		t.Fatalf("traffic_policy %q after the update, want the document as sent", got["traffic_policy"])
	}
	a.Do(t, "POST", "/vault_secrets", map[string]any{"vault_id": vault, "name": "not-yet-stored", "value": "s3cret"}).Expect(t, http.StatusCreated)
	if got := a.Do(t, "GET", pathEndpoints+"/"+e["id"].(string), nil).Expect(t, http.StatusOK); got["traffic_policy"] != inVault {
		t.Fatalf("traffic_policy %q once the secret exists", got["traffic_policy"])
	}
}
