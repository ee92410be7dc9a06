// Package audit records audit events.
//
// Every committed mutation of a resource records exactly one event, <kind>_<verb>.v0 with verb
// created, updated or deleted (Type), in the mutation's own transaction (a mutation that also
// deletes a resource its own resource holds, a managed certificate, records that one's deleted
// event too; a worker finishing what a request started records its events on behalf of that
// request's caller, OnBehalf): an outbox item (under one of store.OutboxShards partitions,
// expiring OutboxRetention later) and an audit-log item of the account (kept for LogRetention). Nothing on the request path publishes: the table's
// stream carries each outbox insert to the events queue (an EventBridge Pipe in AWS, the local
// stream reader otherwise, both with StreamPattern and StreamInputTemplate), so delivery is at
// least once, deduplicated downstream by event id.
//
// The delivered envelope is JSON with, in this order: event_id (ev_…), event_type,
// event_timestamp (RFC 3339 UTC, whole seconds), account_id, object (the resource exactly as
// GET returns it at that moment) and principal {id, subject, source:"API", credential:{id,
// uri}}. Members may be added to a .v0 payload; any other change needs a new version. It is
// encoded without HTML escaping (<, > and & as they are), which keeps it close to the size of
// the resource.
//
// The audit-log item always holds the whole envelope. The outbox item's payload, which is what
// the events queue carries, is the envelope too, unless it is larger than MaxMessageBytes: then
// it is the envelope's Reference (routing members and "stored":"audit_log"), and the event
// worker reads the envelope from the log (Load) before delivering it. Events are passed by
// reference, never split.
package audit
