package audit

// AuditKinds are the resource kinds whose mutations record <kind>_created.v0, <kind>_updated.v0
// and <kind>_deleted.v0. The backend kinds (tunnel_group_backend, static_backend,
// http_response_backend, failover_backend, weighted_backend), endpoint, bot_user, service_user,
// agent_ingress, tls_edge and tcp_edge and https_edge and https_edge_route, vault, secret and
// abuse_report are this service's additions to the platform's list.
var AuditKinds = []string{
	"api_key", "tunnel_credential", "bot_user", "service_user", "certificate_authority", "tls_certificate",
	"ip_policy", "ip_policy_rule", "ip_restriction", "tunnel_group_backend", "static_backend",
	"http_response_backend", "failover_backend", "weighted_backend", "endpoint",
	"event_destination", "event_subscription", "ssh_certificate_authority", "ssh_user_certificate",
	"ssh_host_certificate", "ssh_public_key", "domain", "tcp_address", "agent_ingress",
	"tls_edge", "tcp_edge",
	"https_edge", "https_edge_route", "vault", "secret", "abuse_report",
}
