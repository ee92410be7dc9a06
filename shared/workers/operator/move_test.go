package operator_test

import (
	"bytes"
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"

	"tunnelapi/shared/app"
	"tunnelapi/shared/families/principals"
	"tunnelapi/shared/platform/resource"
	"tunnelapi/shared/testing/testkit"
	"tunnelapi/shared/workers/operator"
)

// A tenant moves: made through the operator's interface and given an object of every family
// that lists (every function's create sample with what it refers to, an HTTPS edge route and a
// vault secret), it is
// exported, erased (its domains and SSH keys are unique in a deployment), and its export
// imported into a fresh tenant, the write-only values supplied: the copy's export equals the
// original's but for ids, creation times and what is generated anew (tokens, keys, the
// certificates signed with them). Both deleted, a Scan finds no item naming either.
func TestTenantMoves(t *testing.T) {
	s := testkit.App(t)
	srv := operatorServer(t, s)
	from := createTenant(t, srv)
	a := s.AccountOf(from)
	secrets := map[string]string{}
	for _, f := range app.Functions() {
		if !f.Families[0].Offers(resource.OpCreate) {
			continue // reported by a tunnel server, never exported
		}
		_, vars, ev := testkit.FirstSample(t, root, f.Dir, a)
		made := a.Do(t, "POST", ev.RawPath, ev.Body).Expect(t, http.StatusCreated)
		if key, ok := vars["{{key_pem}}"]; ok && ev.RawPath == "/tls_certificates" {
			secrets[made["id"].(string)] = key
		}
		if csr, ok := vars["{{csr}}"]; ok {
			secrets[made["id"].(string)] = csr // the cluster's request, which it makes again
		}
	}
	first := func(path, key string) string {
		return a.Do(t, "GET", path, nil).Expect(t, http.StatusOK)[key].([]any)[0].(map[string]any)["id"].(string)
	}
	a.Do(t, "POST", "/edges/https/"+first("/edges/https", "https_edges")+"/routes", map[string]any{
		"match_type": "path_prefix", "match": "/app", "backend": map[string]any{"enabled": true, "backend_id": first("/backends/static", "backends")},
		"ip_restriction": map[string]any{"enabled": true, "ip_policy_ids": []string{first("/ip_policies", "ip_policies")}},
	}).Expect(t, http.StatusCreated)
	vault := a.Do(t, "GET", "/vaults", nil).Expect(t, http.StatusOK)["vaults"].([]any)[0].(map[string]any)["id"].(string)
	secret := a.Do(t, "POST", "/vault_secrets", map[string]any{"vault_id": vault, "name": "db", "value": "s3cret"}).Expect(t, http.StatusCreated)
	secrets[secret["id"].(string)] = "s3cret"

	original := exportTenant(t, s, srv, from)
	if strings.Contains(original.String(), "s3cret") || strings.Contains(original.String(), "PRIVATE KEY") {
		t.Fatal("the export holds a write-only value")
	}
	var filled bytes.Buffer
	for _, raw := range bytes.Split(bytes.TrimSpace(original.Bytes()), []byte("\n")) {
		var l operator.Line
		if err := json.Unmarshal(raw, &l); err != nil {
			t.Fatal(err)
		}
		for m := range l.Supply {
			l.Supply[m] = secrets[l.Object["id"].(string)]
			if l.Supply[m] == "" {
				l.Supply[m] = "0123456789abcdef0123456789abcdef" // a destination's credential: any
			}
		}
		b, _ := json.Marshal(l)
		filled.Write(append(b, '\n'))
	}
	deleteTenant(t, srv, from.AccountID)

	to := createTenant(t, srv)
	var out bytes.Buffer
	err := operator.Import(t.Context(), &operator.TenantAPI{Base: s.Server.URL, Token: to.Token}, app.Families,
		operator.Exported{ID: to.AccountID, AdminUserID: to.UserID}, &filled, &out)
	if err != nil {
		t.Fatalf("import: %v\n%s\n%s", err, out.String(), original.String())
	}
	copied := exportTenant(t, s, srv, to)
	// Compared as sorted sets: ids made within one second do not list in creation order. The
	// copy's own first key is no copy.
	var want, got []string
	for _, l := range lines(t, original.Bytes()) {
		want = append(want, comparable(l))
	}
	for _, l := range lines(t, copied.Bytes()) {
		if l.Object["id"] != to.APIKeyID {
			got = append(got, comparable(l))
		}
	}
	slices.Sort(want)
	slices.Sort(got)
	if len(want) < 40 {
		t.Fatalf("the original's export has only %d objects", len(want))
	}
	if !slices.Equal(want, got) {
		for _, w := range want {
			if !slices.Contains(got, w) {
				t.Errorf("the copy lacks  %s", w)
			}
		}
		for _, g := range got {
			if !slices.Contains(want, g) {
				t.Errorf("the copy adds   %s", g)
			}
		}
		t.Errorf("the copy's export has %d objects, the original's %d", len(got), len(want))
	}
	deleteTenant(t, srv, to.AccountID)
	noItemNames(t, s, "after both deletes", from.AccountID, to.AccountID)
}

// createTenant makes a tenant through the operator's interface.
func createTenant(t *testing.T, srv *httptest.Server) *principals.Bootstrapped {
	t.Helper()
	status, out := operatorDo(t, srv, operatorCreds, "", "POST", "/operator/tenants", map[string]string{"email": "owner@tenant.test"})
	if status != http.StatusCreated {
		t.Fatalf("create: %d %s", status, out)
	}
	var c operator.Created
	if err := json.Unmarshal(out, &c); err != nil {
		t.Fatal(err)
	}
	return &principals.Bootstrapped{AccountID: c.Tenant.ID, UserID: c.AdminUserID, APIKeyID: c.APIKeyID, Token: c.Token}
}

// exportTenant exports b with a key the operator's interface issues for it, then deletes that key.
func exportTenant(t *testing.T, s *testkit.Stack, srv *httptest.Server, b *principals.Bootstrapped) *bytes.Buffer {
	t.Helper()
	status, out := operatorDo(t, srv, operatorCreds, "", "POST", "/operator/tenants/"+b.AccountID+"/keys", nil)
	if status != http.StatusCreated {
		t.Fatalf("keys: %d %s", status, out)
	}
	var k operator.Created
	if err := json.Unmarshal(out, &k); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	c := &operator.TenantAPI{Base: s.Server.URL, Token: k.Token}
	if err := operator.Export(t.Context(), c, app.Families, operator.Exported{ID: b.AccountID, AdminUserID: b.UserID}, k.APIKeyID, &buf); err != nil {
		t.Fatal(err)
	}
	s.AccountOf(&principals.Bootstrapped{AccountID: b.AccountID, Token: k.Token}).Do(t, "DELETE", "/api_keys/"+k.APIKeyID, nil).Expect(t, http.StatusNoContent)
	return &buf
}

// deleteTenant erases a tenant through the operator's interface.
func deleteTenant(t *testing.T, srv *httptest.Server, id string) {
	t.Helper()
	for {
		status, out := operatorDo(t, srv, operatorCreds, "", "DELETE", "/operator/tenants/"+id, nil)
		if status == http.StatusNoContent {
			return
		}
		if status != http.StatusAccepted {
			t.Fatalf("delete: %d %s", status, out)
		}
	}
}

func lines(t *testing.T, b []byte) []operator.Line {
	t.Helper()
	var out []operator.Line
	for _, raw := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		var l operator.Line
		if err := json.Unmarshal(raw, &l); err != nil {
			t.Fatal(err)
		}
		if l.Tenant == nil {
			out = append(out, l)
		}
	}
	return out
}

// generated are the members whose values are made anew when an object is created: ids, times,
// a reserved domain's DNS targets, and key material (an SSH CA's key, the certificates it
// signs, a binding's certificate).
var generated = regexp.MustCompile(`"(id|uri|created_at|updated_at|cname_target|acme_challenge_cname_target|certificate|cert)":("[^"]*"|null|\{[^{}]*\})`)

// idLike are ids and the URIs that hold them; addrLike reserved addresses, whose ports are
// assigned anew.
var (
	idLike   = regexp.MustCompile(`\b[a-z0-9]{1,8}_[0-9A-Za-z]{27}\b`)
	addrLike = regexp.MustCompile(`tcp\.[a-z]+\.tunnels\.example\.com:[0-9]+`)
)

// comparable is l without what a copy cannot keep.
func comparable(l operator.Line) string {
	obj := maps.Clone(l.Object)
	if l.Path == "/ssh_certificate_authorities" {
		delete(obj, "public_key") // a new CA's own key
	}
	b, _ := json.Marshal(obj)
	s := generated.ReplaceAllString(string(b), `"$1":"*"`)
	return l.Path + " " + addrLike.ReplaceAllString(idLike.ReplaceAllString(s, "<id>"), "<addr>")
}
