package access_test

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"tunnelapi/shared/families/access"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/iprestrict"
	"tunnelapi/shared/platform/store"
	"tunnelapi/shared/testing/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

func newPolicy(t testing.TB, a *testkit.Account) string {
	return a.Do(t, "POST", "/ip_policies", map[string]any{"description": "p"}).Expect(t, http.StatusCreated)["id"].(string)
}

func newRule(t testing.TB, a *testkit.Account, policy, cidr, action string) map[string]any {
	return a.Do(t, "POST", "/ip_policy_rules", map[string]any{"ip_policy_id": policy, "cidr": cidr, "action": action}).Expect(t, http.StatusCreated)
}

func TestIPPoliciesConformance(t *testing.T) {
	s := testkit.App(t)
	s.Conformance(t, testkit.FamilySpec{
		Family: access.IPPoliciesDescriptor,
		Create: func(t *testing.T, a *testkit.Account, n int) any {
			return map[string]any{"description": "office", "metadata": "m"}
		},
		Update:      map[string]any{"description": "office and VPN"},
		UpdateWants: map[string]any{"description": "office and VPN", "metadata": "m"},
	})
}

func TestIPPolicyRulesConformance(t *testing.T) {
	s := testkit.App(t)
	s.Conformance(t, testkit.FamilySpec{
		Family: access.IPPolicyRulesDescriptor,
		Create: func(t *testing.T, a *testkit.Account, n int) any {
			return map[string]any{"ip_policy_id": newPolicy(t, a), "cidr": "192.0.2.0/24", "action": "allow", "description": "d"}
		},
		Update:      map[string]any{"cidr": "192.0.2.0/25"},
		UpdateWants: map[string]any{"cidr": "192.0.2.0/25", "action": "allow", "description": "d"},
		// A new rule is checked against its policy (it exists, the CIDR is new to it, it has
		// room) by the conditions of its one transaction, unread: the default create.
	})
}

func TestIPRestrictionsConformance(t *testing.T) {
	s := testkit.App(t)
	s.Conformance(t, testkit.FamilySpec{
		Family: access.IPRestrictionsDescriptor,
		Create: func(t *testing.T, a *testkit.Account, n int) any {
			return map[string]any{"type": "dashboard", "enforced": true, "ip_policy_ids": []string{newPolicy(t, a)}}
		},
		Update:      map[string]any{"enforced": false, "metadata": "x"},
		UpdateWants: map[string]any{"enforced": false, "metadata": "x", "type": "dashboard"},
	})
}

func TestRuleShapeAndNormalisation(t *testing.T) {
	s, a := testkit.AppAccount(t)
	p := newPolicy(t, a)
	r := a.Do(t, "POST", "/ip_policy_rules", map[string]any{"ip_policy_id": p, "cidr": "2001:DB8:0::/32", "action": "deny"}).Expect(t, 201)
	if r["cidr"] != "2001:db8::/32" || r["action"] != "deny" {
		t.Fatalf("rule %v", r)
	}
	ref := r["ip_policy"].(map[string]any)
	if ref["id"] != p || ref["uri"] != s.Server.URL+"/ip_policies/"+p {
		t.Fatalf("ip_policy ref %v", ref)
	}
	x := a.Do(t, "POST", "/ip_restrictions", map[string]any{"type": "agent", "ip_policy_ids": []string{p, p}}).Expect(t, 201)
	pols := x["ip_policies"].([]any)
	if len(pols) != 1 || pols[0].(map[string]any)["id"] != p || x["enforced"] != false {
		t.Fatalf("restriction %v", x)
	}
}

// countItems counts the items of an account's collection (paging through it).
func countItems(t *testing.T, a *testkit.Account, path, key string) int {
	got, _ := a.WalkPages(t, path, key)
	return len(got)
}

func TestBadInputsStoreNothing(t *testing.T) {
	_, a, b := testkit.AppTwoAccounts(t)
	p := newPolicy(t, a)
	other := newPolicy(t, b)
	rule := newRule(t, a, p, "10.0.0.0/8", "allow")
	rulePath := "/ip_policy_rules/" + rule["id"].(string)
	x := a.Do(t, "POST", "/ip_restrictions", map[string]any{"type": "dashboard", "ip_policy_ids": []string{p}}).Expect(t, 201)
	xPath := "/ip_restrictions/" + x["id"].(string)
	long := strings.Repeat("x", 256)
	cases := []struct {
		name, method, path string
		body               any
		code, field        string
	}{
		{"no mask", "POST", "/ip_policy_rules", map[string]any{"ip_policy_id": p, "cidr": "10.1.2.3", "action": "allow"}, "ERR_NGROK_1413", "cidr"},
		{"not normalised", "POST", "/ip_policy_rules", map[string]any{"ip_policy_id": p, "cidr": "10.1.2.3/8", "action": "allow"}, "ERR_NGROK_1409", "cidr"},
		{"invalid cidr", "POST", "/ip_policy_rules", map[string]any{"ip_policy_id": p, "cidr": "10.0.0.0/40", "action": "allow"}, "ERR_NGROK_1406", "cidr"},
		{"missing cidr", "POST", "/ip_policy_rules", map[string]any{"ip_policy_id": p, "action": "allow"}, "ERR_NGROK_1406", "cidr"},
		{"bad action", "POST", "/ip_policy_rules", map[string]any{"ip_policy_id": p, "cidr": "11.0.0.0/8", "action": "block"}, "ERR_NGROK_1422", "action"},
		{"missing action", "POST", "/ip_policy_rules", map[string]any{"ip_policy_id": p, "cidr": "11.0.0.0/8"}, "ERR_NGROK_1422", "action"},
		{"duplicate cidr", "POST", "/ip_policy_rules", map[string]any{"ip_policy_id": p, "cidr": "10.0.0.0/8", "action": "deny"}, "ERR_NGROK_1408", "cidr"},
		{"policy of another account", "POST", "/ip_policy_rules", map[string]any{"ip_policy_id": other, "cidr": "11.0.0.0/8", "action": "allow"}, "ERR_NGROK_1414", "ip_policy_id"},
		{"unknown policy", "POST", "/ip_policy_rules", map[string]any{"ip_policy_id": ids.New(ids.IPPolicy), "cidr": "11.0.0.0/8", "action": "allow"}, "ERR_NGROK_1414", "ip_policy_id"},
		{"not a policy id", "POST", "/ip_policy_rules", map[string]any{"ip_policy_id": "ak_1", "cidr": "11.0.0.0/8", "action": "allow"}, "ERR_NGROK_1414", "ip_policy_id"},
		{"rule description", "POST", "/ip_policy_rules", map[string]any{"ip_policy_id": p, "cidr": "11.0.0.0/8", "action": "allow", "description": long}, "ERR_NGROK_1421", "description"},
		{"policy metadata", "POST", "/ip_policies", map[string]any{"metadata": strings.Repeat("x", 4097)}, "ERR_NGROK_1421", "metadata"},
		{"policy description patch", "PATCH", "/ip_policies/" + p, map[string]any{"description": long}, "ERR_NGROK_1421", "description"},
		{"patch action", "PATCH", rulePath, map[string]any{"action": "deny"}, "ERR_NGROK_1422", "action"},
		{"patch bad cidr", "PATCH", rulePath, map[string]any{"cidr": "10.0.0.1/8"}, "ERR_NGROK_1409", "cidr"},
		{"patch empty", "PATCH", rulePath, map[string]any{}, "ERR_NGROK_606", ""},
		{"restriction type", "POST", "/ip_restrictions", map[string]any{"type": "web", "ip_policy_ids": []string{p}}, "ERR_NGROK_215", "type"},
		{"restriction no type", "POST", "/ip_restrictions", map[string]any{"ip_policy_ids": []string{p}}, "ERR_NGROK_215", "type"},
		{"restriction no policies", "POST", "/ip_restrictions", map[string]any{"type": "api", "ip_policy_ids": []string{}}, "ERR_NGROK_215", "ip_policy_ids"},
		{"restriction policies missing", "POST", "/ip_restrictions", map[string]any{"type": "api"}, "ERR_NGROK_215", "ip_policy_ids"},
		{"restriction foreign policy", "POST", "/ip_restrictions", map[string]any{"type": "api", "ip_policy_ids": []string{p, other}}, "ERR_NGROK_215", "ip_policy_ids"},
		{"dashboard restriction foreign policy", "POST", "/ip_restrictions", map[string]any{"type": "dashboard", "ip_policy_ids": []string{p, other}}, "ERR_NGROK_215", "ip_policy_ids"},
		{"agent restriction unknown policy", "POST", "/ip_restrictions", map[string]any{"type": "agent", "ip_policy_ids": []string{ids.New(ids.IPPolicy)}}, "ERR_NGROK_215", "ip_policy_ids"},
		{"restriction bad id", "POST", "/ip_restrictions", map[string]any{"type": "api", "ip_policy_ids": []string{"nope"}}, "ERR_NGROK_215", "ip_policy_ids"},
		{"restriction over the policy limit", "POST", "/ip_restrictions", map[string]any{"type": "api", "ip_policy_ids": slices.Repeat([]string{p}, 29000)}, "ERR_NGROK_215", "ip_policy_ids"},
		{"restriction type patch", "PATCH", xPath, map[string]any{"type": "api"}, "ERR_NGROK_214", "type"},
		{"restriction foreign policy patch", "PATCH", xPath, map[string]any{"ip_policy_ids": []string{other}}, "ERR_NGROK_215", "ip_policy_ids"},
		{"restriction enforced type", "POST", "/ip_restrictions", map[string]any{"type": "api", "enforced": "yes", "ip_policy_ids": []string{p}}, "ERR_NGROK_215", "enforced"},
		{"delete referenced policy", "DELETE", "/ip_policies/" + p, nil, "ERR_NGROK_1420", ""},
	}
	nRules, nX, nP := countItems(t, a, "/ip_policy_rules", "ip_policy_rules"), countItems(t, a, "/ip_restrictions", "ip_restrictions"), countItems(t, a, "/ip_policies", "ip_policies")
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a.Do(t, c.method, c.path, c.body).ExpectError(t, http.StatusBadRequest, c.code, c.field)
		})
	}
	if countItems(t, a, "/ip_policy_rules", "ip_policy_rules") != nRules || countItems(t, a, "/ip_restrictions", "ip_restrictions") != nX ||
		countItems(t, a, "/ip_policies", "ip_policies") != nP {
		t.Fatal("a refused request stored something")
	}
	if got := a.Do(t, "GET", rulePath, nil).Expect(t, 200); got["cidr"] != "10.0.0.0/8" || got["action"] != "allow" {
		t.Fatalf("rule changed by refused input: %v", got)
	}
	if got := a.Do(t, "GET", xPath, nil).Expect(t, 200); len(got["ip_policies"].([]any)) != 1 {
		t.Fatalf("restriction changed by refused input: %v", got)
	}
	// A CIDR freed by an update can be taken by another rule, and the old one no longer conflicts.
	a.Do(t, "PATCH", rulePath, map[string]any{"cidr": "10.0.0.0/9"}).Expect(t, 200)
	newRule(t, a, p, "10.0.0.0/8", "deny")
	a.Do(t, "PATCH", rulePath, map[string]any{"cidr": "10.0.0.0/8"}).ExpectError(t, 400, "ERR_NGROK_1408", "cidr")
}

func TestPolicyDeleteCascadesAndRefs(t *testing.T) {
	_, a := testkit.AppAccount(t)
	p := newPolicy(t, a)
	var rules []string
	for i := 0; i < 5; i++ {
		rules = append(rules, newRule(t, a, p, fmt.Sprintf("10.%d.0.0/16", i), "allow")["id"].(string))
	}
	x1 := a.Do(t, "POST", "/ip_restrictions", map[string]any{"type": "agent", "ip_policy_ids": []string{p}}).Expect(t, 201)["id"].(string)
	p2 := newPolicy(t, a)
	x2 := a.Do(t, "POST", "/ip_restrictions", map[string]any{"type": "endpoints", "ip_policy_ids": []string{p, p2}}).Expect(t, 201)["id"].(string)
	a.Do(t, "DELETE", "/ip_policies/"+p, nil).ExpectError(t, 400, "ERR_NGROK_1420", "")
	a.Do(t, "DELETE", "/ip_restrictions/"+x1, nil).Expect(t, 204)
	a.Do(t, "DELETE", "/ip_policies/"+p, nil).ExpectError(t, 400, "ERR_NGROK_1420", "")
	// Moving the restriction off the policy releases it.
	a.Do(t, "PATCH", "/ip_restrictions/"+x2, map[string]any{"ip_policy_ids": []string{p2}}).Expect(t, 200)
	a.Do(t, "DELETE", "/ip_policies/"+p2, nil).ExpectError(t, 400, "ERR_NGROK_1420", "")
	a.Do(t, "DELETE", "/ip_policies/"+p, nil).Expect(t, 204)
	for _, r := range rules {
		a.Do(t, "GET", "/ip_policy_rules/"+r, nil).ExpectError(t, 404, "", "")
	}
}

// An api restriction is enforced on this API itself, from the caller's address: here the
// httptest server sees 127.0.0.1, and requests sent as Lambda events carry a chosen sourceIp.
func TestAPIRestrictionEnforcement(t *testing.T) {
	s, a := testkit.AppAccount(t)
	const admin = "10.9.8.7" // a source the test's restriction allows; only a field of the event
	ten := newPolicy(t, a)
	newRule(t, a, ten, "10.0.0.0/8", "allow")
	loop := newPolicy(t, a)
	newRule(t, a, loop, "127.0.0.0/8", "allow")

	// Enforced, allowing only 10.0.0.0/8: refused from 127.0.0.1 with 220, on reads and writes.
	x := s.DoFrom(t, admin, "POST", "/ip_restrictions", a.Token, map[string]any{"type": "api", "enforced": true, "ip_policy_ids": []string{ten}}).Expect(t, 201)
	xid := x["id"].(string)
	a.Do(t, "GET", "/api_keys", nil).ExpectError(t, http.StatusForbidden, "ERR_NGROK_220", "")
	a.Do(t, "GET", "/api_keys/"+a.APIKeyID, nil).ExpectError(t, http.StatusForbidden, "ERR_NGROK_220", "")
	a.Do(t, "POST", "/api_keys", map[string]any{}).ExpectError(t, http.StatusForbidden, "ERR_NGROK_220", "")
	a.Do(t, "DELETE", "/ip_restrictions/"+xid, nil).ExpectError(t, http.StatusForbidden, "ERR_NGROK_220", "")
	s.DoFrom(t, admin, "GET", "/api_keys", a.Token, nil).Expect(t, 200)
	// Another account is unaffected.
	s.NewAccount(t).Do(t, "GET", "/api_keys", nil).Expect(t, 200)

	// Adding the loopback policy lets 127.0.0.1 through.
	s.DoFrom(t, admin, "PATCH", "/ip_restrictions/"+xid, a.Token, map[string]any{"ip_policy_ids": []string{ten, loop}}).Expect(t, 200)
	a.Do(t, "GET", "/api_keys", nil).Expect(t, 200)
	// A deny for 127.0.0.1/32 in the 10/8 policy is more specific than the /8 allow: refused again.
	deny := s.DoFrom(t, admin, "POST", "/ip_policy_rules", a.Token, map[string]any{"ip_policy_id": ten, "cidr": "127.0.0.1/32", "action": "deny"}).Expect(t, 201)
	a.Do(t, "GET", "/api_keys", nil).ExpectError(t, http.StatusForbidden, "ERR_NGROK_220", "")
	s.DoFrom(t, admin, "GET", "/api_keys", a.Token, nil).Expect(t, 200)
	// An allow of the same CIDR in the other policy ties: deny still wins.
	s.DoFrom(t, admin, "POST", "/ip_policy_rules", a.Token, map[string]any{"ip_policy_id": loop, "cidr": "127.0.0.1/32", "action": "allow"}).Expect(t, 201)
	a.Do(t, "GET", "/api_keys", nil).ExpectError(t, http.StatusForbidden, "ERR_NGROK_220", "")
	// Deleting the deny rule lifts it on the next request.
	s.DoFrom(t, admin, "DELETE", "/ip_policy_rules/"+deny["id"].(string), a.Token, nil).Expect(t, 204)
	a.Do(t, "GET", "/api_keys", nil).Expect(t, 200)

	// Back to 10/8 only, then deleting the restriction lifts it on the very next request.
	s.DoFrom(t, admin, "PATCH", "/ip_restrictions/"+xid, a.Token, map[string]any{"ip_policy_ids": []string{ten}}).Expect(t, 200)
	a.Do(t, "GET", "/api_keys", nil).ExpectError(t, http.StatusForbidden, "ERR_NGROK_220", "")
	s.DoFrom(t, admin, "DELETE", "/ip_restrictions/"+xid, a.Token, nil).Expect(t, 204)
	a.Do(t, "GET", "/api_keys", nil).Expect(t, 200)
	a.Do(t, "POST", "/api_keys", map[string]any{}).Expect(t, 201)

	// Unenforced: never refuses, warns in a response header.
	u := a.Do(t, "POST", "/ip_restrictions", map[string]any{"type": "api", "enforced": false, "ip_policy_ids": []string{ten}}).Expect(t, 201)
	res := a.Do(t, "GET", "/api_keys", nil)
	res.Expect(t, 200)
	if w := res.Header.Get(iprestrict.WarningHeader); !strings.Contains(w, "127.0.0.1") || !strings.Contains(w, u["id"].(string)) {
		t.Fatalf("warning header %q", w)
	}
	a.Do(t, "POST", "/api_keys", map[string]any{}).Expect(t, 201)
	if w := s.DoFrom(t, admin, "GET", "/api_keys", a.Token, nil).Header.Get(iprestrict.WarningHeader); w != "" {
		t.Fatalf("allowed source warned: %q", w)
	}
	a.Do(t, "DELETE", "/ip_restrictions/"+u["id"].(string), nil).Expect(t, 204)
	if w := a.Do(t, "GET", "/api_keys", nil).Header.Get(iprestrict.WarningHeader); w != "" {
		t.Fatalf("warning after delete: %q", w)
	}
	// Restrictions of other types are not enforced on the API.
	a.Do(t, "POST", "/ip_restrictions", map[string]any{"type": "dashboard", "enforced": true, "ip_policy_ids": []string{ten}}).Expect(t, 201)
	a.Do(t, "GET", "/api_keys", nil).Expect(t, 200)
}

// Creating or updating an enforced api restriction (or a rule of one) that would refuse the
// calling address is a 400 that says so, and changes nothing.
func TestLockoutRefused(t *testing.T) {
	_, a := testkit.AppAccount(t)
	ten := newPolicy(t, a)
	newRule(t, a, ten, "10.0.0.0/8", "allow")
	loop := newPolicy(t, a)
	lr := newRule(t, a, loop, "127.0.0.0/8", "allow")
	m := a.Do(t, "POST", "/ip_restrictions", map[string]any{"type": "api", "enforced": true, "ip_policy_ids": []string{ten}}).ExpectError(t, 400, "ERR_NGROK_215", "ip_policy_ids")
	if msg := m["msg"].(string); !strings.Contains(msg, "127.0.0.1") || !strings.Contains(msg, "locking you out") {
		t.Fatalf("lockout message %q", msg)
	}
	if n := countItems(t, a, "/ip_restrictions", "ip_restrictions"); n != 0 {
		t.Fatalf("%d restrictions stored", n)
	}
	x := a.Do(t, "POST", "/ip_restrictions", map[string]any{"type": "api", "enforced": false, "ip_policy_ids": []string{ten}}).Expect(t, 201)
	a.Do(t, "PATCH", "/ip_restrictions/"+x["id"].(string), map[string]any{"enforced": true}).ExpectError(t, 400, "ERR_NGROK_215", "enforced")
	// Allowed through the loopback policy, enforcing is fine; then removing the allowing rule is refused.
	a.Do(t, "PATCH", "/ip_restrictions/"+x["id"].(string), map[string]any{"enforced": true, "ip_policy_ids": []string{ten, loop}}).Expect(t, 200)
	a.Do(t, "DELETE", "/ip_policy_rules/"+lr["id"].(string), nil).ExpectError(t, 400, "ERR_NGROK_215", "id")
	a.Do(t, "PATCH", "/ip_policy_rules/"+lr["id"].(string), map[string]any{"cidr": "127.0.0.0/31"}).Expect(t, 200)
	a.Do(t, "PATCH", "/ip_policy_rules/"+lr["id"].(string), map[string]any{"cidr": "127.0.0.2/31"}).ExpectError(t, 400, "ERR_NGROK_215", "cidr")
	a.Do(t, "POST", "/ip_policy_rules", map[string]any{"ip_policy_id": ten, "cidr": "127.0.0.1/32", "action": "deny"}).ExpectError(t, 400, "ERR_NGROK_215", "cidr")
	a.Do(t, "PATCH", "/ip_restrictions/"+x["id"].(string), map[string]any{"ip_policy_ids": []string{ten}}).ExpectError(t, 400, "ERR_NGROK_215", "ip_policy_ids")
	a.Do(t, "GET", "/api_keys", nil).Expect(t, 200)
	a.Do(t, "DELETE", "/ip_restrictions/"+x["id"].(string), nil).Expect(t, 204)
}

// 20 parallel attempts to delete a policy race creates of rules and restrictions against it;
// afterwards no rule or restriction points at a missing policy.
func TestReferentialIntegrityUnderConcurrency(t *testing.T) {
	s, a := testkit.AppAccount(t)
	for round := 0; round < 3; round++ {
		p := newPolicy(t, a)
		codes := map[int]int{}
		defer func() { t.Logf("round %d: %v", round, codes) }()
		responses := testkit.AtOnce(60, func(n int) *testkit.Response {
			switch i := n / 3; n % 3 {
			case 0:
				// Staggered, so that deletes land before, among and after the creates.
				time.Sleep(time.Duration(i) * time.Millisecond)
				return a.Do(t, "DELETE", "/ip_policies/"+p, nil)
			case 1:
				return a.Do(t, "POST", "/ip_policy_rules", map[string]any{"ip_policy_id": p, "cidr": fmt.Sprintf("10.%d.%d.0/24", round, i), "action": "allow"})
			default:
				typ := []string{"dashboard", "agent", "endpoints", "api"}[i%4]
				return a.Do(t, "POST", "/ip_restrictions", map[string]any{"type": typ, "ip_policy_ids": []string{p}})
			}
		})
		for _, res := range responses {
			st := res.Status
			codes[st]++
			switch st {
			case 201, 204, 400, 404:
			default:
				t.Errorf("unexpected status %d", st)
			}
		}
	}
	// Scan the account's rules and restrictions: every policy they name exists.
	ctx := t.Context()
	exists := func(id string) bool {
		var it map[string]any
		err := s.DB.Get(ctx, store.ResourceKey(a.AccountID, id), &it)
		return err == nil
	}
	type rule struct {
		ID     string `dynamodbav:"id"`
		Policy string `dynamodbav:"policy"`
	}
	for _, r := range testkit.QueryAll[rule](t, s.DB, store.Collection(a.AccountID, ids.IPPolicyRule)) {
		if !exists(r.Policy) {
			t.Errorf("rule %s points at missing policy %s", r.ID, r.Policy)
		}
	}
	type restriction struct {
		ID       string   `dynamodbav:"id"`
		Policies []string `dynamodbav:"policies"`
	}
	xs := testkit.QueryAll[restriction](t, s.DB, store.Collection(a.AccountID, ids.IPRestriction))
	for _, x := range xs {
		for _, p := range x.Policies {
			if !exists(p) {
				t.Errorf("restriction %s points at missing policy %s", x.ID, p)
			}
		}
	}
	// Policies that survived still account for their referrers: deleting restrictions frees them.
	for _, x := range xs {
		a.Do(t, "DELETE", "/ip_restrictions/"+x.ID, nil).Expect(t, 204)
	}
	for _, id := range func() []string { got, _ := a.WalkPages(t, "/ip_policies", "ip_policies"); return got }() {
		a.Do(t, "DELETE", "/ip_policies/"+id, nil).Expect(t, 204)
	}
	if n := countItems(t, a, "/ip_policy_rules", "ip_policy_rules"); n != 0 {
		t.Fatalf("%d rules left after deleting every policy", n)
	}
}

// Every request reads the account item without its compiled restriction; the whole item (up to
// hundreds of KB with many rules) is read once per process and restriction version, so a warm
// request stays one round trip however many rules the account has.
func TestCompiledRestrictionReadOncePerVersion(t *testing.T) {
	s, a := testkit.AppAccount(t)
	pol := a.Do(t, "POST", "/ip_policies", map[string]any{}).Expect(t, 201)["id"].(string)
	for i := 0; i < 50; i++ {
		a.Do(t, "POST", "/ip_policy_rules", map[string]any{"ip_policy_id": pol, "cidr": fmt.Sprintf("10.1.%d.0/24", i), "action": "deny"}).Expect(t, 201)
	}
	a.Do(t, "POST", "/ip_policy_rules", map[string]any{"ip_policy_id": pol, "cidr": "127.0.0.0/8", "action": "allow"}).Expect(t, 201)
	a.Do(t, "POST", "/ip_restrictions", map[string]any{"type": "api", "enforced": true, "ip_policy_ids": []string{pol}}).Expect(t, 201)
	path := "/api_keys/" + a.APIKeyID
	calls := func() int {
		s.Calls.Reset()
		a.Do(t, "GET", path, nil).Expect(t, 200)
		return s.Calls.Total()
	}
	if n := calls(); n > 2 {
		t.Fatalf("first request after a restriction change made %d calls, want at most 2", n)
	}
	for i := 0; i < 3; i++ {
		if n := calls(); n != 1 {
			t.Fatalf("warm request made %d calls %v, want 1", n, s.Calls.ByName())
		}
	}
	// A rule change is a new version: read once more, then warm again, and enforced.
	a.Do(t, "POST", "/ip_policy_rules", map[string]any{"ip_policy_id": pol, "cidr": "10.2.0.0/16", "action": "deny"}).Expect(t, 201)
	if n := calls(); n > 2 {
		t.Fatalf("first request after a rule change made %d calls", n)
	}
	if n := calls(); n != 1 {
		t.Fatalf("warm request made %d calls, want 1", n)
	}
}

// A PATCH that changes what a restriction or a rule refers to still makes one read and one
// transaction: the policies a restriction is set to are read with it, and a rule's new CIDR is
// checked by its policy's index at commit (a CIDR the policy has is still a 400).
func TestReferenceChangingUpdatesRoundTrips(t *testing.T) {
	s, a := testkit.AppAccount(t)
	p1, p2 := newPolicy(t, a), newPolicy(t, a)
	rule := newRule(t, a, p1, "10.0.0.0/8", "allow")["id"].(string)
	newRule(t, a, p1, "10.1.0.0/16", "allow")
	x := a.Do(t, "POST", "/ip_restrictions", map[string]any{"type": "dashboard", "ip_policy_ids": []string{p1}}).Expect(t, http.StatusCreated)["id"].(string)
	for _, c := range []struct {
		name, path string
		body       any
	}{
		{"restriction set to another policy list", "/ip_restrictions/" + x, map[string]any{"ip_policy_ids": []string{p2, p1}}},
		{"rule moved to a new CIDR", "/ip_policy_rules/" + rule, map[string]any{"cidr": "10.0.0.0/9"}},
	} {
		got := s.RoundTripsOf(t, func() { a.Do(t, "PATCH", c.path, c.body).Expect(t, http.StatusOK) })
		if want := testkit.RoundTrips["update"]; !maps.Equal(got, want) {
			t.Errorf("%s: DynamoDB calls %v, want %v", c.name, got, want)
		}
	}
	a.Do(t, "PATCH", "/ip_policy_rules/"+rule, map[string]any{"cidr": "10.1.0.0/16"}).ExpectError(t, http.StatusBadRequest, "ERR_NGROK_1408", "cidr")
	if got := a.Do(t, "GET", "/ip_policy_rules/"+rule, nil).Expect(t, http.StatusOK)["cidr"]; got != "10.0.0.0/9" {
		t.Fatalf("the refused move changed the rule's CIDR to %v", got)
	}
	if got := a.Do(t, "GET", "/ip_restrictions/"+x, nil).Expect(t, http.StatusOK)["ip_policies"].([]any); len(got) != 2 {
		t.Fatalf("restriction policies %v, want two", got)
	}
	// The index still holds the moved rule under its new CIDR: another rule cannot take it.
	a.Do(t, "POST", "/ip_policy_rules", map[string]any{"ip_policy_id": p1, "cidr": "10.0.0.0/9", "action": "deny"}).ExpectError(t, http.StatusBadRequest, "ERR_NGROK_1408", "cidr")
	newRule(t, a, p1, "10.0.0.0/8", "deny")
}

// A rule's checks against its policy are conditions of its one transaction, never a read: 20
// rules with one CIDR sent at once to one policy make exactly one rule, and every other answer
// is the 400 the duplicate gets alone, naming the rule that won.
func TestConcurrentRulesWithOneCIDR(t *testing.T) {
	s, a := testkit.AppAccount(t)
	for round := range 3 {
		p := newPolicy(t, a)
		cidr := fmt.Sprintf("10.%d.0.0/16", round)
		responses := testkit.AtOnce(20, func(int) *testkit.Response {
			return a.Do(t, "POST", "/ip_policy_rules", map[string]any{"ip_policy_id": p, "cidr": cidr, "action": "allow"})
		})
		var won []string
		for _, res := range responses {
			if res.Status == http.StatusCreated {
				won = append(won, res.JSON(t)["id"].(string))
			}
		}
		if len(won) != 1 {
			t.Fatalf("round %d: %d rules created for one CIDR, want 1", round, len(won))
		}
		for _, res := range responses {
			if res.Status == http.StatusCreated {
				continue
			}
			msg := res.ExpectError(t, http.StatusBadRequest, "ERR_NGROK_1408", "cidr")["msg"].(string)
			if !strings.Contains(msg, won[0]) {
				t.Fatalf("round %d: duplicate refused with %q, which does not name the rule %s", round, msg, won[0])
			}
		}
		n := 0
		for _, r := range testkit.QueryAll[access.IPPolicyRuleItem](t, s.DB, store.Collection(a.AccountID, ids.IPPolicyRule)) {
			if r.PolicyID == p {
				n++
			}
		}
		var pol access.IPPolicyItem
		if err := s.DB.Get(t.Context(), store.ResourceKey(a.AccountID, p), &pol); err != nil {
			t.Fatal(err)
		}
		if n != 1 || len(pol.Rules) != 1 {
			t.Fatalf("round %d: %d rule items and %d indexed on the policy, want 1 and 1", round, n, len(pol.Rules))
		}
	}
}

// A policy whose index is full refuses a new rule at commit with the 400 naming ip_policy_id,
// and stores nothing; one rule fewer and the rule is made.
func TestRuleRefusedByFullPolicy(t *testing.T) {
	s, a := testkit.AppAccount(t)
	p := newPolicy(t, a)
	pol := fillPolicy(t, s, a, p, access.MaxRulesPerPolicy)
	body := map[string]any{"ip_policy_id": p, "cidr": "192.0.2.0/24", "action": "deny"}
	msg := a.Do(t, "POST", "/ip_policy_rules", body).ExpectError(t, http.StatusBadRequest, access.CodeRuleLimit, "ip_policy_id")["msg"].(string)
	if !strings.Contains(msg, fmt.Sprint(access.MaxRulesPerPolicy)) {
		t.Fatalf("full policy refused with %q", msg)
	}
	if n := countItems(t, a, "/ip_policy_rules", "ip_policy_rules"); n != 0 {
		t.Fatalf("%d rules stored by a refused create", n)
	}
	delete(pol.Rules, "fill0")
	pol.Version++
	if err := s.DB.Put(t.Context(), &pol); err != nil {
		t.Fatal(err)
	}
	newRule(t, a, p, "192.0.2.0/24", "deny")
}

// A policy with more rules than one transaction can delete with it (store.MaxTxItems less the
// policy's own writes) is refused with 400 ERR_NGROK_1411 naming id and stays, rules and all.
func TestDeleteOfPolicyWithTooManyRulesIsRefused(t *testing.T) {
	s, a := testkit.AppAccount(t)
	p := newPolicy(t, a)
	fillPolicy(t, s, a, p, store.MaxTxItems)
	msg := a.Do(t, "DELETE", "/ip_policies/"+p, nil).ExpectError(t, http.StatusBadRequest, access.CodeRuleLimit, "id")["msg"].(string)
	if !strings.Contains(msg, fmt.Sprint(store.MaxTxItems)+" rules") {
		t.Fatalf("refused with %q", msg)
	}
	a.Do(t, "GET", "/ip_policies/"+p, nil).Expect(t, http.StatusOK)
}

// fillPolicy indexes n made-up rules on a's policy p directly in the table (thousands of rules
// through the API would take minutes on the test stack) and returns the policy item as stored.
func fillPolicy(t *testing.T, s *testkit.Stack, a *testkit.Account, p string, n int) access.IPPolicyItem {
	t.Helper()
	var pol access.IPPolicyItem
	if err := s.DB.Get(t.Context(), store.ResourceKey(a.AccountID, p), &pol); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		pol.Rules[fmt.Sprintf("fill%d", i)] = fmt.Sprintf("ipr_fill%d allow 10.%d.%d.0/24", i, i/256, i%256)
	}
	if err := s.DB.Put(t.Context(), &pol); err != nil {
		t.Fatal(err)
	}
	return pol
}
