package httpsedges_test

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tunnelapi/shared/families/httpsedges"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/seal"
	"tunnelapi/shared/platform/store"
	"tunnelapi/shared/rules/httpmodules"
	"tunnelapi/shared/testing/samltest"
	"tunnelapi/shared/testing/testkit"
)

const edgesPath = "/edges/https"

// suite is the package's stack and the secrets the tests sent, scanned for after the suite.
var suite testkit.SecretSuite

// TestMain runs the suite, then checks that no webhook, OAuth or OIDC secret the tests sent and
// no SAML request signing key the service made is anywhere in the table or the logs: each
// sealed key is opened from the table to learn what to look for.
func TestMain(m *testing.M) {
	suite.Main(m, func(ctx context.Context, items []store.Item) []string {
		keys := 0
		for _, it := range items {
			routes, ok := it["routes"].(*types.AttributeValueMemberL)
			if !ok {
				continue
			}
			account := str(it, "account")
			for _, r := range routes.Value {
				rt := r.(*types.AttributeValueMemberM).Value
				samlM, ok := rt["saml"].(*types.AttributeValueMemberM)
				if !ok {
					continue
				}
				var s httpmodules.SAML
				if err := store.Unmarshal(samlM.Value, &s); err != nil {
					return []string{err.Error()}
				}
				pkcs8, err := s.SigningKey.Open(ctx, suite.Stack.Deps.Kit.Seal, seal.ResourceContext(account, str(rt, "id")), "saml.signing_key")
				if err != nil {
					return []string{"a SAML signing key does not open: " + err.Error()}
				}
				key, err := x509.ParsePKCS8PrivateKey([]byte(pkcs8))
				if err != nil {
					return []string{err.Error()}
				}
				suite.Needles.AddKey("SAML signing key", key)
				keys++
			}
		}
		if keys == 0 {
			return []string{"no route holds a sealed SAML signing key: the scan would prove nothing"}
		}
		return checkReferences(items)
	})
}

// checkReferences holds the reference count of every backend, IP policy and reserved domain
// equal to the number of HTTPS edges referencing it (once per edge, whichever of its routes do,
// and through its hostports): after the suite, nothing leaked a reference or dropped one.
func checkReferences(items []store.Item) []string {
	type ref struct{ account, id string }
	referrers := map[ref]int{}
	counts := map[ref]int64{}
	for _, it := range items {
		var m map[string]any
		if err := attributevalue.UnmarshalMap(it, &m); err != nil {
			return []string{err.Error()}
		}
		account, id := fmt.Sprint(m["account"]), fmt.Sprint(m["id"])
		if m[store.AttrSK] != id {
			continue // not a resource's own item (a name guard also names its domain)
		}
		switch {
		case strings.HasPrefix(id, "bkdtg_"), strings.HasPrefix(id, "ipp_"), strings.HasPrefix(id, "rd_"):
			n, _ := m[store.AttrRefs].(float64)
			counts[ref{account, id}] = int64(n)
		case strings.HasPrefix(id, "edghts_"):
			held := map[string]bool{}
			for _, rid := range m["reservations"].(map[string]any) {
				held[fmt.Sprint(rid)] = true
			}
			routes, _ := m["routes"].([]any)
			for _, r := range routes {
				rt := r.(map[string]any)
				if b, ok := rt["backend"].(map[string]any); ok {
					held[fmt.Sprint(b["backend_id"])] = true
				}
				if x, ok := rt["ip_restriction"].(map[string]any); ok {
					for _, p := range x["ip_policy_ids"].([]any) {
						held[fmt.Sprint(p)] = true
					}
				}
			}
			for h := range held {
				referrers[ref{account, h}]++
			}
		}
	}
	var problems []string
	for r, n := range counts {
		if int64(referrers[r]) != n {
			problems = append(problems, fmt.Sprintf("%s is referenced by %d HTTPS edges but counts %d", r.id, referrers[r], n))
		}
	}
	if len(referrers) == 0 {
		problems = append(problems, "no HTTPS edge references anything: the reference check would prove nothing")
	}
	return problems
}

func str(it map[string]types.AttributeValue, k string) string {
	s, _ := it[k].(*types.AttributeValueMemberS)
	if s == nil {
		return ""
	}
	return s.Value
}

// domain reserves a fresh domain in a's account and returns it.
func domain(t *testing.T, a *testkit.Account) string {
	name, _ := a.ReserveDomain(t)
	return name
}

// secret returns a distinct secret the final scan looks for.
func secret(what string) string {
	s := what + "-plaintext-secret-" + ids.RandomBase62(24)
	suite.Needles.Add(what, []byte(s))
	return s
}

// fixture is an edge with what route modules reference.
type fixture struct {
	a                          *testkit.Account
	edge, host                 string
	backend, ipPolicy, idpMeta string
}

func newFixture(t *testing.T, s *testkit.Stack) *fixture {
	a := s.NewAccount(t)
	f := &fixture{a: a, host: domain(t, a), idpMeta: samltest.IdPMetadata(t)}
	f.edge = a.Do(t, "POST", edgesPath, map[string]any{"hostports": []string{f.host + ":443"}}).Expect(t, http.StatusCreated)["id"].(string)
	f.backend = a.Do(t, "POST", "/backends/tunnel_group", map[string]any{"labels": map[string]string{"app": "x"}}).Expect(t, http.StatusCreated)["id"].(string)
	f.ipPolicy = a.Do(t, "POST", "/ip_policies", map[string]any{}).Expect(t, http.StatusCreated)["id"].(string)
	return f
}

func (f *fixture) routes() string { return edgesPath + "/" + f.edge + "/routes" }

// modules returns a valid body of every route module, every documented field set; auth is
// which of oauth, saml and oidc to include.
func (f *fixture) modules(auth string) map[string]any {
	m := map[string]any{
		"backend":         map[string]any{"enabled": true, "backend_id": f.backend},
		"ip_restriction":  map[string]any{"enabled": true, "ip_policy_ids": []string{f.ipPolicy}},
		"circuit_breaker": map[string]any{"enabled": true, "tripped_duration": 5, "rolling_window": 30, "num_buckets": 8, "volume_threshold": 10, "error_threshold_percentage": 0.25},
		"compression":     map[string]any{"enabled": true},
		"request_headers": map[string]any{"enabled": true, "add": map[string]string{"X-Env": "prod"}, "remove": []string{"X-Debug"}},
		"response_headers": map[string]any{"enabled": false, "add": map[string]string{"Cache-Control": "no-store"},
			"remove": []string{"Server"}},
		"webhook_verification":    map[string]any{"enabled": true, "provider": "GitHub", "secret": secret("webhook")},
		"websocket_tcp_converter": map[string]any{"enabled": true},
		"user_agent_filter":       map[string]any{"enabled": true, "allow": []string{"(?i)curl/.*"}, "deny": []string{"bot"}},
		"traffic_policy":          map[string]any{"enabled": true, "value": `{"on_http_request":[{"actions":[{"type":"deny"}]}]}`},
	}
	switch auth {
	case "oauth":
		m["oauth"] = map[string]any{"enabled": true, "options_passthrough": true, "cookie_prefix": "app.", "inactivity_timeout": 600,
			"maximum_duration": 86400, "auth_check_interval": 300, "provider": map[string]any{"github": map[string]any{
				"client_id": "cid", "client_secret": secret("oauth"), "scopes": []string{"read:org", "user:email"},
				"email_addresses": []string{"a@example.com"}, "email_domains": []string{"example.com"},
				"teams": []string{"acme/devs"}, "organizations": []string{"acme"}}}}
	case "oidc":
		m["oidc"] = map[string]any{"enabled": true, "options_passthrough": false, "cookie_prefix": "o.", "inactivity_timeout": 60,
			"maximum_duration": 3600, "issuer": "https://accounts.example.com", "client_id": "cid", "client_secret": secret("oidc"),
			"scopes": []string{"openid", "email"}}
	case "saml":
		m["saml"] = map[string]any{"enabled": true, "options_passthrough": true, "cookie_prefix": "s.", "inactivity_timeout": 60,
			"maximum_duration": 3600, "idp_metadata": f.idpMeta, "force_authn": true, "allow_idp_initiated": true,
			"authorized_groups": []string{"eng"}, "nameid_format": "urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress"}
	}
	return m
}

func TestHTTPSEdgesConformance(t *testing.T) {
	s := suite.App(t)
	s.Conformance(t, testkit.FamilySpec{
		Family: httpsedges.HTTPSEdgesDescriptor,
		Create: func(t *testing.T, a *testkit.Account, n int) any {
			// The process learns who holds the hostport (an edge made on it and deleted): the
			// create measured is the second on it, warm, one transaction asserting what it knows.
			hp := domain(t, a) + ":443"
			first := a.Do(t, "POST", "/edges/https", map[string]any{"hostports": []string{hp}}).Expect(t, http.StatusCreated)["id"].(string)
			a.Do(t, "DELETE", "/edges/https/"+first, nil).Expect(t, http.StatusNoContent)
			return map[string]any{"description": fmt.Sprint(n), "hostports": []string{hp},
				"tls_termination": map[string]any{"min_version": "1.3"}}
		},
		Update:      map[string]any{"description": "shop", "metadata": "m"},
		UpdateWants: map[string]any{"description": "shop", "metadata": "m", "mutual_tls": nil},
		// The family keeps secrets (its routes' module secrets), so package resource verifies the
		// caller before the edge's Prepare: one read of the caller's items before the transaction.
		RoundTrips: map[string]map[string]int{"create": {"BatchGetItem": 1, "TransactWriteItems": 1}},
	})
}

// Every documented member of a route and its modules is accepted and rendered as the platform
// renders it; the route is listed inside its edge.
func TestRouteWithEveryModule(t *testing.T) {
	s := suite.App(t)
	f := newFixture(t, s)
	for _, auth := range []string{"oauth", "saml", "oidc"} {
		body := f.modules(auth)
		match := "/" + auth
		if auth == "oauth" {
			match = "/"
		}
		body["match_type"], body["match"], body["description"], body["metadata"] = "path_prefix", match, "d", "m"
		body["edge_id"] = f.edge // the JavaScript client repeats the path's id
		got := f.a.Do(t, "POST", f.routes(), body).Expect(t, http.StatusCreated)
		id := got["id"].(string)
		if got["edge_id"] != f.edge || got["uri"] != f.a.URL(f.routes()+"/"+id) || got["match"] != match {
			t.Fatalf("route %v", got)
		}
		for name := range f.modules(auth) {
			if got[name] == nil {
				t.Fatalf("%s: module %s is null", auth, name)
			}
		}
		for _, name := range []string{"oauth", "saml", "oidc"} {
			if (got[name] != nil) != (name == auth) {
				t.Fatalf("%s: %s = %v", auth, name, got[name])
			}
		}
		if bytes.Contains(f.a.Do(t, "GET", f.routes()+"/"+id, nil).Body, []byte("plaintext-secret")) {
			t.Fatal("a secret is returned")
		}
	}
	edge := f.a.Do(t, "GET", edgesPath+"/"+f.edge, nil).Expect(t, http.StatusOK)
	routes := edge["routes"].([]any)
	if len(routes) != 3 || routes[0].(map[string]any)["match"] != "/oidc" || routes[2].(map[string]any)["match"] != "/" {
		t.Fatalf("routes, newest first: %v", routes)
	}
	want := map[string]any{
		"circuit_breaker":      map[string]any{"enabled": true, "tripped_duration": 5.0, "rolling_window": 30.0, "num_buckets": 8.0, "volume_threshold": 10.0, "error_threshold_percentage": 0.25},
		"webhook_verification": map[string]any{"enabled": true, "provider": "GitHub", "secret": nil},
		"backend":              map[string]any{"enabled": true, "backend": map[string]any{"id": f.backend, "uri": f.a.URL("/backends/tunnel_group/" + f.backend)}},
	}
	r0 := routes[0].(map[string]any)
	for k, v := range want {
		if fmt.Sprint(r0[k]) != fmt.Sprint(v) {
			t.Errorf("%s = %v, want %v", k, r0[k], v)
		}
	}
	oidc := r0["oidc"].(map[string]any)
	if oidc["client_secret"] != nil || oidc["issuer"] != "https://accounts.example.com" {
		t.Errorf("oidc %v", oidc)
	}
	oauth := routes[2].(map[string]any)["oauth"].(map[string]any)["provider"].(map[string]any)
	if gh := oauth["github"].(map[string]any); gh["client_secret"] != nil || gh["client_id"] != "cid" || oauth["google"] != nil {
		t.Errorf("oauth provider %v", oauth)
	}
}

// SAML: the service provider's members are on the route's own hostport, the signing key pair
// is the route's (kept when the module is replaced), and the SP metadata built from them parses
// back with the library naming the route's ACS URL.
func TestSAMLServiceProvider(t *testing.T) {
	s := suite.App(t)
	f := newFixture(t, s)
	body := map[string]any{"match_type": "exact_path", "match": "/sso", "saml": f.modules("saml")["saml"]}
	rt := f.a.Do(t, "POST", f.routes(), body).Expect(t, http.StatusCreated)
	id := rt["id"].(string)
	sm := rt["saml"].(map[string]any)
	base := "https://" + f.host + "/ngrok/saml/" + id
	if sm["entity_id"] != base+"/metadata" || sm["metadata_url"] != base+"/metadata" ||
		sm["assertion_consumer_service_url"] != base+"/acs" || sm["single_logout_url"] != base+"/slo" {
		t.Fatalf("SP members %v", sm)
	}
	block, _ := pem.Decode([]byte(sm["request_signing_certificate_pem"].(string)))
	if block == nil {
		t.Fatalf("no certificate: %v", sm)
	}
	// Replacing the module keeps the route's key pair.
	again := f.a.Do(t, "PUT", f.routes()+"/"+id+"/saml", map[string]any{"idp_metadata": f.idpMeta}).Expect(t, http.StatusOK)
	if again["request_signing_certificate_pem"] != sm["request_signing_certificate_pem"] || again["force_authn"] != false {
		t.Fatalf("replaced module %v", again)
	}
	out, err := samltest.SPMetadata(samltest.SP{Cert: block.Bytes, NameIDFormat: httpmodules.NameIDFormats[0],
		EntityID: sm["entity_id"].(string), ACS: sm["assertion_consumer_service_url"].(string),
		SLO: sm["single_logout_url"].(string), Metadata: sm["metadata_url"].(string)})
	ed := samltest.EntityDescriptor(t, out, err)
	if ed.SPSSODescriptors[0].AssertionConsumerServices[0].Location != base+"/acs" {
		t.Fatalf("SP metadata %s", out)
	}
	// Another hostport first: the SP follows the edge.
	other := domain(t, f.a)
	f.a.Do(t, "PATCH", edgesPath+"/"+f.edge, map[string]any{"hostports": []string{other + ":443", f.host + ":443"}}).Expect(t, http.StatusOK)
	moved := f.a.Do(t, "GET", f.routes()+"/"+id+"/saml", nil).Expect(t, http.StatusOK)
	if moved["assertion_consumer_service_url"] != "https://"+other+"/ngrok/saml/"+id+"/acs" {
		t.Fatalf("after the hostports changed: %v", moved)
	}
	f.a.Do(t, "PUT", f.routes()+"/"+id+"/saml", map[string]any{"idp_metadata": "<EntityDescriptor"}).ExpectError(t, http.StatusBadRequest, "ERR_NGROK_7083", "idp_metadata")
	f.a.Do(t, "PUT", f.routes()+"/"+id+"/saml", map[string]any{"idp_metadata": f.idpMeta + strings.Repeat(" ", httpmodules.MaxIdPMetadataBytes)}).
		ExpectError(t, http.StatusBadRequest, "ERR_NGROK_7080", "idp_metadata")
}

// canonical re-encodes a JSON value so that equal values compare equal.
func canonical(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// Each module: PUT replaces it (and answers it as GET does), DELETE removes it (GET 404, the
// route shows null); a PATCH of the route with one module leaves the others byte-identical.
func TestRouteModuleSubroutes(t *testing.T) {
	s := suite.App(t)
	f := newFixture(t, s)
	body := f.modules("oidc")
	body["match_type"], body["match"] = "path_prefix", "/app"
	id := f.a.Do(t, "POST", f.routes(), body).Expect(t, http.StatusCreated)["id"].(string)
	route := f.routes() + "/" + id

	before := f.a.Do(t, "GET", route, nil).Expect(t, http.StatusOK)
	patched := f.a.Do(t, "PATCH", route, map[string]any{"compression": map[string]any{"enabled": false}}).Expect(t, http.StatusOK)
	for k, v := range before {
		if k != "compression" && canonical(v) != canonical(patched[k]) {
			t.Errorf("PATCH of compression changed %s: %s -> %s", k, canonical(v), canonical(patched[k]))
		}
	}
	if canonical(patched["compression"]) != `{"enabled":false}` {
		t.Fatalf("compression %v", patched["compression"])
	}

	replacements := map[string]any{
		"backend":                 map[string]any{"backend_id": f.backend, "enabled": false},
		"ip_restriction":          map[string]any{"ip_policy_ids": []string{f.ipPolicy}, "enabled": false},
		"circuit_breaker":         map[string]any{"error_threshold_percentage": 0.9},
		"compression":             map[string]any{},
		"request_headers":         map[string]any{"add": map[string]string{"X-A": "1"}},
		"response_headers":        map[string]any{"remove": []string{"X-Powered-By"}},
		"webhook_verification":    map[string]any{"provider": "sns"},
		"oidc":                    map[string]any{"issuer": "https://other.example.com", "client_id": "c2", "client_secret": secret("oidc2")},
		"websocket_tcp_converter": map[string]any{"enabled": false},
		"user_agent_filter":       map[string]any{"deny": []string{"^$"}},
		"traffic_policy":          map[string]any{"value": "on_http_request: []"},
	}
	for name, mod := range replacements {
		t.Run(name, func(t *testing.T) {
			put := f.a.Do(t, "PUT", route+"/"+name, mod).Expect(t, http.StatusOK)
			get := f.a.Do(t, "GET", route+"/"+name, nil).Expect(t, http.StatusOK)
			if canonical(put) != canonical(get) || canonical(get) != canonical(f.a.Do(t, "GET", route, nil).Expect(t, http.StatusOK)[name]) {
				t.Fatalf("PUT answered %s, GET %s", canonical(put), canonical(get))
			}
			// The JavaScript client wraps the module beside the path's ids.
			f.a.Do(t, "PUT", route+"/"+name, map[string]any{"edge_id": f.edge, "id": id, "module": mod}).Expect(t, http.StatusOK)
			f.a.Do(t, "DELETE", route+"/"+name, nil).Expect(t, http.StatusNoContent)
			f.a.Do(t, "GET", route+"/"+name, nil).Expect(t, http.StatusNotFound)
			if v := f.a.Do(t, "GET", route, nil).Expect(t, http.StatusOK)[name]; v != nil {
				t.Fatalf("%s after DELETE: %v", name, v)
			}
			f.a.Do(t, "DELETE", route+"/"+name, nil).Expect(t, http.StatusNotFound)
		})
	}
	// Edge modules.
	put := f.a.Do(t, "PUT", edgesPath+"/"+f.edge+"/tls_termination", map[string]any{"min_version": "1.2"}).Expect(t, http.StatusOK)
	if canonical(put) != `{"enabled":true,"min_version":"1.2","terminate_at":"edge"}` {
		t.Fatalf("tls_termination %s", canonical(put))
	}
	f.a.Do(t, "PUT", edgesPath+"/"+f.edge+"/tls_termination", map[string]any{"terminate_at": "edge"}).ExpectError(t, http.StatusBadRequest, "ERR_NGROK_7109", "terminate_at")
	f.a.Do(t, "DELETE", edgesPath+"/"+f.edge+"/tls_termination", nil).Expect(t, http.StatusNoContent)
	f.a.Do(t, "GET", edgesPath+"/"+f.edge+"/tls_termination", nil).Expect(t, http.StatusNotFound)
}

// Bad inputs get their codes and change nothing.
func TestRouteRefusals(t *testing.T) {
	s := suite.App(t)
	f := newFixture(t, s)
	root := f.a.Do(t, "POST", f.routes(), map[string]any{"match_type": "path_prefix", "match": "/"}).Expect(t, http.StatusCreated)["id"].(string)
	sub := f.a.Do(t, "POST", f.routes(), map[string]any{"match_type": "exact_path", "match": "/x"}).Expect(t, http.StatusCreated)["id"].(string)
	g := newFixture(t, s)
	g.a = f.a
	g.edge = f.a.Do(t, "POST", edgesPath, map[string]any{}).Expect(t, http.StatusCreated)["id"].(string)
	edgeBefore := f.a.Do(t, "GET", edgesPath+"/"+f.edge, nil).Body
	mods := f.modules("")
	cases := []struct {
		name, method, path string
		body               any
		code, field        string
	}{
		{"match type", "POST", f.routes(), map[string]any{"match_type": "regex", "match": "/a"}, "ERR_NGROK_7130", "match_type"},
		{"no match type", "POST", f.routes(), map[string]any{"match": "/a"}, "ERR_NGROK_7130", "match_type"},
		{"no match", "POST", f.routes(), map[string]any{"match_type": "exact_path"}, "ERR_NGROK_7123", "match"},
		{"not a path", "POST", f.routes(), map[string]any{"match_type": "exact_path", "match": "example.com/a"}, "ERR_NGROK_7131", "match"},
		{"duplicate match", "POST", f.routes(), map[string]any{"match_type": "exact_path", "match": "/x"}, "ERR_NGROK_7126", "match"},
		{"duplicate by PATCH", "PATCH", f.routes() + "/" + root, map[string]any{"match": "/x"}, "ERR_NGROK_7126", "match"},
		{"edge id differs", "POST", f.routes(), map[string]any{"edge_id": g.edge, "match_type": "exact_path", "match": "/b"}, "ERR_NGROK_7110", "edge_id"},
		{"two auth modules", "POST", f.routes(), map[string]any{"match_type": "exact_path", "match": "/c",
			"oidc": f.modules("oidc")["oidc"], "saml": f.modules("saml")["saml"]}, "ERR_NGROK_7079", "oidc"},
		{"second auth module by PUT", "PUT", f.routes() + "/" + root + "/oidc", f.modules("oidc")["oidc"], "", ""},
		{"then saml", "PUT", f.routes() + "/" + root + "/saml", f.modules("saml")["saml"], "ERR_NGROK_7079", "saml"},
		{"oauth off root", "PUT", f.routes() + "/" + sub + "/oauth", f.modules("oauth")["oauth"], "ERR_NGROK_7127", "oauth"},
		{"webhook secret for sns", "PUT", f.routes() + "/" + sub + "/webhook_verification", map[string]any{"provider": "sns", "secret": "x"}, "ERR_NGROK_7026", "secret"},
		{"webhook without secret", "PUT", f.routes() + "/" + sub + "/webhook_verification", map[string]any{"provider": "stripe"}, "ERR_NGROK_7027", "secret"},
		{"header name", "PUT", f.routes() + "/" + sub + "/request_headers", map[string]any{"add": map[string]string{"a b": "c"}}, "ERR_NGROK_7023", "add.a b"},
		{"header value", "PUT", f.routes() + "/" + sub + "/response_headers", map[string]any{"add": map[string]string{"A": "\n"}}, "ERR_NGROK_7024", "add.A"},
		{"breaker threshold", "PUT", f.routes() + "/" + sub + "/circuit_breaker", map[string]any{"error_threshold_percentage": 2}, "ERR_NGROK_7011", "error_threshold_percentage"},
		{"breaker buckets in a route body", "PATCH", f.routes() + "/" + sub, map[string]any{"circuit_breaker": map[string]any{"num_buckets": 500}}, "ERR_NGROK_7018", "circuit_breaker.num_buckets"},
		{"oidc without issuer", "PUT", f.routes() + "/" + sub + "/oidc", map[string]any{"client_id": "a", "client_secret": "b"}, "ERR_NGROK_7088", "issuer"},
		{"user agent regex", "PUT", f.routes() + "/" + sub + "/user_agent_filter", map[string]any{"allow": []string{"("}}, "ERR_NGROK_215", "allow[0]"},
		{"traffic policy", "PUT", f.routes() + "/" + sub + "/traffic_policy", map[string]any{"value": "on_http_request: [{actions: [{type: nope}]}]"}, "ERR_NGROK_215", ""},
		{"unknown backend", "PUT", f.routes() + "/" + sub + "/backend", map[string]any{"backend_id": "bkdtg_2jYw3C0Gj3xQ0x6b2DrB3fS1nKQ"}, "ERR_NGROK_6501", "backend_id"},
		{"unknown module", "POST", f.routes(), map[string]any{"match_type": "exact_path", "match": "/d", "basic_auth": map[string]any{}}, "ERR_NGROK_214", "basic_auth"},
		{"terminate_at", "PATCH", edgesPath + "/" + f.edge, map[string]any{"tls_termination": map[string]any{"terminate_at": "upstream"}}, "ERR_NGROK_7109", "tls_termination.terminate_at"},
		{"empty route PATCH", "PATCH", f.routes() + "/" + sub, map[string]any{}, "ERR_NGROK_606", "body"},
	}
	_ = mods
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := f.a.Do(t, c.method, c.path, c.body)
			if c.code == "" {
				res.Expect(t, http.StatusOK)
				edgeBefore = f.a.Do(t, "GET", edgesPath+"/"+f.edge, nil).Body
				return
			}
			if c.field == "" {
				res.ExpectError(t, http.StatusBadRequest, c.code, res.JSON(t)["details"].(map[string]any)["field"].(string))
			} else {
				res.ExpectError(t, http.StatusBadRequest, c.code, c.field)
			}
			if after := f.a.Do(t, "GET", edgesPath+"/"+f.edge, nil).Body; !bytes.Equal(after, edgeBefore) {
				t.Fatalf("a refused request changed the edge:\n%s\n%s", edgeBefore, after)
			}
		})
	}
	// A route of another edge is not found on this one, nor are its modules.
	f.a.Do(t, "GET", edgesPath+"/"+g.edge+"/routes/"+root, nil).ExpectError(t, http.StatusNotFound, "ERR_NGROK_7124", "")
	f.a.Do(t, "PATCH", edgesPath+"/"+g.edge+"/routes/"+root, map[string]any{"description": "x"}).Expect(t, http.StatusNotFound)
	f.a.Do(t, "DELETE", edgesPath+"/"+g.edge+"/routes/"+root, nil).Expect(t, http.StatusNotFound)
	f.a.Do(t, "GET", edgesPath+"/"+g.edge+"/routes/"+root+"/oidc", nil).Expect(t, http.StatusNotFound)
	// Nor in another account.
	other := s.NewAccount(t)
	other.Do(t, "GET", f.routes()+"/"+root, nil).Expect(t, http.StatusNotFound)
	other.Do(t, "PUT", f.routes()+"/"+root+"/compression", map[string]any{}).Expect(t, http.StatusNotFound)
}

// An edge holds at most MaxRoutes routes; the refused one changes nothing.
func TestRouteLimit(t *testing.T) {
	s := suite.App(t)
	f := newFixture(t, s)
	for i := 0; i < httpsedges.MaxRoutes; i++ {
		f.a.Do(t, "POST", f.routes(), map[string]any{"match_type": "exact_path", "match": fmt.Sprintf("/r%d", i)}).Expect(t, http.StatusCreated)
	}
	f.a.Do(t, "POST", f.routes(), map[string]any{"match_type": "exact_path", "match": "/over"}).ExpectError(t, http.StatusBadRequest, "ERR_NGROK_7128", "match")
	if n := len(f.a.Do(t, "GET", edgesPath+"/"+f.edge, nil).Expect(t, http.StatusOK)["routes"].([]any)); n != httpsedges.MaxRoutes {
		t.Fatalf("%d routes", n)
	}
}

// Deleting an edge deletes its routes and their module state in one transaction: afterwards
// nothing of it is left, and what its routes referenced is free to delete.
func TestDeleteEdgeLeavesNoOrphan(t *testing.T) {
	s := suite.App(t)
	f := newFixture(t, s)
	for i, auth := range []string{"oauth", "saml", ""} {
		body := f.modules(auth)
		body["match_type"], body["match"] = "path_prefix", []string{"/", "/s", "/n"}[i]
		f.a.Do(t, "POST", f.routes(), body).Expect(t, http.StatusCreated)
	}
	// Referenced while the edge exists.
	f.a.Do(t, "DELETE", "/backends/tunnel_group/"+f.backend, nil).Expect(t, http.StatusBadRequest)
	f.a.Do(t, "DELETE", "/ip_policies/"+f.ipPolicy, nil).Expect(t, http.StatusBadRequest)
	f.a.Do(t, "DELETE", edgesPath+"/"+f.edge, nil).Expect(t, http.StatusNoContent)
	f.a.Do(t, "GET", edgesPath+"/"+f.edge, nil).Expect(t, http.StatusNotFound)
	for _, it := range f.a.Items(t) {
		if strings.HasPrefix(it["pk"], "E#") {
			continue // the audit log
		}
		for k, v := range it {
			if strings.Contains(v, f.edge) {
				t.Errorf("item %s/%s still names the edge in %s", it["pk"], it["sk"], k)
			}
		}
	}
	f.a.Do(t, "DELETE", "/backends/tunnel_group/"+f.backend, nil).Expect(t, http.StatusNoContent)
	f.a.Do(t, "DELETE", "/ip_policies/"+f.ipPolicy, nil).Expect(t, http.StatusNoContent)
	// The hostport is free for another edge.
	f.a.Do(t, "POST", edgesPath, map[string]any{"hostports": []string{f.host + ":443"}}).Expect(t, http.StatusCreated)
}

// Route mutations record https_edge_route_* events carrying the route as GET returns it.
func TestRouteEvents(t *testing.T) {
	s := suite.App(t)
	f := newFixture(t, s)
	id := f.a.Do(t, "POST", f.routes(), map[string]any{"match_type": "exact_path", "match": "/e"}).Expect(t, http.StatusCreated)["id"].(string)
	f.a.Do(t, "PUT", f.routes()+"/"+id+"/compression", map[string]any{}).Expect(t, http.StatusOK)
	f.a.Do(t, "DELETE", f.routes()+"/"+id, nil).Expect(t, http.StatusNoContent)
	seen := map[string]int{}
	for _, ev := range s.Outbox(t) {
		if strings.Contains(ev.Payload, id) {
			seen[ev.EventType]++
		}
	}
	for _, typ := range []string{"https_edge_route_created.v0", "https_edge_route_updated.v0", "https_edge_route_deleted.v0"} {
		if seen[typ] != 1 {
			t.Errorf("%s recorded %d times: %v", typ, seen[typ], seen)
		}
	}
	if len(seen) != 3 {
		t.Errorf("events %v", seen)
	}
}

// An edge whose deletion would need more than one transaction's writes cannot be built: the
// route that would cross the limit is refused (7128), and the edge at the limit deletes in one
// transaction, releasing every reference.
func TestEdgeStaysDeletableInOneTransaction(t *testing.T) {
	s := suite.App(t)
	f := newFixture(t, s)
	var policies []string
	for i := 0; i < 100; i++ {
		policies = append(policies, f.a.Do(t, "POST", "/ip_policies", map[string]any{}).Expect(t, http.StatusCreated)["id"].(string))
	}
	refused := -1
	for i := 0; i < 10; i++ {
		res := f.a.Do(t, "POST", f.routes(), map[string]any{"match_type": "exact_path", "match": fmt.Sprintf("/p%d", i),
			"ip_restriction": map[string]any{"ip_policy_ids": policies[i*10 : i*10+10]}})
		if res.Status == http.StatusBadRequest {
			res.ExpectError(t, http.StatusBadRequest, "ERR_NGROK_7128", "routes")
			refused = i
			break
		}
		res.Expect(t, http.StatusCreated)
	}
	if refused < 0 {
		t.Fatal("an edge referencing 100 IP policies was accepted")
	}
	f.a.Do(t, "DELETE", edgesPath+"/"+f.edge, nil).Expect(t, http.StatusNoContent)
	for _, id := range policies {
		f.a.Do(t, "DELETE", "/ip_policies/"+id, nil).Expect(t, http.StatusNoContent)
	}
}

// A module that would make the edge's item too large for DynamoDB is refused (7128).
func TestEdgeItemSizeIsBounded(t *testing.T) {
	s := suite.App(t)
	f := newFixture(t, s)
	id := f.a.Do(t, "POST", f.routes(), map[string]any{"match_type": "exact_path", "match": "/big"}).Expect(t, http.StatusCreated)["id"].(string)
	add := map[string]string{}
	for i := 0; i < httpmodules.MaxHeaders; i++ {
		add[fmt.Sprintf("X-H%d", i)] = strings.Repeat("v", httpmodules.MaxHeaderValueBytes)
	}
	f.a.Do(t, "PUT", f.routes()+"/"+id+"/request_headers", map[string]any{"add": add}).ExpectError(t, http.StatusBadRequest, "ERR_NGROK_7128", "routes")
	f.a.Do(t, "GET", f.routes()+"/"+id+"/request_headers", nil).Expect(t, http.StatusNotFound)
}

// Concurrent route creates with one match: exactly one is stored; the others are 7126.
// Concurrent module PUTs on different routes of one edge all land.
func TestConcurrentRouteWrites(t *testing.T) {
	s := suite.App(t)
	f := newFixture(t, s)
	got := f.a.Race(t, 10, "POST", f.routes(), map[string]any{"match_type": "path_prefix", "match": "/race"})
	if got[http.StatusCreated] != 1 || got[http.StatusBadRequest] != 9 {
		t.Fatalf("statuses %v", got)
	}
	var ids []string
	for i := 0; i < 5; i++ {
		ids = append(ids, f.a.Do(t, "POST", f.routes(), map[string]any{"match_type": "exact_path", "match": fmt.Sprintf("/c%d", i)}).Expect(t, http.StatusCreated)["id"].(string))
	}
	done := make(chan *testkit.Response, len(ids))
	for _, id := range ids {
		go func() {
			done <- f.a.Do(t, "PUT", f.routes()+"/"+id+"/backend", map[string]any{"backend_id": f.backend})
		}()
	}
	for range ids {
		(<-done).Expect(t, http.StatusOK)
	}
	for _, rt := range f.a.Do(t, "GET", edgesPath+"/"+f.edge, nil).Expect(t, http.StatusOK)["routes"].([]any) {
		r := rt.(map[string]any)
		if strings.HasPrefix(r["match"].(string), "/c") && r["backend"] == nil {
			t.Fatalf("a concurrent PUT was lost: %v", r)
		}
	}
	// The backend is referenced once per edge, whichever routes hold it: removing it from all
	// but one route keeps it referenced.
	for _, id := range ids[1:] {
		f.a.Do(t, "DELETE", f.routes()+"/"+id+"/backend", nil).Expect(t, http.StatusNoContent)
	}
	f.a.Do(t, "DELETE", "/backends/tunnel_group/"+f.backend, nil).Expect(t, http.StatusBadRequest)
	f.a.Do(t, "DELETE", f.routes()+"/"+ids[0], nil).Expect(t, http.StatusNoContent)
	f.a.Do(t, "DELETE", "/backends/tunnel_group/"+f.backend, nil).Expect(t, http.StatusNoContent)
}

// An edge near the size limit still changes and deletes (its events fit), and a write that
// would render it beyond MaxRenderedBytes is refused without a trace.
func TestEdgeNearTheSizeLimit(t *testing.T) {
	s := suite.App(t)
	f := newFixture(t, s)
	id := f.a.Do(t, "POST", f.routes(), map[string]any{"match_type": "exact_path", "match": "/big"}).Expect(t, http.StatusCreated)["id"].(string)
	headers := func(n int) map[string]any {
		add := map[string]string{}
		for i := 0; i < n; i++ {
			add[fmt.Sprintf("X-H%d", i)] = strings.Repeat("<", httpmodules.MaxHeaderValueBytes) // six bytes each in JSON
		}
		return map[string]any{"add": add}
	}
	f.a.Do(t, "PUT", f.routes()+"/"+id+"/request_headers", headers(12)).Expect(t, http.StatusOK)
	f.a.Do(t, "PUT", f.routes()+"/"+id+"/response_headers", headers(12)).ExpectError(t, http.StatusBadRequest, "ERR_NGROK_7128", "routes")
	f.a.Do(t, "PATCH", edgesPath+"/"+f.edge, map[string]any{"metadata": strings.Repeat("m", 4096)}).Expect(t, http.StatusOK)
	f.a.Do(t, "DELETE", edgesPath+"/"+f.edge, nil).Expect(t, http.StatusNoContent)
}

// Route requests make the round trips of the edge's own kinds: a read is one BatchGetItem (the
// edge with its routes and the caller's items), a write that read and one TransactWriteItems.
func TestRouteRoundTrips(t *testing.T) {
	s := suite.App(t)
	f := newFixture(t, s)
	body := f.modules("oidc")
	body["match_type"], body["match"] = "path_prefix", "/rt"
	var id string
	read := map[string]int{"BatchGetItem": 1}
	write := map[string]int{"BatchGetItem": 1, "TransactWriteItems": 1}
	for _, c := range []struct {
		name string
		do   func() *testkit.Response
		want map[string]int
	}{
		{"create", func() *testkit.Response { return f.a.Do(t, "POST", f.routes(), body) }, write},
		{"get", func() *testkit.Response { return f.a.Do(t, "GET", f.routes()+"/"+id, nil) }, read},
		{"get edge", func() *testkit.Response { return f.a.Do(t, "GET", edgesPath+"/"+f.edge, nil) }, read},
		{"module put", func() *testkit.Response {
			return f.a.Do(t, "PUT", f.routes()+"/"+id+"/compression", map[string]any{})
		}, write},
		{"module get", func() *testkit.Response { return f.a.Do(t, "GET", f.routes()+"/"+id+"/compression", nil) }, read},
		{"patch", func() *testkit.Response {
			return f.a.Do(t, "PATCH", f.routes()+"/"+id, map[string]any{"description": "x"})
		}, write},
		{"delete", func() *testkit.Response { return f.a.Do(t, "DELETE", f.routes()+"/"+id, nil) }, write},
	} {
		var res *testkit.Response
		got := s.RoundTripsOf(t, func() { res = c.do() })
		if res.Status >= 300 {
			t.Fatalf("%s: %d %s", c.name, res.Status, res.Body)
		}
		if c.name == "create" {
			id = res.JSON(t)["id"].(string)
		}
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%s made %v, want %v", c.name, got, c.want)
		}
	}
}
