package delivery

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"slices"
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
	// Event ids carry their creation second, which is the envelope's event_timestamp.
	at, ok := idTime(out.EventID, ids.Event)
	if verr != nil || nerr != nil || !ok || n < 1 || !shaped(out.DestinationID, ids.EventDestination) ||
		!shaped(out.AccountID, ids.Account) || out.EventType == "" || len(out.Event) == 0 {
		return out, time.Time{}, errors.New("the delivery lacks its routing attributes")
	}
	out.DestinationVersion, out.Attempt = v, n
	return out, at, nil
}

// ksuidEpoch is the Unix time of a KSUID's timestamp 0.
const ksuidEpoch = 1400000000

// idTime is the creation time in an id of the kind prefix, and whether id is one: shaped so,
// with 27 base62 digits that fit a KSUID's 20 bytes (as ids.Parse checks). The digits are
// multiplied out in three 64-bit words, whose top 32 of 160 bits are the KSUID's timestamp;
// ksuid.Parse's long division into bytes, which the worker does not need, cost a delivery more
// than the rest of its message's parse.
func idTime(id, prefix string) (time.Time, bool) {
	if !shaped(id, prefix) {
		return time.Time{}, false
	}
	var hi, mid, lo uint64 // the KSUID, a 160-bit number (27 base62 digits fit in 192 bits)
	for _, c := range []byte(id[len(id)-27:]) {
		var d uint64
		switch {
		case c <= '9':
			d = uint64(c - '0')
		case c <= 'Z':
			d = uint64(c-'A') + 10
		default:
			d = uint64(c-'a') + 36
		}
		// (hi, mid, lo) = (hi, mid, lo)*62 + d
		c1, l := bits.Mul64(lo, 62)
		l, carry := bits.Add64(l, d, 0)
		c2, m := bits.Mul64(mid, 62)
		m, carry = bits.Add64(m, c1, carry)
		hi, lo, mid = hi*62+c2+carry, l, m
	}
	if hi>>32 != 0 {
		return time.Time{}, false // more than 20 bytes
	}
	return time.Unix(ksuidEpoch+int64(hi), 0).UTC(), true
}

// shaped reports whether id has the shape of an id of the kind prefix: the prefix, '_' and 27
// base62 characters. Only the event id is decoded (its time is the record's, idTime); decoding the
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
		destRef
		ps   []pendingDelivery
		dest *Destination
	}
	groups := map[destKey]*group{}
	var order []destKey
	var failed []string
	for _, m := range msgs {
		p, err := parseDelivery(m)
		if err != nil {
			if !w.toDLQ(ctx, "delivery", queue.Message{ID: "dlq", Body: m.Body, Attrs: plainAttrs(m)}, m.MessageId, err) {
				failed = append(failed, m.MessageId)
			}
			continue
		}
		key := destKey{p.msg.AccountID, p.msg.DestinationID}
		g := groups[key]
		if g == nil {
			g = &group{destRef: destRef{destKey: key}, ps: make([]pendingDelivery, 0, len(msgs))}
			groups[key] = g
			order = append(order, key)
		}
		g.version = max(g.version, p.msg.DestinationVersion)
		g.ps = append(g.ps, p)
	}
	want := make([]destRef, 0, len(order))
	for _, key := range order {
		want = append(want, groups[key].destRef)
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
		c := newCounter(lines.At(), w.MaxAttempts, len(g.ps))
		for i, p := range g.ps {
			if errs[i] != nil && !w.retry(ctx, p, errs[i]) {
				failed = append(failed, p.id)
			}
			c.count(p, errs[i])
		}
		c.emit(lines, g.dest.Target.Kind)
		// One usage line for the batch's events delivered to the destination: the usage
		// worker sums them, so it counts what a line per event would.
		if n := len(c.latencies[0]); n > 0 {
			lines.EmitUsage(metrics.Usage{Account: g.account, Events: n})
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

// outcomes are the outcomes of a delivery attempt, in the order counter keeps them.
var outcomes = [...]string{metrics.Delivered, metrics.Retried, metrics.DeadLettered}

// counter gathers the outcomes of a batch's delivery attempts to one destination, and each
// attempt's latency from its event's commit to at, the batch's time.
type counter struct {
	at          time.Time
	maxAttempts int
	// latencies are the attempts' latencies in milliseconds, by outcome (as outcomes).
	latencies [len(outcomes)][]float64
}

// newCounter is the counter of a batch of n attempts, most of which are delivered.
func newCounter(at time.Time, maxAttempts, n int) *counter {
	c := &counter{at: at, maxAttempts: maxAttempts}
	c.latencies[0] = make([]float64, 0, n)
	return c
}

// count adds one delivery attempt: its outcome (err is its failure), and its latency.
func (c *counter) count(p pendingDelivery, err error) {
	o := 0 // delivered
	if err != nil {
		o = 1 // retried
		if p.msg.Attempt >= c.maxAttempts {
			o = 2 // dead-lettered
		}
	}
	var latency time.Duration
	if !p.rec.Time.IsZero() {
		latency = max(c.at.Sub(p.rec.Time), 0)
	}
	c.latencies[o] = append(c.latencies[o], float64(latency.Milliseconds()))
}

// emit adds the batch's Delivery lines to lines: one per outcome (and per MaxSamples attempts)
// with its count, and each attempt's latency a sample of its own, so that CloudWatch's sums and
// percentiles are those of a line per attempt.
func (c *counter) emit(lines *metrics.Batch, sink string) {
	for o, all := range c.latencies {
		if len(all) == 0 {
			continue
		}
		dims := map[string]string{metrics.DimSink: sink, metrics.DimOutcome: outcomes[o]}
		for part := range slices.Chunk(all, metrics.MaxSamples) {
			lines.EmitSamples(metrics.Delivery, dims, []float64{float64(len(part))}, part)
		}
	}
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

// destKey names a destination: its account and its id.
type destKey struct{ account, id string }

// destRef is a destination wanted at version or newer.
type destRef struct {
	destKey
	version int64
}

// maxDests bounds the destination cache; past it the cache starts over.
const maxDests = 10000

// destinations returns the destinations wanted, from the cache when the cached one is at least
// as new as the version the delivery was fanned out with, else read (one round trip for
// all misses) with their secrets opened. An absent destination maps to nil.
func (w *Worker) destinations(ctx context.Context, want []destRef) (map[destKey]*Destination, error) {
	out := make(map[destKey]*Destination, len(want))
	var miss []destRef
	w.mu.Lock()
	for _, r := range want {
		if d, ok := w.dests[r.destKey]; ok && d.Version >= r.version {
			out[r.destKey] = d
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
				out[r.destKey] = nil
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
			out[r.destKey] = d
			w.mu.Lock()
			if w.dests == nil || len(w.dests) >= maxDests {
				w.dests = map[destKey]*Destination{}
			}
			if old, ok := w.dests[r.destKey]; !ok || old.Version < d.Version {
				w.dests[r.destKey] = d
			}
			w.mu.Unlock()
		}
	}
	return out, nil
}
