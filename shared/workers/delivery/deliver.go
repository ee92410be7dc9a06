package delivery

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	lambdaevents "github.com/aws/aws-lambda-go/events"

	"tunnelapi/shared/families/eventsub"
	"tunnelapi/shared/platform/audit"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/metrics"
	"tunnelapi/shared/platform/queue"
	"tunnelapi/shared/platform/store"
)

// Message is one delivery: an event on its way to one destination. On the queue its Event is
// the body, verbatim, and everything else is a message attribute.
type Message struct {
	EventID, EventType, AccountID, DestinationID string
	// DestinationVersion is the destination's version when the event was fanned out; the
	// worker uses a cached destination only if it is at least this new.
	DestinationVersion int64
	// Attempt counts deliveries, this one included (1 for the first).
	Attempt   int
	LastError string
	Event     []byte
	// Stored says Event is the event's audit.Reference: the envelope is read from the audit
	// log (audit.Load) when it is delivered.
	Stored bool
}

// Queued is the message as sent to the queue, with id unique in its batch and a delay.
func (m Message) Queued(id string, delay int32) queue.Message {
	attrs := map[string]string{audit.AttrKind: audit.KindDelivery, AttrDestination: m.DestinationID,
		AttrDestinationVersion: strconv.FormatInt(m.DestinationVersion, 10), AttrAccount: m.AccountID,
		AttrEventID: m.EventID, AttrEventType: m.EventType, AttrAttempts: strconv.Itoa(m.Attempt)}
	if m.LastError != "" {
		attrs[AttrLastError] = m.LastError
	}
	if m.Stored {
		attrs[AttrStored] = audit.StoredInLog
	}
	return queue.Message{ID: id, Body: string(m.Event), Delay: delay, Attrs: attrs}
}

// ParseMessage reads a delivery message as the queue delivers it.
func ParseMessage(m lambdaevents.SQSMessage) (Message, error) {
	msg, _, err := parseMessage(m)
	return msg, err
}

// parseMessage is ParseMessage, also returning the time of the event's id, read in the same
// parse of the id as its check.
func parseMessage(m lambdaevents.SQSMessage) (Message, time.Time, error) {
	attr := func(k string) string {
		if a, ok := m.MessageAttributes[k]; ok && a.StringValue != nil {
			return *a.StringValue
		}
		return ""
	}
	out := Message{EventID: attr(AttrEventID), EventType: attr(AttrEventType), AccountID: attr(AttrAccount),
		DestinationID: attr(AttrDestination), LastError: attr(AttrLastError), Event: []byte(m.Body), Stored: attr(AttrStored) != ""}
	v, verr := strconv.ParseInt(attr(AttrDestinationVersion), 10, 64)
	n, nerr := strconv.Atoi(attr(AttrAttempts))
	kind, event, eerr := ids.Parse(out.EventID)
	if verr != nil || nerr != nil || eerr != nil || n < 1 || kind != ids.Event || !shaped(out.DestinationID, ids.EventDestination) ||
		!shaped(out.AccountID, ids.Account) || out.EventType == "" || len(out.Event) == 0 {
		return out, time.Time{}, errors.New("the delivery lacks its routing attributes")
	}
	out.DestinationVersion, out.Attempt = v, n
	// Event ids carry their creation second, which is the envelope's event_timestamp.
	return out, event.Time().UTC(), nil
}

// shaped reports whether id has the shape of an id of the kind prefix: the prefix, '_' and 27
// base62 characters. Only the event id is decoded (its time is the record's); decoding the
// account and destination ids, which the worker's own fan-out wrote, would add only that their
// characters fit a KSUID's 20 bytes, and an id that names no destination finds none.
func shaped(id, prefix string) bool {
	rest, ok := strings.CutPrefix(id, prefix+"_")
	if !ok || len(rest) != 27 {
		return false
	}
	for i := 0; i < len(rest); i++ {
		if c := rest[i]; !('0' <= c && c <= '9' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z') {
			return false
		}
	}
	return true
}

// pendingDelivery is a delivery message with its parsed routing and the record it carries.
type pendingDelivery struct {
	id  string // the SQS message id, for partial batch failures
	msg Message
	rec Record
}

func parseDelivery(m lambdaevents.SQSMessage) (pendingDelivery, error) {
	msg, t, err := parseMessage(m)
	if err != nil {
		return pendingDelivery{id: m.MessageId}, err
	}
	return pendingDelivery{id: m.MessageId, msg: msg, rec: Record{EventID: msg.EventID, EventType: msg.EventType, Time: t, Data: msg.Event}}, nil
}

// deliver sends delivery messages to their destinations, one batch per destination, all
// destinations at once. It returns the messages to receive again: only those whose retry
// could not even be enqueued.
func (w *Worker) deliver(ctx context.Context, msgs []lambdaevents.SQSMessage) []string {
	type group struct {
		account, id string
		version     int64
		ps          []pendingDelivery
		dest        *Destination
	}
	groups := map[string]*group{}
	var order []string
	var failed []string
	for _, m := range msgs {
		p, err := parseDelivery(m)
		if err != nil {
			if !w.toDLQ(ctx, "delivery", queue.Message{ID: "dlq", Body: m.Body, Attrs: plainAttrs(m)}, m.MessageId, err) {
				failed = append(failed, m.MessageId)
			}
			continue
		}
		key := destRef{account: p.msg.AccountID, id: p.msg.DestinationID}.key()
		g := groups[key]
		if g == nil {
			g = &group{account: p.msg.AccountID, id: p.msg.DestinationID, ps: make([]pendingDelivery, 0, len(msgs))}
			groups[key] = g
			order = append(order, key)
		}
		g.version = max(g.version, p.msg.DestinationVersion)
		g.ps = append(g.ps, p)
	}
	want := make([]destRef, 0, len(order))
	for _, id := range order {
		g := groups[id]
		want = append(want, destRef{g.account, g.id, g.version})
	}
	dests, err := w.destinations(ctx, want)
	if err != nil {
		// The destinations could not be read: every delivery is retried later.
		for _, g := range groups {
			for _, p := range g.ps {
				if !w.retry(ctx, p, err) {
					failed = append(failed, p.id)
				}
			}
		}
		return failed
	}
	live := make([]*group, 0, len(order))
	for _, key := range order {
		if g := groups[key]; dests[key] == nil {
			w.log().Info("destination gone; deliveries dropped", "destination", g.id, "count", len(g.ps))
		} else {
			g.dest = dests[key]
			live = append(live, g)
		}
	}
	return append(failed, concurrently(live, func(g *group) []string {
		errs := w.send(ctx, g.dest, g.ps)
		var failed []string
		lines := w.Metrics.Batch()
		lines.Reserve(metrics.Delivery, len(g.ps)+1) // and the usage line, shorter
		c := counter{lines: lines, sink: g.dest.Target.Kind, maxAttempts: w.MaxAttempts}
		for i, p := range g.ps {
			if errs[i] != nil && !w.retry(ctx, p, errs[i]) {
				failed = append(failed, p.id)
			}
			c.count(p, errs[i])
		}
		// One usage line for the batch's events delivered to the destination: the usage
		// worker sums them, so it counts what a line per event would.
		if c.delivered > 0 {
			lines.EmitUsage(metrics.Usage{Account: g.account, Events: c.delivered})
		}
		lines.Flush()
		return failed
	})...)
}

// concurrently runs work for each group at once (in the calling goroutine when there is only
// one, the common case) and returns the ids of the messages work reports failed.
func concurrently[G any](groups []G, work func(g G) (failed []string)) []string {
	if len(groups) == 1 {
		return work(groups[0])
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	var failed []string
	for _, g := range groups {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if f := work(g); len(f) > 0 {
				mu.Lock()
				failed = append(failed, f...)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return failed
}

func (w *Worker) send(ctx context.Context, d *Destination, ps []pendingDelivery) []error {
	sink := w.Sinks[d.Target.Kind]
	if sink == nil {
		return every(len(ps), fmt.Errorf("no sink for target kind %q", d.Target.Kind))
	}
	errs := make([]error, len(ps))
	recs := make([]Record, 0, len(ps))
	idx := make([]int, 0, len(ps))
	for i, p := range ps {
		rec := p.rec
		if p.msg.Stored {
			// The queue carried a reference: the destination gets the whole envelope.
			env, err := audit.Load(ctx, w.DB, p.msg.AccountID, p.msg.EventID)
			if err != nil {
				errs[i] = err
				continue
			}
			rec.Data = env
		}
		recs = append(recs, rec)
		idx = append(idx, i)
	}
	if len(recs) == 0 {
		return errs
	}
	for j, err := range sink.Deliver(ctx, d, recs) {
		errs[idx[j]] = err
	}
	return errs
}

// counter emits the metric lines of a batch's delivery attempts to a destination of kind sink,
// one per attempt, into lines (written at once when the batch is done), and counts those
// delivered.
type counter struct {
	lines       *metrics.Batch
	sink        string
	maxAttempts int
	dims        map[string]map[string]string // by outcome
	delivered   int
}

// count adds the line of one delivery attempt: its outcome, and its latency from the event's
// commit to the batch's end.
func (c *counter) count(p pendingDelivery, err error) {
	outcome := metrics.Delivered
	if err != nil {
		outcome = metrics.Retried
		if p.msg.Attempt >= c.maxAttempts {
			outcome = metrics.DeadLettered
		}
	} else {
		c.delivered++
	}
	var latency time.Duration
	if !p.rec.Time.IsZero() {
		latency = max(c.lines.At().Sub(p.rec.Time), 0)
	}
	dims := c.dims[outcome]
	if dims == nil {
		dims = map[string]string{metrics.DimSink: c.sink, metrics.DimOutcome: outcome}
		if c.dims == nil {
			c.dims = map[string]map[string]string{}
		}
		c.dims[outcome] = dims
	}
	c.lines.Emit(metrics.Delivery, dims, 1, float64(latency.Milliseconds()))
}

// retry schedules the next attempt of a failed delivery with a backoff delay, or after the
// last attempt moves it to the dead-letter queue with the destination id and the error. It
// reports whether the message is taken care of.
func (w *Worker) retry(ctx context.Context, p pendingDelivery, cause error) bool {
	next := p.msg
	next.LastError = truncate(cause.Error(), 1024)
	if p.msg.Attempt >= w.MaxAttempts {
		return w.toDLQ(ctx, "delivery", next.Queued("dlq", 0), p.id, cause)
	}
	next.Attempt = p.msg.Attempt + 1
	delay := w.backoff(p.msg.Attempt)
	failed, err := queue.SendAll(ctx, w.SQS, w.QueueURL, []queue.Message{next.Queued("retry", delay)})
	if err != nil || len(failed) > 0 {
		return false
	}
	w.log().Info("delivery failed; retrying", "destination", p.msg.DestinationID, "event", p.msg.EventID,
		"attempt", p.msg.Attempt, "delay_s", delay, "err", cause.Error())
	return true
}

type destRef struct {
	account, id string
	version     int64
}

func (r destRef) key() string { return r.account + "/" + r.id }

// maxDests bounds the destination cache; past it the cache starts over.
const maxDests = 10000

// destinations returns the destinations wanted (by destRef.key), from the cache when the cached one is at
// least as new as the version the delivery was fanned out with, else read (one round trip for
// all misses) with their secrets opened. An absent destination maps to nil.
func (w *Worker) destinations(ctx context.Context, want []destRef) (map[string]*Destination, error) {
	out := map[string]*Destination{}
	var miss []destRef
	w.mu.Lock()
	for _, r := range want {
		if d, ok := w.dests[r.key()]; ok && d.Version >= r.version {
			out[r.key()] = d
		} else {
			miss = append(miss, r)
		}
	}
	w.mu.Unlock()
	for start := 0; start < len(miss); start += 100 {
		chunk := miss[start:min(start+100, len(miss))]
		keys := make([]store.Key, len(chunk))
		for i, r := range chunk {
			keys[i] = store.ResourceKey(r.account, r.id)
		}
		items, err := w.DB.GetMany(ctx, keys...)
		if err != nil {
			return nil, err
		}
		for i, raw := range items {
			r := chunk[i]
			if raw == nil {
				out[r.key()] = nil
				continue
			}
			var it eventsub.EventDestinationItem
			if err := store.Unmarshal(raw, &it); err != nil {
				return nil, err
			}
			d := &Destination{ID: it.ID, AccountID: it.AccountID, Version: it.Version, Target: it.Target}
			if it.Target.Secret != nil {
				pt, err := w.Seal.Open(ctx, *it.Target.Secret, eventsub.SealAAD(it.AccountID, it.ID))
				if err != nil {
					// Left without a secret: its sink refuses it, and the reason reaches the DLQ.
					w.log().Error("destination secret does not open", "destination", it.ID, "err", err.Error())
				} else {
					d.Secret = string(pt)
				}
			}
			// The secret stays in memory only; the stored target keeps just the sealed form.
			d.Target.Secret = nil
			out[r.key()] = d
			w.mu.Lock()
			if w.dests == nil || len(w.dests) >= maxDests {
				w.dests = map[string]*Destination{}
			}
			if old, ok := w.dests[r.key()]; !ok || old.Version < d.Version {
				w.dests[r.key()] = d
			}
			w.mu.Unlock()
		}
	}
	return out, nil
}
