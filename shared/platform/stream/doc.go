// Package stream carries committed items from the table's DynamoDB stream to SQS queues: the
// local stand-in for an EventBridge Pipe. A Consumer is what a Pipe declares — a filter pattern
// over the stream record, an input template shaping the message body, a target queue — and a
// Reader applies it to the stream of DynamoDB Local (the Streams API on the table's endpoint).
//
// The record a pattern and a template see is the stream record as Pipes and Lambda present it:
// {"eventID", "eventName" (INSERT, MODIFY, REMOVE), "eventSource", "awsRegion",
// "dynamodb": {"Keys", "NewImage", "OldImage", "SequenceNumber", "SizeBytes",
// "StreamViewType"}}, attribute values in DynamoDB's JSON form ({"S": "..."}, {"N": "1"}, …).
//
// Patterns are EventBridge event patterns restricted to what the service's filters need: exact
// values (strings, numbers, booleans, null) and the "prefix", "exists" and "anything-but"
// (of exact values) operators; anything else is refused when the pattern is parsed, so a
// template filter this package cannot evaluate fails its test instead of passing unchecked.
// Input templates are a single JSON path placeholder ("<$.dynamodb.NewImage.payload.S>"),
// whose string value becomes the message body verbatim.
//
// Delivery is at-least-once. A Reader acknowledges a batch of records (its checkpoint: the
// shard and the last sequence number, in the table under the consumer's own key) only after SQS
// accepted every message of it, so a restart resends at most the records after the last
// checkpoint that were already sent; consumers dedupe (the event worker by event id). Shards
// are read parents first, so a shard rollover neither skips nor reorders an item's records.
//
// A message body is at most SQS's 256 KiB, and a Pipe sending to SQS has the same limit, so a
// consumer's template must select a value that is always smaller. The events consumer does: an
// audit event larger than audit.MaxMessageBytes is recorded with its outbox payload set to a
// reference to its audit-log item (audit.Reference), which the event worker resolves before
// delivering, so both the stream record and the message stay small and the event arrives whole.
// Neither this reader nor a Pipe splits or stores anything itself; the choice is the producer's.
package stream
