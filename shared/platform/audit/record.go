package audit

import (
	"encoding/json"
	"fmt"
	"time"

	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/store"
)

// Principal is who caused an event.
type Principal struct {
	ID         string  `json:"id"`
	Subject    string  `json:"subject"`
	Source     string  `json:"source"`
	Credential api.Ref `json:"credential"`
}

// Envelope is the delivered form of an event; its members are in the wire order.
type Envelope struct {
	EventID        string          `json:"event_id"`
	EventType      string          `json:"event_type"`
	EventTimestamp string          `json:"event_timestamp"`
	AccountID      string          `json:"account_id"`
	Object         json.RawMessage `json:"object"`
	Principal      Principal       `json:"principal"`
}

// OutboxItem is a committed event as the table's stream carries it: its insert is the event's
// one trip to the events queue, and it expires OutboxRetention later.
type OutboxItem struct {
	store.Key
	EventID   string `dynamodbav:"event_id"`
	EventType string `dynamodbav:"event_type"`
	AccountID string `dynamodbav:"account"`
	Payload   string `dynamodbav:"payload"`
	Created   int64  `dynamodbav:"created"`
	TTL       int64  `dynamodbav:"ttl"`
}

// LogItem is an event in its account's audit log, kept for LogRetention.
type LogItem struct {
	store.Key
	EventID   string `dynamodbav:"event_id"`
	EventType string `dynamodbav:"event_type"`
	Payload   string `dynamodbav:"payload"`
	TTL       int64  `dynamodbav:"ttl"`
}

// LogRetention is how long the audit log keeps an event.
const LogRetention = 30 * 24 * time.Hour

// Type names an audit event: <kind>_<verb>.v0.
func Type(kind, verb string) string { return kind + "_" + verb + ".v0" }

// Record adds the event for a mutation by r's caller to tx. object is the resource exactly as
// GET returns it. It returns the event's envelope.
func Record(tx *store.Tx, r *api.Request, eventType string, object any) (*Envelope, error) {
	c := r.Caller()
	if c == nil {
		return nil, fmt.Errorf("audit: no caller for %s", eventType)
	}
	obj, err := json.Marshal(object)
	if err != nil {
		return nil, fmt.Errorf("audit: marshal object: %w", err)
	}
	now := time.Now().UTC()
	env := &Envelope{
		EventID:        ids.NewAt(ids.Event, now),
		EventType:      eventType,
		EventTimestamp: now.Format("2006-01-02T15:04:05Z"),
		AccountID:      c.AccountID,
		Object:         obj,
		Principal: Principal{
			ID: c.PrincipalID, Subject: c.Subject, Source: "API",
			Credential: api.Ref{ID: c.CredentialID, URI: r.URI("/api_keys/" + c.CredentialID)},
		},
	}
	payload, err := json.Marshal(env)
	if err != nil {
		return nil, fmt.Errorf("audit: marshal envelope: %w", err)
	}
	tx.Put("event.outbox", OutboxItem{Key: store.OutboxKey(env.EventID), EventID: env.EventID,
		EventType: eventType, AccountID: c.AccountID, Payload: string(payload), Created: now.Unix(),
		TTL: now.Add(OutboxRetention).Unix()})
	tx.Put("event.log", LogItem{Key: store.EventLogKey(c.AccountID, env.EventID), EventID: env.EventID,
		EventType: eventType, Payload: string(payload), TTL: now.Add(LogRetention).Unix()})
	return env, nil
}
