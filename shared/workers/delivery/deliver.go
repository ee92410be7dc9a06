package delivery

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"slices"
	"strconv"
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
	msg, _, err := parseMessage(m, []byte(m.Body))
	return msg, err
}

// parseMessage is ParseMessage with the message's Event given (event, the caller's copy of the
// body), also returning the time of the event's id, read in the same parse of the id as its
// check.
func parseMessage(m lambdaevents.SQSMessage, event []byte) (Message, time.Time, error) {
	// One pass over the attributes rather than a lookup (a hash) per attribute.
	out := Message{Event: event}
	var version, attempts string
	for k, a := range m.MessageAttributes {
		if a.StringValue == nil {
			continue
		}
		switch v := *a.StringValue; k {
		case AttrEventID:
			out.EventID = v
		case AttrEventType:
			out.EventType = v
		case AttrAccount:
			out.AccountID = v
		case AttrDestination:
			out.DestinationID = v
		case AttrDestinationVersion:
			version = v
		case AttrAttempts:
			attempts = v
		case AttrLastError:
			out.LastError = v
		case AttrStored:
			out.Stored = v != ""
		}
	}
	v, verr := strconv.ParseInt(version, 10, 64)
	n, nerr := strconv.Atoi(attempts)
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
// than the rest of its message's parse. The digits are summed ten at a time in one word (62^10
// < 2^60), so the three words are multiplied three times, not 27.
func idTime(id, prefix string) (time.Time, bool) {
	digits, ok := idDigits(id, prefix)
	if !ok {
		return time.Time{}, false
	}
	var hi, mid, lo uint64 // the KSUID, a 160-bit number (27 base62 digits fit in 192 bits)
	for _, n := range [...]int{7, 10, 10} {
		var chunk, scale uint64 = 0, 1
		for _, c := range []byte(digits[:n]) {
			chunk = chunk*62 + uint64(base62[c])
			scale *= 62
		}
		digits = digits[n:]
		// (hi, mid, lo) = (hi, mid, lo)*scale + chunk
		c1, l := bits.Mul64(lo, scale)
		l, carry := bits.Add64(l, chunk, 0)
		c2, m := bits.Mul64(mid, scale)
		m, carry = bits.Add64(m, c1, carry)
		hi, mid, lo = hi*scale+c2+carry, m, l
	}
	if hi>>32 != 0 {
		return time.Time{}, false // more than 20 bytes
	}
	return time.Unix(ksuidEpoch+int64(hi), 0).UTC(), true
}

// notBase62 marks a byte that is no base62 digit in base62.
const notBase62 = 0xff

// base62 is each byte's value as a base62 digit (0-9, A-Z, a-z), or notBase62. A table, not
// comparisons: the digits of random ids make range checks' branches mispredict.
var base62 = func() (t [256]byte) {
	for i := range t {
		t[i] = notBase62
	}
	const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	for v := range len(alphabet) {
		t[alphabet[v]] = byte(v)
	}
	return t
}()

// shaped reports whether id has the shape of an id of the kind prefix: the prefix, '_' and 27
// base62 characters. Only the event id is decoded (its time is the record's, idTime); decoding the
// account and destination ids, which the worker's own fan-out wrote, would add only that their
// characters fit a KSUID's 20 bytes, and an id that names no destination finds none.
func shaped(id, prefix string) bool {
	_, ok := idDigits(id, prefix)
	return ok
}

// idDigits returns the 27 base62 digits of an id shaped as one of the kind prefix (see shaped).
func idDigits(id, prefix string) (string, bool) {
	if len(id) != len(prefix)+28 || id[len(prefix)] != '_' || id[:len(prefix)] != prefix {
		return "", false
	}
	digits := id[len(prefix)+1:]
	bad := byte(0)
	for _, c := range []byte(digits) {
		bad |= base62[c] & 0x80
	}
	return digits, bad == 0
}

// pendingDelivery is a delivery message with its parsed routing.
type pendingDelivery struct {
	id  string // the SQS message id, for partial batch failures
	msg Message
	at  time.Time // the event's time (its record's Time)
}

// record is the record p delivers.
func (p *pendingDelivery) record() Record {
	return Record{EventID: p.msg.EventID, EventType: p.msg.EventType, Time: p.at, Data: p.msg.Event}
}

// deliver sends delivery messages to their destinations, one batch per destination, all
// destinations at once. It returns the messages to receive again: only those whose retry
// could not even be enqueued.
func (w *Worker) deliver(ctx context.Context, msgs []lambdaevents.SQSMessage) []string {
	// The records' data share one copy of the bodies: a copy each cost a batch ten allocations
	// that raw PutRecords of the same records does not make.
	size := 0
	for _, m := range msgs {
		size += len(m.Body)
	}
	bodies := make([]byte, 0, size)
	ps := make([]pendingDelivery, 0, len(msgs))
	var failed []string
	for _, m := range msgs {
		start := len(bodies)
		bodies = append(bodies, m.Body...)
		msg, at, err := parseMessage(m, bodies[start:len(bodies):len(bodies)])
		if err != nil {
			if !w.toDLQ(ctx, "delivery", queue.Message{ID: "dlq", Body: m.Body, Attrs: plainAttrs(m)}, m.MessageId, err) {
				failed = append(failed, m.MessageId)
			}
			continue
		}
		ps = append(ps, pendingDelivery{id: m.MessageId, msg: msg, at: at})
	}
	groups := groupByDestination(ps)
	if err := w.destinations(ctx, groups); err != nil {
		// The destinations could not be read: every delivery is retried later.
		for _, p := range ps {
			if !w.retry(ctx, p, err) {
				failed = append(failed, p.id)
			}
		}
		return failed
	}
	live := groups[:0]
	for _, g := range groups {
		if g.dest == nil {
			w.log().Info("destination gone; deliveries dropped", "destination", g.id, "count", len(g.ps))
		} else {
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

// group is the deliveries of a batch to one destination, wanted at the newest version they
// were fanned out with.
type group struct {
	destRef
	ps   []pendingDelivery
	dest *Destination
}

// groupByDestination groups the deliveries by destination, in the order of their first
// delivery. Most batches go to one destination, whose group is ps itself.
func groupByDestination(ps []pendingDelivery) []*group {
	if len(ps) == 0 {
		return nil
	}
	one := &group{destRef: destRef{destKey: destKey{ps[0].msg.AccountID, ps[0].msg.DestinationID}}, ps: ps}
	for _, p := range ps {
		if p.msg.AccountID != one.account || p.msg.DestinationID != one.id {
			one = nil
			break
		}
		one.version = max(one.version, p.msg.DestinationVersion)
	}
	if one != nil {
		return []*group{one}
	}
	byKey := map[destKey]*group{}
	var groups []*group
	for i := range ps {
		p := &ps[i]
		key := destKey{p.msg.AccountID, p.msg.DestinationID}
		g := byKey[key]
		if g == nil {
			g = &group{destRef: destRef{destKey: key}}
			byKey[key] = g
			groups = append(groups, g)
		}
		g.version = max(g.version, p.msg.DestinationVersion)
		g.ps = append(g.ps, *p)
	}
	return groups
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
	recs := make([]Record, 0, len(ps))
	// errs and idx are made once a stored event fails to load: that delivery's error, and the
	// delivery of each record.
	var errs []error
	var idx []int
	for i := range ps {
		p := &ps[i]
		rec := p.record()
		if p.msg.Stored {
			// The queue carried a reference: the destination gets the whole envelope.
			env, err := audit.Load(ctx, w.DB, p.msg.AccountID, p.msg.EventID)
			if err != nil {
				if errs == nil {
					errs, idx = make([]error, len(ps)), make([]int, len(recs), len(ps))
					for j := range idx {
						idx[j] = j
					}
				}
				errs[i] = err
				continue
			}
			rec.Data = env
		}
		if idx != nil {
			idx = append(idx, i)
		}
		recs = append(recs, rec)
	}
	if len(recs) == 0 {
		return errs
	}
	out := sink.Deliver(ctx, d, recs)
	if errs == nil {
		return out
	}
	for j, err := range out {
		errs[idx[j]] = err
	}
	return errs
}

// outcomes are the outcomes of a delivery attempt, in the order counter keeps them.
var outcomes = [...]string{metrics.Delivered, metrics.Retried, metrics.DeadLettered}

// deliveryDims are the dimensions of the Delivery lines of each sink kind, by outcome (as
// outcomes), made once instead of for every batch; the lines only read them.
var deliveryDims = func() map[string][len(outcomes)]map[string]string {
	out := map[string][len(outcomes)]map[string]string{}
	for _, kind := range []string{eventsub.KindKinesis, eventsub.KindFirehose, eventsub.KindCloudWatchLogs, eventsub.KindDatadog, eventsub.KindAzure} {
		var dims [len(outcomes)]map[string]string
		for o, outcome := range outcomes {
			dims[o] = map[string]string{metrics.DimSink: kind, metrics.DimOutcome: outcome}
		}
		out[kind] = dims
	}
	return out
}()

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
	if !p.at.IsZero() {
		latency = max(c.at.Sub(p.at), 0)
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
		dims := deliveryDims[sink][o]
		if dims == nil {
			dims = map[string]string{metrics.DimSink: sink, metrics.DimOutcome: outcomes[o]}
		}
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

// destinations sets each group's destination: the cached one when it is at least as new as the
// version the group's deliveries were fanned out with, else read (one round trip for all misses)
// with its secret opened; nil when the destination is gone.
func (w *Worker) destinations(ctx context.Context, groups []*group) error {
	var miss []*group
	w.mu.Lock()
	for _, g := range groups {
		if d, ok := w.dests[g.destKey]; ok && d.Version >= g.version {
			g.dest = d
		} else {
			miss = append(miss, g)
		}
	}
	w.mu.Unlock()
	for start := 0; start < len(miss); start += 100 {
		chunk := miss[start:min(start+100, len(miss))]
		keys := make([]store.Key, len(chunk))
		for i, g := range chunk {
			keys[i] = store.ResourceKey(g.account, g.id)
		}
		items, err := w.DB.GetMany(ctx, keys...)
		if err != nil {
			return err
		}
		for i, raw := range items {
			g := chunk[i]
			if raw == nil {
				g.dest = nil
				continue
			}
			var it eventsub.EventDestinationItem
			if err := store.Unmarshal(raw, &it); err != nil {
				return err
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
			g.dest = d
			w.mu.Lock()
			if w.dests == nil || len(w.dests) >= maxDests {
				w.dests = map[destKey]*Destination{}
			}
			if old, ok := w.dests[g.destKey]; !ok || old.Version < d.Version {
				w.dests[g.destKey] = d
			}
			w.mu.Unlock()
		}
	}
	return nil
}
