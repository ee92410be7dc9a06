package audit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/derrors"
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

	// message is what the events queue carries for the event (Message).
	message string
}

// Message is the body the events queue carries for the event: the envelope itself, or its
// Reference when the envelope is larger than MaxMessageBytes.
func (e *Envelope) Message() string { return e.message }

// MaxMessageBytes is the largest envelope the events queue carries as it is. SQS (and an
// EventBridge Pipe) take 256 KiB per message, attributes included; the rest of that is left for
// the attributes. A larger envelope travels as its Reference and the worker reads it from the
// audit log, which holds every envelope whole.
const MaxMessageBytes = 256<<10 - 8<<10

// StoredInLog is Reference.Stored: the envelope is the account's audit-log item of the event
// (LogItem, at store.EventLogKey(account_id, event_id)).
const StoredInLog = "audit_log"

// Reference stands for an envelope too large for the queue: its routing members and where the
// whole envelope is stored (Stored, StoredInLog). The event worker fans it out like any event
// and reads the envelope (Load) before delivering it, so destinations always get it whole.
type Reference struct {
	EventID        string `json:"event_id"`
	EventType      string `json:"event_type"`
	EventTimestamp string `json:"event_timestamp"`
	AccountID      string `json:"account_id"`
	Stored         string `json:"stored"`
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
func Record(tx *store.Tx, r *api.Request, eventType string, object any) (_ *Envelope, err error) {
	defer derrors.Wrap(&err, "audit.Record(%s)", eventType)
	c := r.Caller()
	if c == nil {
		return nil, errors.New("no caller")
	}
	obj, err := api.MarshalUnescaped(object)
	if err != nil {
		return nil, fmt.Errorf("marshal the object: %w", err)
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
	payload, err := api.MarshalUnescaped(env)
	if err != nil {
		return nil, fmt.Errorf("marshal the envelope: %w", err)
	}
	env.message = string(payload)
	if len(payload) > MaxMessageBytes {
		ref, err := api.MarshalUnescaped(Reference{EventID: env.EventID, EventType: eventType, EventTimestamp: env.EventTimestamp,
			AccountID: c.AccountID, Stored: StoredInLog})
		if err != nil {
			return nil, fmt.Errorf("marshal the reference: %w", err)
		}
		env.message = string(ref)
	}
	tx.PutNew("event.outbox", OutboxItem{Key: store.OutboxKey(env.EventID), EventID: env.EventID,
		EventType: eventType, AccountID: c.AccountID, Payload: env.message, Created: now.Unix(),
		TTL: now.Add(OutboxRetention).Unix()})
	tx.PutNew("event.log", LogItem{Key: store.EventLogKey(c.AccountID, env.EventID), EventID: env.EventID,
		EventType: eventType, Payload: string(payload), TTL: now.Add(LogRetention).Unix()})
	return env, nil
}

// Load reads the whole envelope of an event of account from the audit log: how the worker
// delivers an event that the queue carried as its Reference.
func Load(ctx context.Context, db *store.DB, account, eventID string) (_ []byte, err error) {
	defer derrors.Wrap(&err, "audit.Load(%s)", eventID)
	var it LogItem
	if err := db.Get(ctx, store.EventLogKey(account, eventID), &it); err != nil {
		return nil, err
	}
	return []byte(it.Payload), nil
}
