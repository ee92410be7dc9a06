package access_test

import (
	"strings"
	"testing"

	"tunnelapi/shared/families/access"
	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/resource"
	"tunnelapi/shared/platform/store"
	"tunnelapi/shared/testing/hooktest"
)

// The hooks are plain methods: these run them without a table or a server.

func TestIPPoliciesHooks(t *testing.T) {
	f := resource.HooksOf[access.IPPolicies](access.IPPoliciesDescriptor, nil)
	it := &access.IPPolicyItem{Meta: store.Meta{ID: "ipp_1", CreatedAt: 0}, Described: resource.Described{Description: "office", Metadata: "m"}}
	want := `{"id":"ipp_1","uri":"https://api.example.com/ip_policies/ipp_1","created_at":"1970-01-01T00:00:00Z","description":"office","metadata":"m"}`
	hooktest.WantJSON(t, f.Render(hooktest.Request(""), it), want)
	hooktest.WantCode(t, f.Update(t.Context(), hooktest.Request(`{}`), it, nil), "ERR_NGROK_606", "body")
	long := `{"description":"` + strings.Repeat("x", 256) + `"}`
	hooktest.WantCode(t, f.Update(t.Context(), hooktest.Request(long), it, nil), access.CodeTextTooLong, "description")
	if it.Description != "office" {
		t.Fatalf("a refused update changed the item: %+v", it)
	}
}

// A rule's create body is checked before anything is read, in the order the wire reports.
func TestIPPolicyRulesHooks(t *testing.T) {
	f := resource.HooksOf[access.IPPolicyRules](access.IPPolicyRulesDescriptor, nil)
	ctx := t.Context()
	cases := []struct{ body, code, field string }{
		{`{"action":"allow","ip_policy_id":"ipp_1"}`, "ERR_NGROK_1406", "cidr"},
		{`{"cidr":"10.0.0.1","action":"allow"}`, "ERR_NGROK_1413", "cidr"},
		{`{"cidr":"10.0.0.0/8","action":"block"}`, access.CodeActionNotAllowed, "action"},
		{`{"cidr":"10.0.0.0/8","action":"deny"}`, access.CodePolicyNotFound, "ip_policy_id"},
		{`{"cidr":"10.0.0.0/8","action":"deny","ip_policy_id":"ak_1"}`, access.CodePolicyNotFound, "ip_policy_id"},
	}
	for _, c := range cases {
		_, err := f.Create(ctx, hooktest.Request(c.body), &access.IPPolicyRuleItem{}, nil)
		hooktest.WantCode(t, err, c.code, c.field)
	}
	it := &access.IPPolicyRuleItem{Meta: store.Meta{ID: "ipr_1"}, CIDR: "10.0.0.0/8", Action: access.ActionAllow, PolicyID: "ipp_1"}
	hooktest.WantCode(t, f.Update(ctx, hooktest.Request(`{"action":"deny"}`), it, nil), access.CodeActionNotAllowed, "action")
	// The action cannot change, so an empty update does not name it among the changeable fields.
	if e, ok := api.AsError(f.Update(ctx, hooktest.Request(`{}`), it, nil)); !ok || e.Code != api.CodeEmptyUpdate ||
		e.Msg != "the update supplies none of the changeable fields (description, metadata, cidr)" {
		t.Errorf("empty update: %v", e)
	}
	want := `{"id":"ipr_1","uri":"https://api.example.com/ip_policy_rules/ipr_1","created_at":"1970-01-01T00:00:00Z",` +
		`"cidr":"10.0.0.0/8","ip_policy":{"id":"ipp_1","uri":"https://api.example.com/ip_policies/ipp_1"},"action":"allow"}`
	hooktest.WantJSON(t, f.Render(hooktest.Request(""), it), want)
}

func TestIPRestrictionsHooks(t *testing.T) {
	f := resource.HooksOf[access.IPRestrictions](access.IPRestrictionsDescriptor, nil)
	ctx := t.Context()
	cases := []struct{ body, field string }{
		{`{"type":"web","ip_policy_ids":["ipp_1"]}`, "type"},
		{`{"type":"api"}`, "ip_policy_ids"},
		{`{"type":"api","ip_policy_ids":[]}`, "ip_policy_ids"},
		{`{"type":"api","ip_policy_ids":["ak_1"]}`, "ip_policy_ids"},
	}
	for _, c := range cases {
		_, err := f.Create(ctx, hooktest.Request(c.body), &access.IPRestrictionItem{}, nil)
		hooktest.WantCode(t, err, "ERR_NGROK_215", c.field)
	}
	it := &access.IPRestrictionItem{Meta: store.Meta{ID: "ipx_1"}, Type: access.TypeAgent, PolicyIDs: []string{"ipp_1", "ipp_2"}}
	hooktest.WantCode(t, f.Update(ctx, hooktest.Request(`{}`), it, nil), "ERR_NGROK_606", "body")
	want := `{"id":"ipx_1","uri":"https://api.example.com/ip_restrictions/ipx_1","created_at":"1970-01-01T00:00:00Z",` +
		`"enforced":false,"type":"agent","ip_policies":[{"id":"ipp_1","uri":"https://api.example.com/ip_policies/ipp_1"},` +
		`{"id":"ipp_2","uri":"https://api.example.com/ip_policies/ipp_2"}]}`
	hooktest.WantJSON(t, f.Render(hooktest.Request(""), it), want)
}
