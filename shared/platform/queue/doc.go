// Package queue is the SQS side of the service: the client (pointed at the local emulator by
// SQS_ENDPOINT), queue creation for local stacks and tests, and batched sends.
//
// Environment:
//
//	SQS_ENDPOINT       base URL of an SQS-compatible endpoint (the local fauxqs emulator);
//	                   unset in AWS, where the SDK resolves the regional endpoint
//	EVENTS_QUEUE_URL   the events queue: committed events and per-destination deliveries
//	EVENTS_DLQ_URL     the events dead-letter queue (the worker writes failures there itself)
package queue
