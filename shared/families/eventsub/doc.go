// Package eventsub holds the configuration side of events: event destinations (where events
// go, with their sealed credentials), event subscriptions (which event types go to which
// destinations) and the sources sub-resource of a subscription. The worker that delivers
// events reads the items defined here.
//
// Conventions it implements:
//   - A destination has exactly one target kind (firehose, kinesis, cloudwatch_logs, datadog,
//     azure_logs_ingestion). Its one secret (AWS secret access key, Datadog API key, Azure
//     client secret) is sealed to the destination before it is stored and never shown again;
//     a PATCH target without a secret keeps the stored one while it authenticates the same way.
//   - The only format is json. Over-long description and metadata are ERR_NGROK_215 (these
//     families have no codes of their own); the other refusals use the Code constants here.
//   - A subscription references its destinations in its own transaction, so a destination in
//     use cannot be deleted (ERR_NGROK_5112) and a subscription cannot name an absent one.
//   - Sources are event types kept inside the subscription item, in the order added, addressed
//     as /event_subscriptions/{id}/sources/{type}; each change is an update of the subscription
//     (same version check and event). The sources list is not paginated. An id or
//     subscription_id repeated in a body must equal the path's.
//   - A source's type is one that can happen: a verb its kind records (audit.AuditKinds, so
//     abuse_report_created.v0 but no updated or deleted type of abuse reports) or one of the
//     other types (agent sessions, requests, connections); any other is ERR_NGROK_238 naming
//     the type's field.
package eventsub
