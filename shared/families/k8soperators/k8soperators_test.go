package k8soperators_test

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"tunnelapi/shared/families/k8soperators"
	"tunnelapi/shared/platform/seal"
	"tunnelapi/shared/platform/store"
	"tunnelapi/shared/testing/testkit"
)

const path = k8soperators.Path

// suite is the package's stack and the operator CA keys its tests made (read back from the
// table and opened), scanned for in the table and the logs after every test.
var suite = testkit.SecretSuite{Sealed: "private_key"}

// TestMain runs the suite, then checks that no operator CA key is anywhere in the table or in a
// log line in any form: each CA in the table is opened (with its account and the sealing id)
// and its key added to the needles.
func TestMain(m *testing.M) {
	suite.Main(m, func(ctx context.Context, items []store.Item) []string {
		var problems []string
		for _, it := range items {
			var ca struct {
				store.Key
				PrivateKey seal.Sealed `dynamodbav:"private_key"`
			}
			if err := store.Unmarshal(it, &ca); err != nil || !strings.HasPrefix(ca.PK, "C#k8sop#") {
				continue
			}
			account := strings.TrimPrefix(ca.PK, "C#k8sop#")
			key, err := seal.OpenPrivateKey(ctx, suite.Stack.Deps.Kit.Seal, ca.PrivateKey, account, k8soperators.CASealID)
			if err != nil {
				problems = append(problems, fmt.Sprintf("open the operator CA of %s: %v", account, err))
				continue
			}
			suite.Needles.AddKey("operator CA of "+account, key)
		}
		return problems
	})
}

func TestConformance(t *testing.T) {
	s := suite.App(t)
	s.Conformance(t, testkit.FamilySpec{
		Family: k8soperators.KubernetesOperatorsDescriptor,
		Create: func(t *testing.T, a *testkit.Account, n int) any {
			return map[string]any{"description": fmt.Sprintf("operator %d", n), "enabled_features": []string{"ingress"},
				"deployment": map[string]any{"name": "ngrok-operator", "namespace": "ngrok-operator"}}
		},
		Update:      map[string]any{"metadata": `{"environment": "production"}`, "deployment": map[string]any{"version": "0.19.1"}},
		UpdateWants: map[string]any{"metadata": `{"environment": "production"}`},
		// Prepare (CSR signing, the CA unsealed) runs only for a verified caller: one read of
		// the caller's items before the transaction.
		RoundTrips: map[string]map[string]int{"create": {"BatchGetItem": 1, "TransactWriteItems": 1}},
	})
}

// openssl runs the openssl command line in dir and returns its standard output.
func openssl(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("openssl", args...)
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("openssl %s: %v: %s", strings.Join(args, " "), err, errb.String())
	}
	return out.String()
}

// opensslCSR makes a key with openssl's -newkey argument and returns its CSR (PEM).
func opensslCSR(t *testing.T, dir, newkey string) string {
	t.Helper()
	openssl(t, dir, "req", "-new", "-newkey", newkey, "-nodes", "-keyout", "key.pem", "-subj", "/CN=ngrok-operator", "-out", "csr.pem")
	b, err := os.ReadFile(filepath.Join(dir, "csr.pem"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// caPEM is the operator CA of account, as the table holds it.
func caPEM(t *testing.T, s *testkit.Stack, account string) string {
	t.Helper()
	var ca struct {
		Cert []byte `dynamodbav:"cert"`
	}
	if err := s.DB.Get(t.Context(), store.OperatorCAKey(account), &ca); err != nil {
		t.Fatalf("the operator CA of %s: %v", account, err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Cert}))
}

// A binding's CSR, made by openssl, is signed into binding.cert: a client certificate for the
// operator's id, valid for a year from the signing, that openssl verifies against the
// account's operator CA (and not against another account's). A CSR in a PATCH replaces it.
func TestBindingCertificateVerifiesWithOpenSSL(t *testing.T) {
	s := suite.App(t)
	a, other := s.NewAccount(t), s.NewAccount(t)
	dir := t.TempDir()
	before := time.Now().Truncate(time.Second)
	op := a.Do(t, "POST", path, map[string]any{"enabled_features": []string{"bindings"},
		"binding": map[string]any{"csr": opensslCSR(t, dir, "rsa:2048")}}).Expect(t, http.StatusCreated)
	suite.Needles.AssertAbsent(t, []byte(fmt.Sprint(op)))
	id := op["id"].(string)
	cert := op["binding"].(map[string]any)["cert"].(map[string]any)
	nb, err1 := time.Parse(time.RFC3339, cert["not_before"].(string))
	na, err2 := time.Parse(time.RFC3339, cert["not_after"].(string))
	if err1 != nil || err2 != nil || nb.Before(before) || nb.After(time.Now()) || na.Sub(nb) != 365*24*time.Hour {
		t.Fatalf("validity %v – %v (%v %v), want from the signing for 365 days", cert["not_before"], cert["not_after"], err1, err2)
	}
	os.WriteFile(filepath.Join(dir, "cert.pem"), []byte(cert["cert"].(string)), 0o600)
	os.WriteFile(filepath.Join(dir, "ca.pem"), []byte(caPEM(t, s, a.AccountID)), 0o600)
	if out := openssl(t, dir, "verify", "-CAfile", "ca.pem", "-purpose", "sslclient", "cert.pem"); !strings.Contains(out, "cert.pem: OK") {
		t.Fatalf("openssl verify: %s", out)
	}
	subject := openssl(t, dir, "x509", "-in", "cert.pem", "-noout", "-subject", "-dates")
	if !strings.Contains(subject, "CN = "+id) && !strings.Contains(subject, "CN="+id) {
		t.Errorf("the certificate's subject is not the operator's id %s: %s", id, subject)
	}
	// The certificate is for the CSR's key: openssl's key and the certificate have one modulus.
	if openssl(t, dir, "x509", "-in", "cert.pem", "-noout", "-modulus") != openssl(t, dir, "rsa", "-in", "key.pem", "-noout", "-modulus") {
		t.Error("the certificate is not for the CSR's key")
	}
	// Another account's CA does not vouch for it.
	other.Do(t, "POST", path, map[string]any{"binding": map[string]any{"csr": testkit.CSRPEM(t)}}).Expect(t, http.StatusCreated)
	os.WriteFile(filepath.Join(dir, "other.pem"), []byte(caPEM(t, s, other.AccountID)), 0o600)
	cmd := exec.Command("openssl", "verify", "-CAfile", "other.pem", "cert.pem")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err == nil {
		t.Errorf("another account's operator CA verifies the certificate: %s", out)
	}
	// A new CSR (an EC key) in a PATCH is signed into a new certificate by the same CA.
	openssl(t, dir, "ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", "ec.pem")
	openssl(t, dir, "req", "-new", "-key", "ec.pem", "-subj", "/CN=renewed", "-out", "ec.csr")
	ecCSR, _ := os.ReadFile(filepath.Join(dir, "ec.csr"))
	got := a.Do(t, "PATCH", path+"/"+id, map[string]any{"binding": map[string]any{"csr": string(ecCSR)}}).Expect(t, http.StatusOK)
	renewed := got["binding"].(map[string]any)["cert"].(map[string]any)["cert"].(string)
	if renewed == cert["cert"] {
		t.Fatal("a PATCH with a new CSR kept the old certificate")
	}
	os.WriteFile(filepath.Join(dir, "renewed.pem"), []byte(renewed), 0o600)
	if out := openssl(t, dir, "verify", "-CAfile", "ca.pem", "-purpose", "sslclient", "renewed.pem"); !strings.Contains(out, "renewed.pem: OK") {
		t.Fatalf("openssl verify of the renewed certificate: %s", out)
	}
	if read := a.Do(t, "GET", path+"/"+id, nil).Expect(t, http.StatusOK); read["binding"].(map[string]any)["cert"].(map[string]any)["cert"] != renewed {
		t.Error("GET does not show the renewed certificate")
	}
}

// A CSR that does not parse, whose signature fails, or whose key is weak is a 400 naming
// binding.csr, on create and update alike, and nothing is created or changed.
func TestBadCSRs(t *testing.T) {
	_, a := suite.AppAccount(t)
	dir := t.TempDir()
	good := testkit.CSRPEM(t)
	block, _ := pem.Decode([]byte(good))
	tampered := bytes.Clone(block.Bytes)
	tampered[len(tampered)-3] ^= 0xff // inside the signature
	cases := map[string]string{
		"not PEM":         "hello",
		"a certificate":   strings.ReplaceAll(good, "CERTIFICATE REQUEST", "CERTIFICATE"),
		"garbage DER":     string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: []byte("not a request")})),
		"bad signature":   string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: tampered})),
		"rsa 1024":        opensslCSR(t, dir, "rsa:1024"),
		"curve secp256k1": opensslCSR(t, dir, "ec:"+ecParams(t, dir, "secp256k1")),
		"curve P-224":     opensslCSR(t, dir, "ec:"+ecParams(t, dir, "secp224r1")),
	}
	op := a.Do(t, "POST", path, map[string]any{"description": "kept"}).Expect(t, http.StatusCreated)
	item := path + "/" + op["id"].(string)
	for name, csr := range cases {
		t.Run(name, func(t *testing.T) {
			a.Do(t, "POST", path, map[string]any{"binding": map[string]any{"csr": csr}}).
				ExpectError(t, http.StatusBadRequest, "ERR_NGROK_215", "binding.csr")
			a.Do(t, "PATCH", item, map[string]any{"description": "changed", "binding": map[string]any{"csr": csr}}).
				ExpectError(t, http.StatusBadRequest, "ERR_NGROK_215", "binding.csr")
		})
	}
	list := a.Do(t, "GET", path, nil).Expect(t, http.StatusOK)["operators"].([]any)
	if len(list) != 1 || list[0].(map[string]any)["description"] != "kept" {
		t.Errorf("after the refusals the account holds %v, want the one operator unchanged", list)
	}
}

// ecParams writes openssl's parameters of curve and returns their file name.
func ecParams(t *testing.T, dir, curve string) string {
	t.Helper()
	file := curve + ".param"
	openssl(t, dir, "ecparam", "-name", curve, "-out", file)
	return file
}

// The other members' rules: enabled_features a subset of bindings, ingress and gateway in any
// case (stored in lower case, repeats once); region global or a deployment region; selectors
// that compile; an ingress endpoint host:port; deployment strings within 255 bytes. Each
// refusal names its field.
func TestMemberRules(t *testing.T) {
	_, a := suite.AppAccount(t)
	got := a.Do(t, "POST", path, map[string]any{"enabled_features": []string{"Ingress", "GATEWAY", "ingress"}}).Expect(t, http.StatusCreated)
	if fmt.Sprint(got["enabled_features"]) != "[ingress gateway]" || got["region"] != "global" {
		t.Errorf("enabled_features %v region %v, want [ingress gateway] and global", got["enabled_features"], got["region"])
	}
	item := path + "/" + got["id"].(string)
	got = a.Do(t, "PATCH", item, map[string]any{"enabled_features": []string{}, "region": "eu"}).Expect(t, http.StatusOK)
	if fmt.Sprint(got["enabled_features"]) != "[]" || got["region"] != "eu" {
		t.Errorf("after the PATCH enabled_features %v region %v", got["enabled_features"], got["region"])
	}
	long := strings.Repeat("x", 256)
	for _, c := range []struct {
		name  string
		body  map[string]any
		field string
	}{
		{"unknown feature", map[string]any{"enabled_features": []string{"ingress", "tunnels"}}, "enabled_features"},
		{"region", map[string]any{"region": "mars"}, "region"},
		{"selector", map[string]any{"binding": map[string]any{"endpoint_selectors": []string{"obj.url =="}}}, "binding.endpoint_selectors"},
		{"selector name", map[string]any{"binding": map[string]any{"endpoint_selectors": []string{"endpoint.url == 'x'"}}}, "binding.endpoint_selectors"},
		{"ingress endpoint", map[string]any{"binding": map[string]any{"ingress_endpoint": "https://connect.example.com"}}, "binding.ingress_endpoint"},
		{"deployment name", map[string]any{"deployment": map[string]any{"name": long}}, "deployment.name"},
		{"unknown deployment member", map[string]any{"deployment": map[string]any{"replicas": 3}}, "deployment.replicas"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code := "ERR_NGROK_215"
			if strings.HasPrefix(c.name, "unknown deployment") {
				code = "ERR_NGROK_214"
			}
			a.Do(t, "POST", path, c.body).ExpectError(t, http.StatusBadRequest, code, c.field)
			a.Do(t, "PATCH", item, c.body).ExpectError(t, http.StatusBadRequest, code, c.field)
		})
	}
	// Namespace and cluster name are set at registration only.
	a.Do(t, "PATCH", item, map[string]any{"deployment": map[string]any{"namespace": "other"}}).
		ExpectError(t, http.StatusBadRequest, "ERR_NGROK_214", "deployment.namespace")
}

// The list takes a filter over the operator's wire form, as the platform's lists do.
func TestListFilter(t *testing.T) {
	_, a := suite.AppAccount(t)
	for _, ns := range []string{"alpha", "beta", "alpha"} {
		a.Do(t, "POST", path, map[string]any{"deployment": map[string]any{"name": "op", "namespace": ns}}).Expect(t, http.StatusCreated)
	}
	got := a.Do(t, "GET", path+"?filter="+url.QueryEscape(`obj.deployment.namespace == "alpha"`), nil).Expect(t, http.StatusOK)
	if n := len(got["operators"].([]any)); n != 2 {
		t.Errorf("the filter matched %d operators, want 2", n)
	}
	a.Do(t, "GET", path+"?filter="+url.QueryEscape(`obj.deployment.namespace ==`), nil).ExpectError(t, http.StatusBadRequest, "ERR_NGROK_250", "filter")
}

// endpointPolicy is a valid traffic policy for the endpoints the bound endpoint tests make.
const endpointPolicy = "on_http_request:\n  - actions:\n      - type: deny\n        config:\n          status_code: 404\n"

// An operator's bound endpoints are its account's endpoints with the kubernetes binding that
// one of its selectors matches, once the bindings feature is enabled: newest first, as GET
// /endpoints/{id} shows them, paged by endpoint id; none for an operator without the feature
// or a selector; a 404 for an operator of another account.
func TestBoundEndpoints(t *testing.T) {
	s, a := suite.AppAccount(t)
	other := s.NewAccount(t)
	kube := func(acct *testkit.Account, name string) map[string]any {
		return acct.Do(t, "POST", "/endpoints", map[string]any{"url": "https://" + testkit.UniqueName(name, "example.com"),
			"bindings": []string{"kubernetes"}, "traffic_policy": endpointPolicy}).Expect(t, http.StatusCreated)
	}
	first, second, third := kube(a, "first"), kube(a, "second"), kube(a, "third")
	a.Do(t, "POST", "/endpoints", map[string]any{"url": "https://" + testkit.UniqueName("private", "internal"),
		"traffic_policy": endpointPolicy}).Expect(t, http.StatusCreated) // bound to no operator: internal
	kube(other, "theirs")
	op := func(body map[string]any) string {
		return a.Do(t, "POST", path, body).Expect(t, http.StatusCreated)["id"].(string)
	}
	bound := func(id, query string) map[string]any {
		return a.Do(t, "GET", path+"/"+id+"/bound_endpoints"+query, nil).Expect(t, http.StatusOK)
	}
	ids := func(page map[string]any) []string {
		var out []string
		for _, e := range page["endpoints"].([]any) {
			out = append(out, e.(map[string]any)["id"].(string))
		}
		return out
	}
	all := op(map[string]any{"enabled_features": []string{"bindings"}, "binding": map[string]any{"endpoint_selectors": []string{"true"}}})
	page := bound(all, "")
	// Newest first is descending id (ids of one second sort in no particular order).
	want := []string{first["id"].(string), second["id"].(string), third["id"].(string)}
	slices.Sort(want)
	slices.Reverse(want)
	if got := ids(page); !slices.Equal(got, want) {
		t.Fatalf("bound endpoints %v, want the three kubernetes endpoints newest first %v", got, want)
	}
	if page["uri"] != s.Server.URL+path+"/"+all+"/bound_endpoints" || page["next_page_uri"] != nil {
		t.Errorf("uri %v next_page_uri %v", page["uri"], page["next_page_uri"])
	}
	// Each is the endpoint as GET /endpoints/{id} returns it.
	if got, want := fmt.Sprint(page["endpoints"].([]any)[2]), fmt.Sprint(a.Do(t, "GET", "/endpoints/"+want[2], nil).Expect(t, http.StatusOK)); got != want {
		t.Errorf("a bound endpoint %s, GET /endpoints/{id} %s", got, want)
	}
	// Paged in ones, following next_page_uri.
	page = bound(all, "?limit=1")
	var walked []string
	for page != nil {
		walked = append(walked, ids(page)...)
		next, _ := page["next_page_uri"].(string)
		page = nil
		if next != "" {
			page = a.Do(t, "GET", strings.TrimPrefix(next, s.Server.URL), nil).Expect(t, http.StatusOK)
		}
	}
	if !slices.Equal(walked, want) {
		t.Errorf("paged in ones: %v", walked)
	}
	// A selector picks some.
	one := op(map[string]any{"enabled_features": []string{"Bindings"}, "binding": map[string]any{
		"endpoint_selectors": []string{fmt.Sprintf("obj.url == %q", second["url"]), `obj.url == "https://none.example.com"`}}})
	if got := ids(bound(one, "")); len(got) != 1 || got[0] != second["id"] {
		t.Errorf("a selector of one endpoint bound %v", got)
	}
	// No feature, or no selector: nothing.
	for _, body := range []map[string]any{
		{"binding": map[string]any{"endpoint_selectors": []string{"true"}}},
		{"enabled_features": []string{"bindings"}},
	} {
		if got := bound(op(body), "")["endpoints"].([]any); len(got) != 0 {
			t.Errorf("%v bound %d endpoints", body, len(got))
		}
	}
	other.Do(t, "GET", path+"/"+all+"/bound_endpoints", nil).Expect(t, http.StatusNotFound)
	a.Do(t, "GET", path+"/"+all+"/bound_endpoints?before_id=k8sop_x", nil).ExpectError(t, http.StatusBadRequest, "ERR_NGROK_223", "before_id")
}

// The first CSRs of an account, sent at once, all get certificates from one CA: the account's
// CA is made once, the requests that lose the race to store theirs use the winner's.
func TestFirstCSRsAtOnceShareOneCA(t *testing.T) {
	s, a := suite.AppAccount(t)
	const n = 6
	csrs := make([]string, n)
	for i := range csrs {
		csrs[i] = testkit.CSRPEM(t)
	}
	responses := testkit.AtOnce(n, func(i int) *testkit.Response {
		return a.Do(t, "POST", path, map[string]any{"binding": map[string]any{"csr": csrs[i]}})
	})
	block, _ := pem.Decode([]byte(caPEM(t, s, a.AccountID)))
	ca, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	for i, res := range responses {
		op := res.Expect(t, http.StatusCreated)
		block, _ := pem.Decode([]byte(op["binding"].(map[string]any)["cert"].(map[string]any)["cert"].(string)))
		if block == nil {
			t.Fatalf("operator %d has no certificate", i)
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cert.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
			t.Errorf("operator %d's certificate does not verify against the account's CA: %v", i, err)
		}
	}
}
