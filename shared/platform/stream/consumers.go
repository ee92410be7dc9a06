package stream

import "tunnelapi/shared/platform/audit"

// Events is the consumer that carries committed audit events (outbox inserts) to the events
// queue, its QueueURL left to the caller. template.yaml's EventsPipe declares the same.
var Events = Consumer{Name: "events", Pattern: audit.StreamPattern, InputTemplate: audit.StreamInputTemplate}

// To returns the consumer with its target queue set.
func (c Consumer) To(queueURL string) Consumer {
	c.QueueURL = queueURL
	return c
}
