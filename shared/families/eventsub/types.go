package eventsub

import (
	"sort"
	"sync"

	"tunnelapi/shared/platform/audit"
)

// otherTypes are the event types that are not a resource's create, update or delete.
var otherTypes = []string{
	"agent_session_start.v0", "agent_session_stop.v0",
	"http_request_complete.v0", "tcp_connection_closed.v0",
}

// known holds every event type a subscription may name (knownTypes).
var known struct {
	once  sync.Once
	types map[string]bool
}

// knownTypes is every event type a subscription may name: each verb each audit kind records
// (audit.AuditKinds), and the others. It is built on first use: a function that never checks a
// type (event destinations) neither builds it at start nor links audit.AuditKinds.
func knownTypes() map[string]bool {
	known.once.Do(func() {
		m := map[string]bool{}
		for kind, verbs := range audit.AuditKinds {
			for _, verb := range verbs.Names() {
				m[audit.Type(kind, verb)] = true
			}
		}
		for _, t := range otherTypes {
			m[t] = true
		}
		known.types = m
	})
	return known.types
}

// KnownType reports whether t is an event type a subscription may name.
func KnownType(t string) bool { return knownTypes()[t] }

// KnownTypes returns every event type a subscription may name, sorted.
func KnownTypes() []string {
	types := knownTypes()
	out := make([]string, 0, len(types))
	for t := range types {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}
