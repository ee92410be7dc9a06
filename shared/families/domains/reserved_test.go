package domains_test

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"tunnelapi/shared/families/domains"
	"tunnelapi/shared/platform/config"
	"tunnelapi/shared/platform/store"
	"tunnelapi/shared/testing/testkit"
)

var base = config.Default("BASE_DOMAIN")

func TestReservedDomainsConformance(t *testing.T) {
	s := testkit.App(t)
	s.Conformance(t, testkit.FamilySpec{
		Family: domains.ReservedDomainsDescriptor,
		Create: func(t *testing.T, a *testkit.Account, n int) any {
			return map[string]any{"domain": testkit.UniqueName("conf", "example.com"), "description": fmt.Sprint(n)}
		},
		Update:      map[string]any{"description": "shop", "metadata": "m"},
		UpdateWants: map[string]any{"description": "shop", "metadata": "m", "certificate": nil, "certificate_management_policy": nil},
	})
}

func TestReservedDomainShapes(t *testing.T) {
	s, a := testkit.AppAccount(t)
	mine := testkit.UniqueName("app", base)
	got := a.Do(t, "POST", "/reserved_domains", map[string]any{"domain": strings.ToUpper(mine)}).Expect(t, http.StatusCreated)
	for k, want := range map[string]any{"domain": mine, "cname_target": nil, "acme_challenge_cname_target": nil, "region": "",
		"certificate": nil, "certificate_management_policy": nil, "certificate_management_status": nil} {
		if fmt.Sprint(got[k]) != fmt.Sprint(want) {
			t.Errorf("base-domain reservation: %s = %v, want %v", k, got[k], want)
		}
	}
	// No resolves_to member at all, as the platform's responses: the official Terraform
	// provider reads [] as an empty list and then, refreshed, as null, which made every update of
	// the domain fail as an inconsistent result.
	if rt, present := got["resolves_to"]; present {
		t.Errorf("resolves_to %v, want no member", rt)
	}

	custom := testkit.UniqueName("shop", "example.org")
	got = a.Do(t, "POST", "/reserved_domains", map[string]any{"domain": custom, "region": "eu",
		"resolves_to":                   []any{map[string]any{"value": "eu"}, map[string]any{"value": "global"}},
		"certificate_management_policy": map[string]any{"authority": "letsencrypt"}}).Expect(t, http.StatusCreated)
	cname, _ := got["cname_target"].(string)
	acme, _ := got["acme_challenge_cname_target"].(string)
	if !strings.HasSuffix(cname, ".dns."+base) || !strings.HasSuffix(acme, ".acme.dns."+base) || strings.TrimSuffix(cname, ".dns."+base) != strings.TrimSuffix(acme, ".acme.dns."+base) {
		t.Errorf("cname_target %q and acme_challenge_cname_target %q are not names in the service's zone", cname, acme)
	}
	if fmt.Sprint(got["certificate_management_policy"]) != "map[authority:letsencrypt private_key_type:ecdsa]" ||
		fmt.Sprint(got["certificate_management_status"]) != "map[provisioning_job:<nil> renews_at:<nil>]" || got["region"] != "eu" {
		t.Errorf("custom reservation with a policy: %v", got)
	}
	if fmt.Sprint(got["resolves_to"]) != "[map[value:eu] map[value:global]]" {
		t.Errorf("resolves_to %v", got["resolves_to"])
	}
	id := got["id"].(string)
	// The job the certificate worker is to run is recorded on the item.
	var item domains.ReservedDomainItem
	if err := s.DB.Get(t.Context(), store.ResourceKey(a.AccountID, id), &item); err != nil {
		t.Fatal(err)
	}
	if p := item.Pending; p == nil || p.Reason != domains.ReasonPolicy || len(p.Domains) != 1 || p.Domains[0] != custom || p.PrivateKeyType != "ecdsa" {
		t.Fatalf("pending job %+v", item.Pending)
	}
	// Detaching the policy stops management; a PATCH sets it again with a new job.
	a.Do(t, "DELETE", "/reserved_domains/"+id+"/certificate_management_policy", nil).Expect(t, http.StatusNoContent)
	got = a.Do(t, "GET", "/reserved_domains/"+id, nil).Expect(t, http.StatusOK)
	if got["certificate_management_policy"] != nil || got["certificate_management_status"] != nil || got["acme_challenge_cname_target"] != nil || got["cname_target"] != cname {
		t.Fatalf("after detaching the policy: %v", got)
	}
	got = a.Do(t, "PATCH", "/reserved_domains/"+id, map[string]any{"certificate_management_policy": map[string]any{"private_key_type": "rsa"}}).Expect(t, http.StatusOK)
	if fmt.Sprint(got["certificate_management_policy"]) != "map[authority:letsencrypt private_key_type:rsa]" || got["acme_challenge_cname_target"] != acme {
		t.Fatalf("after PATCHing a policy: %v", got)
	}
	// A certificate cannot be detached past its policy.
	a.Do(t, "DELETE", "/reserved_domains/"+id+"/certificate", nil).ExpectError(t, http.StatusBadRequest, "ERR_NGROK_436", "id")
	// Clearing resolves_to leaves the member out again, in the update and the reads.
	got = a.Do(t, "PATCH", "/reserved_domains/"+id, map[string]any{"resolves_to": []any{}}).Expect(t, http.StatusOK)
	if rt, present := got["resolves_to"]; present {
		t.Errorf("after clearing resolves_to: %v, want no member", rt)
	}
	if rt, present := a.Do(t, "GET", "/reserved_domains/"+id, nil).Expect(t, http.StatusOK)["resolves_to"]; present {
		t.Errorf("read after clearing resolves_to: %v, want no member", rt)
	}
}

// Every bad input gets its code, names its field and stores nothing.
func TestReservedDomainBadInput(t *testing.T) {
	s, a := testkit.AppAccount(t)
	keep := testkit.UniqueName("keep", "example.com")
	id := a.Do(t, "POST", "/reserved_domains", map[string]any{"domain": keep, "description": "keep"}).Expect(t, http.StatusCreated)["id"].(string)
	other := s.NewAccount(t)
	otherCert := uploadCert(t, other, "*.example.net")
	cert := uploadCert(t, a, "www.example.net")
	long := strings.Repeat("x", 256)
	domain := func(d string) map[string]any { return map[string]any{"domain": d} }
	with := func(d string, kv ...any) map[string]any {
		m := domain(d)
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	policy := map[string]any{"authority": "letsencrypt"}
	cases := []struct {
		name        string
		body        any
		code, field string
	}{
		{"no domain", map[string]any{"description": "x"}, "ERR_NGROK_448", "domain"},
		{"empty domain", domain(""), "ERR_NGROK_448", "domain"},
		{"one label", domain("localhost"), "ERR_NGROK_448", "domain"},
		{"bare public suffix", domain("co.uk"), "ERR_NGROK_448", "domain"},
		{"star inside", domain("a.*.example.com"), "ERR_NGROK_402", "domain"},
		{"star in a label", domain("*a.example.com"), "ERR_NGROK_403", "domain"},
		{"star at the end of a label", domain("a*.example.com"), "ERR_NGROK_403", "domain"},
		{"service zone", domain("x.dns." + base), "ERR_NGROK_404", "domain"},
		{"base domain itself", domain(base), "ERR_NGROK_404", "domain"},
		{"invalid character", domain("a!b.example.com"), "ERR_NGROK_406", "domain"},
		{"non-ASCII", domain("bücher.example.com"), "ERR_NGROK_406", "domain"},
		{"space", domain("a b.example.com"), "ERR_NGROK_406", "domain"},
		{"leading dot", domain(".example.com"), "ERR_NGROK_407", "domain"},
		{"label starting with a hyphen", domain("-a.example.com"), "ERR_NGROK_407", "domain"},
		{"trailing dot", domain("a.example.com."), "ERR_NGROK_408", "domain"},
		{"label ending with a hyphen", domain("a-.example.com"), "ERR_NGROK_408", "domain"},
		{"double dot", domain("a..example.com"), "ERR_NGROK_409", "domain"},
		{"hyphens at 3-4", domain("ab--cd.example.com"), "ERR_NGROK_410", "domain"},
		{"non-public TLD", domain("app.internal"), "ERR_NGROK_411", "domain"},
		{"unknown TLD", domain("app.example.notatld"), "ERR_NGROK_411", "domain"},
		{"wildcard over a TLD", domain("*.com"), "ERR_NGROK_416", "domain"},
		{"wildcard over a public suffix", domain("*.co.uk"), "ERR_NGROK_416", "domain"},
		{"name too long", domain(strings.Repeat("a.", 125) + "example.com"), "ERR_NGROK_423", "domain"},
		{"label too long", domain(strings.Repeat("a", 64) + ".example.com"), "ERR_NGROK_423", "domain"},
		{"invalid punycode", domain("xn--zz.example.com"), "ERR_NGROK_429", "domain"},
		{"empty punycode", domain("xn--a.example.com"), "ERR_NGROK_429", "domain"},
		{"underscore", domain("a_b.example.com"), "ERR_NGROK_438", "domain"},
		{"two labels under the base domain", domain("a.b." + base), "ERR_NGROK_450", "domain"},
		{"wildcard under the base domain", domain("*." + base), "ERR_NGROK_450", "domain"},
		{"domain not a string", domain("x") /* replaced below */, "", ""},
		{"region", with("ok.example.com", "region", "mars"), "ERR_NGROK_400", "region"},
		{"resolves_to region", with("ok.example.com", "resolves_to", []any{map[string]any{"value": "mars"}}), "ERR_NGROK_400", "resolves_to[0].value"},
		{"resolves_to twice", with("ok.example.com", "resolves_to", []any{map[string]any{"value": "eu"}, map[string]any{"value": "eu"}}), "ERR_NGROK_456", "resolves_to[1].value"},
		{"long description", with("ok.example.com", "description", long), "ERR_NGROK_420", "description"},
		{"long metadata", with("ok.example.com", "metadata", strings.Repeat("m", 4097)), "ERR_NGROK_421", "metadata"},
		{"certificate and policy", with("www.example.net", "certificate_id", cert, "certificate_management_policy", policy), "ERR_NGROK_434", "certificate_id"},
		{"authority", with("ok.example.com", "certificate_management_policy", map[string]any{"authority": "zerossl"}), "ERR_NGROK_435", "certificate_management_policy.authority"},
		{"private key type", with("ok.example.com", "certificate_management_policy", map[string]any{"private_key_type": "dsa"}), "ERR_NGROK_215", "certificate_management_policy.private_key_type"},
		{"policy on the base domain", with("ok."+base, "certificate_management_policy", policy), "ERR_NGROK_439", "certificate_management_policy"},
		{"certificate on the base domain", with("ok."+base, "certificate_id", cert), "ERR_NGROK_440", "certificate_id"},
		{"certificate of another account", with("www.example.net", "certificate_id", otherCert), "ERR_NGROK_1965", "certificate_id"},
		{"certificate id malformed", with("www.example.net", "certificate_id", "cert_x"), "ERR_NGROK_215", "certificate_id"},
		{"unknown field", with("ok.example.com", "name", "x"), "ERR_NGROK_214", "name"},
	}
	for _, c := range cases {
		if c.code == "" {
			c.body, c.code, c.field = map[string]any{"domain": 7}, "ERR_NGROK_215", "domain"
		}
		t.Run(c.name, func(t *testing.T) {
			a.Do(t, "POST", "/reserved_domains", c.body).ExpectError(t, http.StatusBadRequest, c.code, c.field)
		})
	}
	updates := []struct {
		name        string
		body        any
		code, field string
	}{
		{"empty update", map[string]any{}, "ERR_NGROK_422", ""},
		{"long description", map[string]any{"description": long}, "ERR_NGROK_420", "description"},
		{"domain is fixed", map[string]any{"domain": "other.example.com"}, "ERR_NGROK_214", "domain"},
		{"region is fixed", map[string]any{"region": "eu"}, "ERR_NGROK_214", "region"},
		{"certificate and policy", map[string]any{"certificate_id": cert, "certificate_management_policy": policy}, "ERR_NGROK_434", "certificate_id"},
		{"authority", map[string]any{"certificate_management_policy": map[string]any{"authority": "x"}}, "ERR_NGROK_435", "certificate_management_policy.authority"},
		{"resolves_to twice", map[string]any{"resolves_to": []any{map[string]any{"value": "us"}, map[string]any{"value": "us"}}}, "ERR_NGROK_456", "resolves_to[1].value"},
	}
	for _, c := range updates {
		t.Run("update/"+c.name, func(t *testing.T) {
			a.Do(t, "PATCH", "/reserved_domains/"+id, c.body).ExpectError(t, http.StatusBadRequest, c.code, c.field)
		})
	}
	ids, _ := a.WalkPages(t, "/reserved_domains", "reserved_domains")
	if len(ids) != 1 {
		t.Fatalf("%d reservations stored, want 1", len(ids))
	}
	got := a.Do(t, "GET", "/reserved_domains/"+id, nil).Expect(t, http.StatusOK)
	if got["description"] != "keep" || got["certificate_management_policy"] != nil || got["certificate"] != nil || got["resolves_to"] != nil {
		t.Fatalf("refused updates changed the reservation: %v", got)
	}
	// The names refused above are all still free.
	a.Do(t, "POST", "/reserved_domains", domain("www.example.net")).Expect(t, http.StatusCreated)
}

// A name is reserved once across all accounts: 413 for the account holding it, 414 for another,
// whatever the case it is written in; deleting the reservation frees it.
func TestReservedDomainUniqueness(t *testing.T) {
	_, a, b := testkit.AppTwoAccounts(t)
	name := testkit.UniqueName("dup", "example.com")
	id := a.Do(t, "POST", "/reserved_domains", map[string]any{"domain": name}).Expect(t, http.StatusCreated)["id"].(string)
	a.Do(t, "POST", "/reserved_domains", map[string]any{"domain": name}).ExpectError(t, http.StatusBadRequest, "ERR_NGROK_413", "domain")
	a.Do(t, "POST", "/reserved_domains", map[string]any{"domain": strings.ToUpper(name)}).ExpectError(t, http.StatusBadRequest, "ERR_NGROK_413", "domain")
	b.Do(t, "POST", "/reserved_domains", map[string]any{"domain": name}).ExpectError(t, http.StatusBadRequest, "ERR_NGROK_414", "domain")
	// A wildcard is a name of its own.
	b.Do(t, "POST", "/reserved_domains", map[string]any{"domain": "*." + name}).Expect(t, http.StatusCreated)
	a.Do(t, "DELETE", "/reserved_domains/"+id, nil).Expect(t, http.StatusNoContent)
	b.Do(t, "POST", "/reserved_domains", map[string]any{"domain": name}).Expect(t, http.StatusCreated)
	a.Do(t, "POST", "/reserved_domains", map[string]any{"domain": name}).ExpectError(t, http.StatusBadRequest, "ERR_NGROK_414", "domain")
}

// 20 concurrent reservations of one name from two accounts: exactly one wins; the winner's
// account is told 413 and the other 414.
func TestConcurrentReservationsOfOneDomain(t *testing.T) {
	s := testkit.App(t)
	accounts := []*testkit.Account{s.NewAccount(t), s.NewAccount(t)}
	name := testkit.UniqueName("race", "example.com")
	const n = 20
	res := testkit.AtOnce(n, func(i int) *testkit.Response {
		return accounts[i%2].Do(t, "POST", "/reserved_domains", map[string]any{"domain": name})
	})
	winner := -1
	for i, r := range res {
		if r.Status == http.StatusCreated {
			if winner >= 0 {
				t.Fatalf("reservations %d and %d both won", winner, i)
			}
			winner = i
		}
	}
	if winner < 0 {
		t.Fatal("no reservation won")
	}
	for i, r := range res {
		if i == winner {
			continue
		}
		code := "ERR_NGROK_414"
		if i%2 == winner%2 {
			code = "ERR_NGROK_413"
		}
		r.ExpectError(t, http.StatusBadRequest, code, "domain")
	}
	for i, a := range accounts {
		ids, _ := a.WalkPages(t, "/reserved_domains", "reserved_domains")
		if want := map[bool]int{true: 1, false: 0}[i == winner%2]; len(ids) != want {
			t.Fatalf("account %d holds %d reservations, want %d", i, len(ids), want)
		}
	}
}

// An uploaded certificate covering the domain is referenced by it: the certificate cannot be
// deleted until the domain detaches it.
func TestReservedDomainCertificate(t *testing.T) {
	s, a := testkit.AppAccount(t)
	parent := testkit.UniqueName("certs", "example.org")
	wild := uploadCert(t, a, "*."+parent)
	got := a.Do(t, "POST", "/reserved_domains", map[string]any{"domain": "www." + parent, "certificate_id": wild}).Expect(t, http.StatusCreated)
	id := got["id"].(string)
	if ref, _ := got["certificate"].(map[string]any); ref["id"] != wild || ref["uri"] != s.Server.URL+"/tls_certificates/"+wild {
		t.Fatalf("certificate %v, want a ref to %s", got["certificate"], wild)
	}
	a.Do(t, "DELETE", "/tls_certificates/"+wild, nil).ExpectError(t, http.StatusBadRequest, "ERR_NGROK_1966", "id")
	// Moving to another certificate moves the reference.
	exact := uploadCert(t, a, "www."+parent)
	a.Do(t, "PATCH", "/reserved_domains/"+id, map[string]any{"certificate_id": exact}).Expect(t, http.StatusOK)
	a.Do(t, "DELETE", "/tls_certificates/"+wild, nil).Expect(t, http.StatusNoContent)
	a.Do(t, "DELETE", "/tls_certificates/"+exact, nil).ExpectError(t, http.StatusBadRequest, "ERR_NGROK_1966", "id")
	a.Do(t, "DELETE", "/reserved_domains/"+id+"/certificate", nil).Expect(t, http.StatusNoContent)
	if got := a.Do(t, "GET", "/reserved_domains/"+id, nil).Expect(t, http.StatusOK); got["certificate"] != nil {
		t.Fatalf("certificate %v after detaching it", got["certificate"])
	}
	a.Do(t, "DELETE", "/tls_certificates/"+exact, nil).Expect(t, http.StatusNoContent)
	// Deleting a domain releases its certificate.
	again := uploadCert(t, a, "www."+parent)
	a.Do(t, "PATCH", "/reserved_domains/"+id, map[string]any{"certificate_id": again}).Expect(t, http.StatusOK)
	a.Do(t, "DELETE", "/reserved_domains/"+id, nil).Expect(t, http.StatusNoContent)
	a.Do(t, "DELETE", "/tls_certificates/"+again, nil).Expect(t, http.StatusNoContent)
}

// A certificate_management_policy set on a domain with an uploaded certificate takes its place,
// as the platform's recorded update does (200, certificate null): the certificate is detached
// and released. A certificate_id on a domain a policy manages is still 434, as is a body with
// both.
func TestReservedDomainPolicyReplacesCertificate(t *testing.T) {
	s, a := testkit.AppAccount(t)
	name := testkit.UniqueName("myapp", "example.org")
	uploaded := uploadCert(t, a, name)
	id := a.Do(t, "POST", "/reserved_domains", map[string]any{"domain": name, "certificate_id": uploaded}).Expect(t, http.StatusCreated)["id"].(string)
	policy := map[string]any{"authority": "letsencrypt"}
	a.Do(t, "PATCH", "/reserved_domains/"+id, map[string]any{"certificate_id": uploaded, "certificate_management_policy": policy}).
		ExpectError(t, http.StatusBadRequest, "ERR_NGROK_434", "certificate_id")
	got := a.Do(t, "PATCH", "/reserved_domains/"+id, map[string]any{"description": "point-of-sale", "certificate_management_policy": policy}).Expect(t, http.StatusOK)
	if got["certificate"] != nil || fmt.Sprint(got["certificate_management_policy"]) != "map[authority:letsencrypt private_key_type:ecdsa]" {
		t.Fatalf("after setting a policy: certificate %v, policy %v; want null and the policy", got["certificate"], got["certificate_management_policy"])
	}
	var item domains.ReservedDomainItem
	if err := s.DB.Get(t.Context(), store.ResourceKey(a.AccountID, id), &item); err != nil {
		t.Fatal(err)
	}
	if item.CertificateID != "" || item.Pending == nil {
		t.Fatalf("stored certificate %q and pending job %+v, want none and a job", item.CertificateID, item.Pending)
	}
	a.Do(t, "PATCH", "/reserved_domains/"+id, map[string]any{"certificate_id": uploaded}).
		ExpectError(t, http.StatusBadRequest, "ERR_NGROK_434", "certificate_id")
	a.Do(t, "DELETE", "/tls_certificates/"+uploaded, nil).Expect(t, http.StatusNoContent)
}

// A certificate whose names do not cover the domain is accepted, as the platform accepts it (its
// recorded create names a certificate for example.com, without SANs, for myapp.mydomain.com and
// answers 201): it is attached and referenced like a covering one, on create and on update.
func TestReservedDomainCertificateNotCovering(t *testing.T) {
	_, a := testkit.AppAccount(t)
	other := uploadCertCN(t, a, "example.com")
	name := testkit.UniqueName("myapp", "example.net")
	got := a.Do(t, "POST", "/reserved_domains", map[string]any{"domain": name, "certificate_id": other}).Expect(t, http.StatusCreated)
	id := got["id"].(string)
	if refID(got, "certificate") != other {
		t.Fatalf("certificate %v, want a ref to %s", got["certificate"], other)
	}
	a.Do(t, "DELETE", "/tls_certificates/"+other, nil).ExpectError(t, http.StatusBadRequest, "ERR_NGROK_1966", "id")
	elsewhere := uploadCert(t, a, "www.example.org", "*.example.org")
	got = a.Do(t, "PATCH", "/reserved_domains/"+id, map[string]any{"certificate_id": elsewhere}).Expect(t, http.StatusOK)
	if refID(got, "certificate") != elsewhere {
		t.Fatalf("certificate %v after the PATCH, want a ref to %s", got["certificate"], elsewhere)
	}
	a.Do(t, "DELETE", "/tls_certificates/"+other, nil).Expect(t, http.StatusNoContent)
	a.Do(t, "DELETE", "/tls_certificates/"+elsewhere, nil).ExpectError(t, http.StatusBadRequest, "ERR_NGROK_1966", "id")
	// A certificate that does not exist is still refused.
	a.Do(t, "PATCH", "/reserved_domains/"+id, map[string]any{"certificate_id": other}).ExpectError(t, http.StatusBadRequest, "ERR_NGROK_1965", "certificate_id")
}

// A cloud endpoint on a reserved domain (or under a reserved wildcard) of its account carries
// the domain's ref, and the domain cannot be deleted while the endpoint exists (446); another
// account's public endpoint on the domain is refused (320).
func TestEndpointsOnReservedDomains(t *testing.T) {
	s, a, b := testkit.AppTwoAccounts(t)
	host := testkit.UniqueName("api", "example.net")
	wild := testkit.UniqueName("apps", "example.net")
	d := a.Do(t, "POST", "/reserved_domains", map[string]any{"domain": host}).Expect(t, http.StatusCreated)["id"].(string)
	w := a.Do(t, "POST", "/reserved_domains", map[string]any{"domain": "*." + wild}).Expect(t, http.StatusCreated)["id"].(string)
	ep := func(acct *testkit.Account, url string) map[string]any {
		return acct.Do(t, "POST", "/endpoints", map[string]any{"url": url, "traffic_policy": "on_http_request: []"}).Expect(t, http.StatusCreated)
	}
	ref := func(e map[string]any) any { return refID(e, "domain") }
	e1 := ep(a, "https://"+host)
	if ref(e1) != d || e1["domain"].(map[string]any)["uri"] != s.Server.URL+"/reserved_domains/"+d {
		t.Fatalf("endpoint on %s: domain %v, want %s", host, e1["domain"], d)
	}
	e2 := ep(a, "https://x."+wild)
	if ref(e2) != w {
		t.Fatalf("endpoint under *.%s: domain %v, want %s", wild, e2["domain"], w)
	}
	b.Do(t, "POST", "/endpoints", map[string]any{"url": "https://" + host, "traffic_policy": "on_http_request: []"}).
		ExpectError(t, http.StatusBadRequest, "ERR_NGROK_320", "url")
	a.Do(t, "DELETE", "/reserved_domains/"+d, nil).ExpectError(t, http.StatusBadRequest, "ERR_NGROK_446", "id")
	// Moving the endpoint onto another domain, then off every domain, releases the one it
	// leaves.
	if moved := moveEndpoint(t, s, a, e1["id"].(string), "https://y."+wild); ref(moved) != w {
		t.Fatalf("endpoint moved under *.%s: domain %v, want %s", wild, moved["domain"], w)
	}
	if moved := moveEndpoint(t, s, a, e1["id"].(string), "https://elsewhere.internal", "bindings", []string{"internal"}); moved["domain"] != nil {
		t.Fatalf("endpoint moved off the domain still has domain %v", moved["domain"])
	}
	a.Do(t, "DELETE", "/reserved_domains/"+d, nil).Expect(t, http.StatusNoContent)
	a.Do(t, "DELETE", "/reserved_domains/"+w, nil).ExpectError(t, http.StatusBadRequest, "ERR_NGROK_446", "id")
	a.Do(t, "DELETE", "/endpoints/"+e2["id"].(string), nil).Expect(t, http.StatusNoContent)
	a.Do(t, "DELETE", "/reserved_domains/"+w, nil).Expect(t, http.StatusNoContent)
}

// uploadCert uploads a fresh self-signed certificate for names as a and returns its id.
func uploadCert(t *testing.T, a *testkit.Account, names ...string) string {
	t.Helper()
	return upload(t, a, names[0], names)
}

// uploadCertCN uploads a fresh self-signed certificate whose only name is its subject's common
// name, without SANs, as the platform's recorded examples upload.
func uploadCertCN(t *testing.T, a *testkit.Account, cn string) string {
	t.Helper()
	return upload(t, a, cn, nil)
}

func upload(t *testing.T, a *testkit.Account, cn string, names []string) string {
	t.Helper()
	certPEM, keyPEM, _ := testkit.SelfSigned(t, &x509.Certificate{Subject: pkix.Name{CommonName: cn}, DNSNames: names,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().AddDate(0, 3, 0), KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
	return a.Do(t, "POST", "/tls_certificates", map[string]any{
		"certificate_pem": certPEM,
		"private_key_pem": keyPEM,
	}).Expect(t, http.StatusCreated)["id"].(string)
}
