package audit

import "time"

// Message attributes of the events queue. One queue carries two kinds of message: committed
// events (from the table's stream, without attributes: a Pipe sets none) and per-destination
// deliveries (fanned out by the event worker, marked KindDelivery).
const (
	AttrKind     = "kind"
	KindEvent    = "event"
	KindDelivery = "delivery"
)

// How committed events leave the table. Every outbox item is inserted once, in its mutation's
// transaction, and never changed; the table's stream carries the insert to the events queue
// with the item's payload (the envelope) as the message body. template.yaml's events Pipe
// declares exactly this filter and input template, and the local stream reader applies them
// (a test proves the three agree). A TTL expiry removes the item later: a REMOVE, which the
// filter drops.
const (
	StreamPattern       = `{"eventName":["INSERT"],"dynamodb":{"Keys":{"pk":{"S":[{"prefix":"O#"}]}}}}`
	StreamInputTemplate = `<$.dynamodb.NewImage.payload.S>`
)

// DefaultOutboxRetention is how long an outbox item stays (a short audit trail of what was
// sent) before its TTL expires it: OUTBOX_RETENTION's default.
const DefaultOutboxRetention = 7 * 24 * time.Hour

// OutboxRetention is how long the outbox items of this process's events stay: the process's
// OUTBOX_RETENTION, set once at its start (config.Begin), DefaultOutboxRetention until then.
var OutboxRetention = DefaultOutboxRetention
