package domains_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"tunnelapi/shared/families/domains"
	"tunnelapi/shared/platform/config"
	"tunnelapi/shared/platform/store"
	"tunnelapi/shared/testing/testkit"
)

func TestAgentIngressesConformance(t *testing.T) {
	s := testkit.App(t)
	s.Conformance(t, testkit.FamilySpec{
		Family: domains.AgentIngressesDescriptor,
		Create: func(t *testing.T, a *testkit.Account, n int) any {
			return map[string]any{"domain": testkit.UniqueName("agents", "example.com"), "description": fmt.Sprint(n)}
		},
		Update:      map[string]any{"description": "edge agents", "metadata": "m"},
		UpdateWants: map[string]any{"description": "edge agents", "metadata": "m", "certificate_management_policy": nil},
	})
}

func TestAgentIngressShape(t *testing.T) {
	s, a := testkit.AppAccount(t)
	name := testkit.UniqueName("ingress", "example.com")
	got := a.Do(t, "POST", "/agent_ingresses", map[string]any{"domain": name}).Expect(t, http.StatusCreated)
	if fmt.Sprint(got["ns_targets"]) != "[ns1.dns."+base+" ns2.dns."+base+"]" {
		t.Errorf("ns_targets %v", got["ns_targets"])
	}
	var want []string
	for _, r := range strings.Split(config.Default("REGIONS"), ",") {
		want = append(want, "tunnel."+r+"."+name)
	}
	if fmt.Sprint(got["region_domains"]) != fmt.Sprint(want) {
		t.Errorf("region_domains %v, want %v", got["region_domains"], want)
	}
	if got["certificate_management_policy"] != nil || got["certificate_management_status"] != nil {
		t.Errorf("no policy given, got %v", got)
	}
	id := got["id"].(string)
	got = a.Do(t, "PATCH", "/agent_ingresses/"+id, map[string]any{"certificate_management_policy": map[string]any{}}).Expect(t, http.StatusOK)
	if fmt.Sprint(got["certificate_management_policy"]) != "map[authority:letsencrypt private_key_type:rsa]" ||
		fmt.Sprint(got["certificate_management_status"]) != "map[provisioning_job:<nil> renews_at:<nil>]" {
		t.Fatalf("after setting a policy: %v", got)
	}
	var item domains.AgentIngressItem
	if err := s.DB.Get(t.Context(), store.ResourceKey(a.AccountID, id), &item); err != nil {
		t.Fatal(err)
	}
	if p := item.Pending; p == nil || fmt.Sprint(p.Domains) != fmt.Sprint(want) || p.PrivateKeyType != "rsa" || p.Reason != domains.ReasonPolicy {
		t.Fatalf("pending job %+v", item.Pending)
	}
	// Unique across accounts.
	a.Do(t, "POST", "/agent_ingresses", map[string]any{"domain": name}).ExpectError(t, http.StatusBadRequest, "ERR_NGROK_6706", "domain")
	b := s.NewAccount(t)
	b.Do(t, "POST", "/agent_ingresses", map[string]any{"domain": strings.ToUpper(name)}).ExpectError(t, http.StatusBadRequest, "ERR_NGROK_6706", "domain")
	a.Do(t, "DELETE", "/agent_ingresses/"+id, nil).Expect(t, http.StatusNoContent)
	b.Do(t, "POST", "/agent_ingresses", map[string]any{"domain": name, "certificate_management_policy": map[string]any{"private_key_type": "ecdsa"}}).Expect(t, http.StatusCreated)
}

func TestAgentIngressBadInput(t *testing.T) {
	_, a := testkit.AppAccount(t)
	id := a.Do(t, "POST", "/agent_ingresses", map[string]any{"domain": testkit.UniqueName("keep", "example.com"), "description": "keep"}).Expect(t, http.StatusCreated)["id"].(string)
	cases := []struct {
		name, method string
		body         any
		code, field  string
	}{
		{"no domain", "POST", map[string]any{}, "ERR_NGROK_6704", "domain"},
		{"one label", "POST", map[string]any{"domain": "agents"}, "ERR_NGROK_6704", "domain"},
		{"wildcard", "POST", map[string]any{"domain": "*.example.com"}, "ERR_NGROK_6704", "domain"},
		{"invalid character", "POST", map[string]any{"domain": "a_b.example.com"}, "ERR_NGROK_6704", "domain"},
		{"non-public TLD", "POST", map[string]any{"domain": "agents.internal"}, "ERR_NGROK_6704", "domain"},
		{"the base domain", "POST", map[string]any{"domain": base}, "ERR_NGROK_6705", "domain"},
		{"under the base domain", "POST", map[string]any{"domain": "a." + base}, "ERR_NGROK_6705", "domain"},
		{"long description", "POST", map[string]any{"domain": "ok.example.com", "description": strings.Repeat("d", 256)}, "ERR_NGROK_6700", "description"},
		{"long metadata", "POST", map[string]any{"domain": "ok.example.com", "metadata": strings.Repeat("m", 4097)}, "ERR_NGROK_6701", "metadata"},
		{"authority", "POST", map[string]any{"domain": "ok.example.com", "certificate_management_policy": map[string]any{"authority": "zerossl"}}, "ERR_NGROK_435", "certificate_management_policy.authority"},
		{"private key type", "POST", map[string]any{"domain": "ok.example.com", "certificate_management_policy": map[string]any{"private_key_type": "ed25519"}}, "ERR_NGROK_215", "certificate_management_policy.private_key_type"},
		{"empty update", "PATCH", map[string]any{}, "ERR_NGROK_606", ""},
		{"domain is fixed", "PATCH", map[string]any{"domain": "other.example.com"}, "ERR_NGROK_214", "domain"},
		{"long description on update", "PATCH", map[string]any{"description": strings.Repeat("d", 256)}, "ERR_NGROK_6700", "description"},
		{"authority on update", "PATCH", map[string]any{"certificate_management_policy": map[string]any{"authority": "x"}}, "ERR_NGROK_435", "certificate_management_policy.authority"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := "/agent_ingresses"
			if c.method == "PATCH" {
				path += "/" + id
			}
			a.Do(t, c.method, path, c.body).ExpectError(t, http.StatusBadRequest, c.code, c.field)
		})
	}
	if ids, _ := a.WalkPages(t, "/agent_ingresses", "ingresses"); len(ids) != 1 {
		t.Fatalf("%d ingresses stored, want 1", len(ids))
	}
	if got := a.Do(t, "GET", "/agent_ingresses/"+id, nil).Expect(t, http.StatusOK); got["description"] != "keep" || got["certificate_management_policy"] != nil {
		t.Fatalf("refused updates changed the ingress: %v", got)
	}
}
