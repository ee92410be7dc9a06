package testkit

import "testing"

// UpdateMember is one member of a family's update form in the platform's OpenAPI: its name and
// the zero value of its type as the official clients decode an omitted member.
type UpdateMember struct {
	Name string
	Zero any
}

// UpdateMembers returns the members of the update form (the request of PATCH path/{id}) of the
// family at the collection path, failing the test when the platform has none.
func UpdateMembers(t testing.TB, path string) []UpdateMember {
	t.Helper()
	form, ok := updateForms[path]
	if !ok {
		t.Fatalf("the platform's OpenAPI has no update form for %s/{id}", path)
	}
	return form
}

// updateForms are the update forms of the platform's OpenAPI by collection path.
var updateForms = map[string][]UpdateMember{
	"/agent_ingresses":              {{"id", ""}, {"description", ""}, {"metadata", ""}, {"certificate_management_policy", map[string]any{}}},
	"/api_keys":                     {{"id", ""}, {"description", ""}, {"metadata", ""}},
	"/backends/failover":            {{"id", ""}, {"description", ""}, {"metadata", ""}, {"backends", []any{}}},
	"/backends/http_response":       {{"id", ""}, {"description", ""}, {"metadata", ""}, {"body", ""}, {"headers", map[string]any{}}, {"status_code", 0}},
	"/backends/static":              {{"id", ""}, {"description", ""}, {"metadata", ""}, {"address", ""}, {"tls", map[string]any{}}},
	"/backends/tunnel_group":        {{"id", ""}, {"description", ""}, {"metadata", ""}, {"labels", map[string]any{}}},
	"/backends/weighted":            {{"id", ""}, {"description", ""}, {"metadata", ""}, {"backends", map[string]any{}}},
	"/bot_users":                    {{"id", ""}, {"name", ""}, {"active", false}},
	"/certificate_authorities":      {{"id", ""}, {"description", ""}, {"metadata", ""}},
	"/credentials":                  {{"id", ""}, {"description", ""}, {"metadata", ""}, {"acl", []any{}}},
	"/edges/https/{edge_id}/routes": {{"edge_id", ""}, {"id", ""}, {"match_type", ""}, {"match", ""}, {"description", ""}, {"metadata", ""}, {"backend", map[string]any{}}, {"ip_restriction", map[string]any{}}, {"circuit_breaker", map[string]any{}}, {"compression", map[string]any{}}, {"request_headers", map[string]any{}}, {"response_headers", map[string]any{}}, {"webhook_verification", map[string]any{}}, {"oauth", map[string]any{}}, {"saml", map[string]any{}}, {"oidc", map[string]any{}}, {"websocket_tcp_converter", map[string]any{}}, {"user_agent_filter", map[string]any{}}, {"traffic_policy", map[string]any{}}},
	"/edges/https":                  {{"id", ""}, {"description", ""}, {"metadata", ""}, {"hostports", []any{}}, {"mutual_tls", map[string]any{}}, {"tls_termination", map[string]any{}}},
	"/edges/tcp":                    {{"id", ""}, {"description", ""}, {"metadata", ""}, {"hostports", []any{}}, {"backend", map[string]any{}}, {"ip_restriction", map[string]any{}}, {"traffic_policy", map[string]any{}}},
	"/edges/tls":                    {{"id", ""}, {"description", ""}, {"metadata", ""}, {"hostports", []any{}}, {"backend", map[string]any{}}, {"ip_restriction", map[string]any{}}, {"mutual_tls", map[string]any{}}, {"tls_termination", map[string]any{}}, {"traffic_policy", map[string]any{}}},
	"/endpoints":                    {{"id", ""}, {"url", ""}, {"traffic_policy", ""}, {"description", ""}, {"metadata", ""}, {"bindings", []any{}}, {"pooling_enabled", false}},
	"/event_destinations":           {{"id", ""}, {"metadata", ""}, {"description", ""}, {"format", ""}, {"target", map[string]any{}}},
	"/event_subscriptions":          {{"id", ""}, {"metadata", ""}, {"description", ""}, {"sources", []any{}}, {"destination_ids", []any{}}},
	"/ip_policies":                  {{"id", ""}, {"description", ""}, {"metadata", ""}},
	"/ip_policy_rules":              {{"id", ""}, {"description", ""}, {"metadata", ""}, {"cidr", ""}},
	"/ip_restrictions":              {{"id", ""}, {"description", ""}, {"metadata", ""}, {"enforced", false}, {"ip_policy_ids", []any{}}},
	"/reserved_addrs":               {{"id", ""}, {"description", ""}, {"metadata", ""}},
	"/reserved_domains":             {{"id", ""}, {"description", ""}, {"metadata", ""}, {"certificate_id", ""}, {"certificate_management_policy", map[string]any{}}, {"resolves_to", []any{}}},
	"/vault_secrets":                {{"id", ""}, {"name", ""}, {"value", ""}, {"metadata", ""}, {"description", ""}},
	"/service_users":                {{"id", ""}, {"name", ""}, {"active", false}},
	"/ssh_certificate_authorities":  {{"id", ""}, {"description", ""}, {"metadata", ""}},
	"/ssh_credentials":              {{"id", ""}, {"description", ""}, {"metadata", ""}, {"acl", []any{}}},
	"/ssh_host_certificates":        {{"id", ""}, {"description", ""}, {"metadata", ""}},
	"/ssh_user_certificates":        {{"id", ""}, {"description", ""}, {"metadata", ""}},
	"/tls_certificates":             {{"id", ""}, {"description", ""}, {"metadata", ""}},
	"/vaults":                       {{"id", ""}, {"name", ""}, {"metadata", ""}, {"description", ""}},
}
