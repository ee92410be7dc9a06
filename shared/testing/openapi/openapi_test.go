package openapi

import (
	"slices"
	"testing"
)

// The copy answers the questions the tests ask of it, with what the platform documents.
func TestCopyAnswers(t *testing.T) {
	if op, ok := Lookup("GET", "/api_keys"); !ok || !op.Filter || op.Response != "APIKeyList" {
		t.Errorf("GET /api_keys: %+v %v", op, ok)
	}
	if op, ok := Lookup("GET", "/api_keys/{id}"); !ok || op.Filter {
		t.Errorf("GET /api_keys/{id}: %+v %v", op, ok)
	}
	if _, ok := Lookup("GET", "/no_such_thing"); ok {
		t.Error("an unknown path was found")
	}
	list, ok := ResponseSchema("GET", "/api_keys")
	keys, _ := list.Member("keys")
	if !ok || keys.Type != "array" || keys.Ref != "APIKey" || keys.Items != "object" {
		t.Errorf("the list's keys: %+v", keys)
	}
	if form, ok := Update("/api_keys"); !ok || !slices.Equal(form.Names(), []string{"id", "description", "metadata"}) {
		t.Errorf("update members %v", form.Names())
	}
	if form, _ := Update("/edges/https/{edge_id}/routes"); !slices.Contains(form.Names(), "match") {
		t.Errorf("a nested collection's update members %v", form.Names())
	}
	create, _ := Create("/ip_policy_rules")
	if cidr, _ := create.Member("cidr"); !cidr.Required || cidr.Type != "string" {
		t.Errorf("ip policy rule cidr: %+v", cidr)
	}
	if policy, _ := create.Member("ip_policy_id"); policy.Zero() != "" {
		t.Errorf("a string's zero: %#v", policy.Zero())
	}
	if _, ok := Update("/abuse_reports"); ok {
		t.Error("an update the platform does not have")
	}
	if _, ok := Create("/no_such_thing"); ok {
		t.Error("a create the platform does not have")
	}
	for name, s := range Load().Schemas {
		if s.Name != name {
			t.Errorf("schema %s is named %s", name, s.Name)
		}
		for _, m := range s.Members {
			if _, ok := SchemaNamed(m.Ref); m.Ref != "" && !ok {
				t.Errorf("%s.%s refers to an unknown schema %s", name, m.Name, m.Ref)
			}
		}
	}
}
