package delivery

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	lambdaevents "github.com/aws/aws-lambda-go/events"

	"tunnelapi/shared/events"
	"tunnelapi/shared/eventsub"
	"tunnelapi/shared/ids"
	"tunnelapi/shared/queue"
	"tunnelapi/shared/store"
)

// pendingDelivery is a delivery message with its parsed body and the record it carries.
type pendingDelivery struct {
	m   lambdaevents.SQSMessage
	msg Message
	rec Record
}

func parseDelivery(m lambdaevents.SQSMessage) (pendingDelivery, error) {
	p := pendingDelivery{m: m}
	if err := json.Unmarshal([]byte(m.Body), &p.msg); err != nil {
		return p, fmt.Errorf("unreadable delivery: %w", err)
	}
	if !ids.Is(p.msg.DestinationID, ids.EventDestination) || !ids.Is(p.msg.AccountID, ids.Account) {
		return p, errors.New("the delivery lacks destination_id or account_id")
	}
	h, err := parseEnvelope(string(p.msg.Event))
	if err != nil {
		return p, err
	}
	if h.AccountID != p.msg.AccountID {
		return p, errors.New("the delivery's event belongs to another account")
	}
	t, err := time.Parse(time.RFC3339, h.EventTimestamp)
	if err != nil {
		t, _ = ids.Time(h.EventID)
	}
	p.rec = Record{EventID: h.EventID, EventType: h.EventType, Time: t, Data: p.msg.Event}
	return p, nil
}

// deliver sends delivery messages to their destinations, one batch per destination, all
// destinations at once. It returns the messages to receive again: only those whose retry
// could not even be enqueued.
func (w *Worker) deliver(ctx context.Context, msgs []lambdaevents.SQSMessage) []string {
	type group struct {
		account, id string
		version     int64
		ps          []pendingDelivery
	}
	groups := map[string]*group{}
	var order []string
	var failed []string
	for _, m := range msgs {
		p, err := parseDelivery(m)
		if err != nil {
			if !w.toDLQ(ctx, m, "delivery", err, nil) {
				failed = append(failed, m.MessageId)
			}
			continue
		}
		g := groups[p.msg.DestinationID]
		if g == nil {
			g = &group{account: p.msg.AccountID, id: p.msg.DestinationID}
			groups[p.msg.DestinationID] = g
			order = append(order, p.msg.DestinationID)
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
					failed = append(failed, p.m.MessageId)
				}
			}
		}
		return failed
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, id := range order {
		g := groups[id]
		d := dests[id]
		if d == nil {
			w.log().Info("destination gone; deliveries dropped", "destination", id, "count", len(g.ps))
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs := w.send(ctx, d, g.ps)
			for i, p := range g.ps {
				if errs[i] == nil {
					continue
				}
				if !w.retry(ctx, p, errs[i]) {
					mu.Lock()
					failed = append(failed, p.m.MessageId)
					mu.Unlock()
				}
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
	recs := make([]Record, len(ps))
	for i, p := range ps {
		recs[i] = p.rec
	}
	return sink.Deliver(ctx, d, recs)
}

// retry schedules the next attempt of a failed delivery with a backoff delay, or after the
// last attempt moves it to the dead-letter queue with the destination id and the error. It
// reports whether the message is taken care of.
func (w *Worker) retry(ctx context.Context, p pendingDelivery, cause error) bool {
	next := p.msg
	next.LastError = truncate(cause.Error(), 1024)
	if p.msg.Attempt >= w.maxAttempts() {
		body, _ := json.Marshal(next)
		m := p.m
		m.Body = string(body)
		return w.toDLQ(ctx, m, "delivery", cause, map[string]string{AttrDestination: p.msg.DestinationID,
			AttrEventID: p.msg.EventID, AttrAttempts: strconv.Itoa(p.msg.Attempt)})
	}
	next.Attempt = p.msg.Attempt + 1
	body, err := json.Marshal(next)
	if err != nil {
		return false
	}
	delay := w.backoff(p.msg.Attempt)
	failed, err := queue.SendAll(ctx, w.SQS, w.QueueURL, []queue.Message{{ID: "retry", Body: string(body), Delay: delay,
		Attrs: map[string]string{events.AttrKind: events.KindDelivery, AttrDestination: p.msg.DestinationID,
			AttrEventID: p.msg.EventID, AttrAttempts: strconv.Itoa(p.msg.Attempt)}}})
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

// maxDests bounds the destination cache; past it the cache starts over.
const maxDests = 10000

// destinations returns the destinations wanted, from the cache when the cached one is at
// least as new as the version the delivery was fanned out with, else read (one round trip for
// all misses) with their secrets opened. An absent destination maps to nil.
func (w *Worker) destinations(ctx context.Context, want []destRef) (map[string]*Destination, error) {
	out := map[string]*Destination{}
	var miss []destRef
	w.mu.Lock()
	for _, r := range want {
		if d, ok := w.dests[r.id]; ok && d.Version >= r.version && d.AccountID == r.account {
			out[r.id] = d
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
				out[r.id] = nil
				continue
			}
			var it eventsub.DestinationItem
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
			out[r.id] = d
			w.mu.Lock()
			if w.dests == nil || len(w.dests) >= maxDests {
				w.dests = map[string]*Destination{}
			}
			if old, ok := w.dests[d.ID]; !ok || old.Version < d.Version {
				w.dests[d.ID] = d
			}
			w.mu.Unlock()
		}
	}
	return out, nil
}
