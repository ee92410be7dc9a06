package eventsub

import (
	"sort"

	"tunnelapi/shared/platform/audit"
)

// otherTypes are the event types that are not a resource's create, update or delete.
var otherTypes = []string{
	"agent_session_start.v0", "agent_session_stop.v0",
	"http_request_complete.v0", "tcp_connection_closed.v0",
}

// knownTypes is every event type a subscription may name: each verb each audit kind records
// (audit.AuditKinds), and the others.
var knownTypes = func() map[string]bool {
	m := map[string]bool{}
	for kind, verbs := range audit.AuditKinds {
		for _, verb := range verbs.Names() {
			m[audit.Type(kind, verb)] = true
		}
	}
	for _, t := range otherTypes {
		m[t] = true
	}
	return m
}()

// KnownType reports whether t is an event type a subscription may name.
func KnownType(t string) bool { return knownTypes[t] }

// KnownTypes returns every event type a subscription may name, sorted.
func KnownTypes() []string {
	out := make([]string, 0, len(knownTypes))
	for t := range knownTypes {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}
