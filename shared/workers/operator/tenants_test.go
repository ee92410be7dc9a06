package operator_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tunnelapi/shared/app"
	"tunnelapi/shared/families/principals"
	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/resource"
	"tunnelapi/shared/platform/store"
	"tunnelapi/shared/testing/testkit"
	"tunnelapi/shared/workers/operator"
)

// root is the checkout, from this package.
const root = "../../.."

// operatorCreds are the credentials the test's operator interface verifies, as the local server
// verifies its local AWS credentials.
var operatorCreds = aws.Credentials{AccessKeyID: "operator-test", SecretAccessKey: "operator-test-secret"}

// operatorServer serves the operator's routes on s's table, each request's signature verified
// against operatorCreds.
func operatorServer(t *testing.T, s *testkit.Stack) *httptest.Server {
	o := &operator.Operator{DB: s.DB, Collections: operator.CollectionsOf(app.Families)}
	mux := http.NewServeMux()
	o.Register(mux, (&operator.Verifier{Credentials: operatorCreds, Region: "us-east-1"}).Verify)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// operatorDo sends one request to srv signed with creds (none when zero; a bearer token when
// token is set) and returns its status and body.
func operatorDo(t *testing.T, srv *httptest.Server, creds aws.Credentials, token, method, path string, body any) (int, []byte) {
	t.Helper()
	c := operator.Client{Base: srv.URL, HTTP: srv.Client(), Authorize: func(r *http.Request, raw []byte) error {
		if token != "" {
			r.Header.Set("Authorization", "Bearer "+token)
		}
		if creds.AccessKeyID != "" {
			return operator.SignedBy(creds, "us-east-1")(r, raw)
		}
		return nil
	}}
	status, out, err := c.Do(t.Context(), method, path, body)
	if err != nil {
		t.Fatal(err)
	}
	return status, out
}

// A tenant's life through the operator's interface: created (its first key works), every
// function's create sample made with it, a domain (with a wildcard and a name under it, which
// share a cover guard with the tenant's count), an address and an SSH key reserved; suspended
// (every family refuses its key with 403 ERR_NGROK_205), resumed (served again), deleted: then
// a Scan of the whole table finds no item naming it, and another tenant reserves its domain and
// SSH key at once.
func TestTenantLifecycle(t *testing.T) {
	s := testkit.App(t)
	srv := operatorServer(t, s)
	status, out := operatorDo(t, srv, operatorCreds, "", "POST", "/operator/tenants", map[string]string{"email": "owner@tenant.test"})
	if status != http.StatusCreated {
		t.Fatalf("create: %d %s", status, out)
	}
	var created operator.Created
	if err := json.Unmarshal(out, &created); err != nil {
		t.Fatal(err)
	}
	if created.Tenant.Status != operator.StatusActive || created.Token == "" {
		t.Fatalf("created %s", out)
	}
	a := s.AccountOf(&principals.Bootstrapped{AccountID: created.Tenant.ID, UserID: created.AdminUserID,
		APIKeyID: created.APIKeyID, Token: created.Token})
	for _, f := range app.Functions() {
		if !f.Families[0].Offers(resource.OpCreate) {
			continue // reported by a tunnel server: made by AgentSession below
		}
		file, _, ev := testkit.FirstSample(t, root, f.Dir, a)
		if ev.RequestContext.HTTP.Method != http.MethodPost {
			t.Fatalf("%s is not a create", file)
		}
		a.Do(t, "POST", ev.RawPath, ev.Body).Expect(t, http.StatusCreated)
	}
	testkit.AgentSession(t, s, a)
	domain, _ := a.ReserveDomain(t)
	parent, _ := a.ReserveWildcard(t)
	a.Do(t, "POST", "/reserved_domains", map[string]any{"domain": "under." + parent}).Expect(t, http.StatusCreated)
	a.ReserveAddr(t)
	sshKey := testkit.SSHPublicKey()
	a.Do(t, "POST", "/ssh_credentials", map[string]any{"public_key": sshKey}).Expect(t, http.StatusCreated)

	tenant := "/operator/tenants/" + a.AccountID
	if status, out := operatorDo(t, srv, operatorCreds, "", "POST", tenant+"/suspend", nil); status != http.StatusOK ||
		!strings.Contains(string(out), `"status":"suspended"`) {
		t.Fatalf("suspend: %d %s", status, out)
	}
	for _, d := range app.Families {
		res := a.Do(t, "GET", familyRead(d), nil)
		if res.Status != http.StatusForbidden || res.JSON(t)["error_code"] != api.CodeSuspended {
			t.Errorf("%s of a suspended tenant: %d %s", d.Path, res.Status, res.Body)
		}
	}
	a.Do(t, "POST", "/api_keys", map[string]any{"description": "while suspended"}).Expect(t, http.StatusForbidden)
	if status, out := operatorDo(t, srv, operatorCreds, "", "POST", tenant+"/resume", nil); status != http.StatusOK ||
		!strings.Contains(string(out), `"status":"active"`) {
		t.Fatalf("resume: %d %s", status, out)
	}
	for _, d := range app.Families {
		if res := a.Do(t, "GET", familyRead(d), nil); res.Status == http.StatusForbidden {
			t.Errorf("%s of a resumed tenant: %d %s", d.Path, res.Status, res.Body)
		}
	}

	for {
		status, out := operatorDo(t, srv, operatorCreds, "", "DELETE", tenant, nil)
		if status == http.StatusNoContent {
			break
		}
		if status != http.StatusAccepted {
			t.Fatalf("delete: %d %s", status, out)
		}
	}
	a.Do(t, "GET", "/api_keys", nil).Expect(t, http.StatusForbidden)
	if status, _ := operatorDo(t, srv, operatorCreds, "", "GET", tenant, nil); status != http.StatusNotFound {
		t.Errorf("get of a deleted tenant: %d", status)
	}
	noItemNames(t, s, "after the delete", a.AccountID)
	other := s.NewAccount(t)
	other.Do(t, "POST", "/reserved_domains", map[string]any{"domain": domain}).Expect(t, http.StatusCreated)
	other.Do(t, "POST", "/ssh_credentials", map[string]any{"public_key": sshKey}).Expect(t, http.StatusCreated)
	other.Do(t, "POST", "/reserved_domains", map[string]any{"domain": "*." + parent}).Expect(t, http.StatusCreated)
}

// An erasure deletes the resources of every family it serves by the family's prefix alone, so a
// new family needs no list of collections: given a fixture family with a prefix of its own, an
// item in its collection goes with the account's other items (its user and API key among them).
func TestErasureReadsEveryFamilysCollection(t *testing.T) {
	s := testkit.App(t)
	a := s.NewAccount(t)
	widgets := &resource.Descriptor{Path: "/fixture_widgets", Prefix: "fxw", EventKind: "fixture_widget"}
	id := ids.New(widgets.Prefix)
	if err := s.DB.Put(t.Context(), store.Meta{Key: store.ResourceKey(a.AccountID, id), ID: id, AccountID: a.AccountID, Version: 1}); err != nil {
		t.Fatal(err)
	}
	o := &operator.Operator{DB: s.DB, Collections: operator.CollectionsOf(append(app.Families[:len(app.Families):len(app.Families)], widgets))}
	for err := o.Erase(t.Context(), a.AccountID); err != nil; err = o.Erase(t.Context(), a.AccountID) {
		if !errors.Is(err, operator.ErrUnfinished) {
			t.Fatal(err)
		}
	}
	noItemNames(t, s, "after the erasure", a.AccountID)
}

// familyRead is a read of d's that reaches its caller's verification: its list, or a get of an
// id of its kind for a family without one.
func familyRead(d *resource.Descriptor) string {
	if d.Offers(resource.OpList) {
		return d.Path
	}
	return d.Path + "/" + d.Prefix + "_2ShIMEZcBYMiQeLvjVVvRMpjmFY"
}

// noItemNames fails t for each item of s's table (a full Scan) that names one of accounts in
// a key, attribute name or string value; when says after what.
func noItemNames(t *testing.T, s *testkit.Stack, when string, accounts ...string) {
	t.Helper()
	items, err := s.Items(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range items {
		for _, account := range accounts {
			if names(it, account) {
				t.Errorf("%s an item names account %s: %v", when, account, stringAttrs(it))
			}
		}
	}
}

// names reports whether any key, attribute name or string value of it contains s.
func names(it map[string]types.AttributeValue, s string) bool {
	for k, v := range it {
		if strings.Contains(k, s) {
			return true
		}
		switch v := v.(type) {
		case *types.AttributeValueMemberS:
			if strings.Contains(v.Value, s) {
				return true
			}
		case *types.AttributeValueMemberSS:
			for _, x := range v.Value {
				if strings.Contains(x, s) {
					return true
				}
			}
		case *types.AttributeValueMemberM:
			if names(v.Value, s) {
				return true
			}
		case *types.AttributeValueMemberL:
			for _, x := range v.Value {
				if names(map[string]types.AttributeValue{"": x}, s) {
					return true
				}
			}
		}
	}
	return false
}

// The operator's routes refuse a tenant's API key, an unsigned request and one signed with
// other credentials or a wrong signature, whatever the route, before doing anything.
func TestOperatorRoutesRefuseAllButTheOperator(t *testing.T) {
	s, a := testkit.AppAccount(t)
	srv := operatorServer(t, s)
	wrong := aws.Credentials{AccessKeyID: operatorCreds.AccessKeyID, SecretAccessKey: "not-the-secret"}
	other := aws.Credentials{AccessKeyID: "someone-else", SecretAccessKey: operatorCreds.SecretAccessKey}
	for _, r := range operator.Routes {
		path := strings.ReplaceAll(r.Pattern, "{id}", a.AccountID)
		for name, c := range map[string]struct {
			creds aws.Credentials
			token string
		}{"tenant key": {token: a.Token}, "unsigned": {}, "wrong secret": {creds: wrong}, "other key": {creds: other}} {
			status, out := operatorDo(t, srv, c.creds, c.token, r.Method, path, map[string]string{})
			if status != http.StatusForbidden {
				t.Errorf("%s %s with %s: %d %s", r.Method, path, name, status, out)
			}
		}
	}
	// A signature over another body does not carry to this one.
	req, _ := http.NewRequestWithContext(t.Context(), "POST", srv.URL+"/operator/tenants/"+a.AccountID+"/suspend", strings.NewReader(`{"x":1}`))
	if err := operator.Sign(t.Context(), req, []byte(`{}`), operatorCreds, "us-east-1", time.Now()); err != nil {
		t.Fatal(err)
	}
	if resp, err := srv.Client().Do(req); err != nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("a signature of another body: %v %v", resp.StatusCode, err)
	}
	a.Do(t, "GET", "/api_keys", nil).Expect(t, http.StatusOK)
	if status, out := operatorDo(t, srv, operatorCreds, "", "GET", "/operator/tenants/"+a.AccountID, nil); status != http.StatusOK ||
		!strings.Contains(string(out), `"status":"active"`) {
		t.Errorf("the operator's get: %d %s", status, out)
	}
}

// The list of tenants pages newest first without a scan: every tenant made appears once.
func TestOperatorListsTenantsInPages(t *testing.T) {
	s := testkit.App(t)
	srv := operatorServer(t, s)
	made := map[string]bool{}
	for range 3 {
		made[s.NewAccount(t).AccountID] = true
	}
	path, seen := "/operator/tenants?limit=2", map[string]int{}
	for path != "" {
		status, out := operatorDo(t, srv, operatorCreds, "", "GET", path, nil)
		if status != http.StatusOK {
			t.Fatalf("list: %d %s", status, out)
		}
		var page operator.TenantList
		if err := json.Unmarshal(out, &page); err != nil {
			t.Fatal(err)
		}
		if len(page.Tenants) > 2 {
			t.Fatalf("a page of %d with limit 2", len(page.Tenants))
		}
		for _, tn := range page.Tenants {
			seen[tn.ID]++
		}
		path = ""
		if page.NextPageURI != nil {
			path = (*page.NextPageURI)[strings.Index(*page.NextPageURI, "/operator/"):]
		}
	}
	for id := range made {
		if seen[id] != 1 {
			t.Errorf("tenant %s listed %d times", id, seen[id])
		}
	}
}

// stringAttrs are the string attributes of it, to name it in a failure.
func stringAttrs(it map[string]types.AttributeValue) map[string]string {
	out := map[string]string{}
	for k, v := range it {
		if sv, ok := v.(*types.AttributeValueMemberS); ok {
			out[k] = sv.Value
		} else {
			out[k] = fmt.Sprintf("%T", v)
		}
	}
	return out
}

// A delete whose time runs out before the tenant's items are gone answers 202 with the tenant
// (status deleting) and Retry-After; sent again with time enough, it finishes with 204.
func TestTenantDeleteResumesWhenTimeRunsOut(t *testing.T) {
	s := testkit.App(t)
	a := s.NewAccount(t)
	a.Do(t, "POST", "/ip_policies", map[string]any{"description": "left for the resumed delete"}).Expect(t, http.StatusCreated)
	short := &operator.Operator{DB: s.DB, Collections: operator.CollectionsOf(app.Families), Budget: time.Second}
	mux := http.NewServeMux()
	short.Register(mux, func(*http.Request, []byte) error { return nil })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	status, out := operatorDo(t, srv, aws.Credentials{}, "", "DELETE", "/operator/tenants/"+a.AccountID, nil)
	if status != http.StatusAccepted || !strings.Contains(string(out), `"status":"deleting"`) {
		t.Fatalf("delete with 1 s: %d %s, want 202 with the tenant deleting", status, out)
	}
	req, _ := http.NewRequestWithContext(t.Context(), "DELETE", srv.URL+"/operator/tenants/"+a.AccountID, nil)
	res, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusAccepted || res.Header.Get("Retry-After") != "1" {
		t.Fatalf("delete again with 1 s: %d Retry-After %q, want 202 with Retry-After 1", res.StatusCode, res.Header.Get("Retry-After"))
	}
	full := operatorServer(t, s)
	if status, out := operatorDo(t, full, operatorCreds, "", "DELETE", "/operator/tenants/"+a.AccountID, nil); status != http.StatusNoContent {
		t.Fatalf("delete with time enough: %d %s, want 204", status, out)
	}
	a.Do(t, "GET", "/ip_policies", nil).Expect(t, http.StatusForbidden)
}

// The operator function's sample events (events/operator/, API Gateway's IAM authorizer in
// their request context) go through its real Lambda handler in name order, admitted as
// principals of the samples' account (the template's default, the account's root), each with
// its route's status, and cover every route; the same create without the IAM authorizer, or
// for a function admitting only another principal, is a 403.
func TestOperatorSampleEvents(t *testing.T) {
	s := testkit.App(t)
	o := &operator.Operator{DB: s.DB, Collections: operator.CollectionsOf(app.Families), Principals: operator.Principals{"arn:aws:iam::123456789012:root"}}
	handler := o.Lambda()
	other := *o
	other.Principals = operator.Principals{"arn:aws:iam::123456789012:role/Operator"}
	otherHandler := other.Lambda()
	files, err := app.SampleFiles(root, app.Operator.Dir)
	if err != nil {
		t.Fatal(err)
	}
	vars, covered := map[string]string{}, map[string]bool{}
	for i, file := range files {
		ev := testkit.ReadSample(t, file, vars)
		if i == 0 {
			unsigned := ev
			unsigned.RequestContext.Authorizer = nil
			res, err := handler(t.Context(), unsigned)
			if err != nil || res.StatusCode != http.StatusForbidden || !strings.Contains(res.Body, operator.ErrNotSigned.Code) {
				t.Fatalf("%s without IAM authorization: %v %d %s, want 403 %s", file, err, res.StatusCode, res.Body, operator.ErrNotSigned.Code)
			}
			res, err = otherHandler(t.Context(), ev)
			if err != nil || res.StatusCode != http.StatusForbidden || !strings.Contains(res.Body, operator.ErrNotOperator.Msg) {
				t.Fatalf("%s for a function admitting another principal: %v %d %s, want 403", file, err, res.StatusCode, res.Body)
			}
		}
		res, err := handler(t.Context(), ev)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if want := operator.StatusOf(ev.RouteKey); res.StatusCode != want {
			t.Fatalf("%s: status %d, want %d: %s", file, res.StatusCode, want, res.Body)
		}
		if res.StatusCode == http.StatusCreated && ev.RouteKey == "POST /operator/tenants" && app.TenantCreated(vars, []byte(res.Body)) == "" {
			t.Fatalf("%s: no tenant id in %s", file, res.Body)
		}
		if res.StatusCode == http.StatusCreated && ev.RouteKey == "POST /operator/tunnel_servers" && app.SampleCreated(vars, ev.RouteKey, []byte(res.Body)) == "" {
			t.Fatalf("%s: no key id in %s", file, res.Body)
		}
		covered[ev.RouteKey] = true
	}
	for _, rt := range operator.Routes {
		if !covered[rt.Method+" "+rt.Pattern] {
			t.Errorf("no sample event in events/%s for %s %s", app.Operator.Dir, rt.Method, rt.Pattern)
		}
	}
}
