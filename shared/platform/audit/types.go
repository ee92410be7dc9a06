package audit

// Verbs is a set of the mutations a kind's events record: created, updated, deleted.
type Verbs uint8

// The verbs, one bit each.
const (
	Created Verbs = 1 << iota
	Updated
	Deleted
	// AllVerbs is what a kind whose resources are created, updated and deleted records.
	AllVerbs = Created | Updated | Deleted
)

// verbNames are the verbs' names in Type, in bit order.
var verbNames = []string{"created", "updated", "deleted"}

// Names returns the names of the verbs in v ("created", "updated", "deleted"), in that order.
func (v Verbs) Names() []string {
	var out []string
	for i, name := range verbNames {
		if v&(1<<i) != 0 {
			out = append(out, name)
		}
	}
	return out
}

// AuditKinds are the resource kinds whose mutations record events, each with the verbs it
// records: <kind>_<verb>.v0 for each, and no other (an event that can never happen is no type
// a subscription may name). The backend kinds (tunnel_group_backend, static_backend,
// http_response_backend, failover_backend, weighted_backend), endpoint, bot_user,
// service_user, agent_ingress, tls_edge and tcp_edge and https_edge and https_edge_route,
// vault, secret, kubernetes_operator and abuse_report are this service's additions to the
// platform's list. Abuse reports are only created (they have no update or delete route).
var AuditKinds = map[string]Verbs{
	"api_key": AllVerbs, "tunnel_credential": AllVerbs, "bot_user": AllVerbs, "service_user": AllVerbs,
	"certificate_authority": AllVerbs, "tls_certificate": AllVerbs,
	"ip_policy": AllVerbs, "ip_policy_rule": AllVerbs, "ip_restriction": AllVerbs,
	"tunnel_group_backend": AllVerbs, "static_backend": AllVerbs, "http_response_backend": AllVerbs,
	"failover_backend": AllVerbs, "weighted_backend": AllVerbs, "endpoint": AllVerbs,
	"event_destination": AllVerbs, "event_subscription": AllVerbs,
	"ssh_certificate_authority": AllVerbs, "ssh_user_certificate": AllVerbs, "ssh_host_certificate": AllVerbs,
	"ssh_public_key": AllVerbs, "domain": AllVerbs, "tcp_address": AllVerbs, "agent_ingress": AllVerbs,
	"tls_edge": AllVerbs, "tcp_edge": AllVerbs, "https_edge": AllVerbs, "https_edge_route": AllVerbs,
	"vault": AllVerbs, "secret": AllVerbs, "kubernetes_operator": AllVerbs,
	"abuse_report": Created,
}
