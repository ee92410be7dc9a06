package audit

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"time"

	"tunnelapi/shared/platform/derrors"
	"tunnelapi/shared/platform/queue"
	"tunnelapi/shared/platform/store"
)

// Message attributes of the events queue. One queue carries two kinds of message: committed
// events (published here) and per-destination deliveries (fanned out by the event worker).
const (
	AttrKind     = "kind"
	KindEvent    = "event"
	KindDelivery = "delivery"
)

// Step names a point in publishing where Publisher.Fault may stop it.
type Step string

// The steps of publishing, in order.
const (
	// StepSend is after the commit, before the events are sent to the queue.
	StepSend Step = "send"
	// StepDelete is after the events are on the queue, before their outbox items are deleted.
	StepDelete Step = "delete"
)

// SendTimeout bounds publishing on the request path: a slow queue delays a response at most
// this long, and what was not sent by then the sweep republishes.
const SendTimeout = 2 * time.Second

// DefaultGrace is how long the sweep leaves an outbox item to the request that wrote it and to
// the worker that routes it (either deletes it); only older items are republished.
const DefaultGrace = 30 * time.Second

// Publisher moves committed events from the outbox to the events queue: right after commit
// (Publish, on the request path: one SendMessageBatch) and by a periodic sweep that republishes
// whatever a crash left behind (Sweep). Delivery downstream is at-least-once with the event id
// as dedupe key, so a sweep racing a slow publisher only costs a duplicate.
type Publisher struct {
	DB       *store.DB
	SQS      queue.API
	QueueURL string
	Log      *slog.Logger
	// Grace is the age an outbox item must reach before Sweep republishes it (DefaultGrace
	// when zero).
	Grace time.Duration
	// Fault, when set, is asked before each step; true abandons publishing there as if the
	// process had died (fault injection in tests and in the local server).
	Fault func(Step) bool

	wg sync.WaitGroup
}

// Logger is the publisher's logger (the default one when Log is unset).
func (p *Publisher) Logger() *slog.Logger { return p.log() }

func (p *Publisher) log() *slog.Logger {
	if p.Log != nil {
		return p.Log
	}
	return slog.Default()
}

// Publish sends the events of one committed mutation to the queue, then deletes their outbox
// items in the background, off the request path. It never fails the request: whatever it
// could not do, the sweep does later.
func (p *Publisher) Publish(ctx context.Context, evs []*Envelope) {
	if p.Fault != nil && p.Fault(StepSend) {
		return
	}
	msgs := make([]queue.Message, 0, len(evs))
	for _, e := range evs {
		b, err := json.Marshal(e)
		if err != nil {
			p.log().Error("publish: marshal", "event", e.EventID, "err", err.Error())
			return
		}
		msgs = append(msgs, eventMessage(e.EventID, e.EventType, string(b)))
	}
	sctx, cancel := context.WithTimeout(ctx, SendTimeout)
	failed, err := queue.SendAll(sctx, p.SQS, p.QueueURL, msgs)
	cancel()
	if err != nil || len(failed) > 0 {
		p.log().Warn("publish: left for the sweep", "failed", len(failed), "err", errString(err))
	}
	if p.Fault != nil && p.Fault(StepDelete) {
		return
	}
	var sent []store.Key
	for _, m := range msgs {
		if _, bad := failed[m.ID]; !bad {
			sent = append(sent, store.OutboxKey(m.ID))
		}
	}
	if len(sent) == 0 {
		return
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		// Detached from the request: its response does not wait for this.
		dctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := p.DB.DeleteKeys(dctx, sent...); err != nil {
			p.log().Warn("publish: outbox delete left for the sweep", "err", err.Error())
		}
	}()
}

// Flush waits until the outbox deletes Publish started have finished.
func (p *Publisher) Flush() { p.wg.Wait() }

// Sweep republishes every outbox item older than Grace and deletes those it sent. It returns
// how many events it republished.
func (p *Publisher) Sweep(ctx context.Context) (_ int, err error) {
	defer derrors.Wrap(&err, "audit.Sweep")
	grace := p.Grace
	if grace == 0 {
		grace = DefaultGrace
	}
	before := store.OutboxBefore(time.Now().Add(-grace))
	var (
		mu    sync.Mutex
		total int
		first error
		wg    sync.WaitGroup
	)
	for shard := 0; shard < store.OutboxShards; shard++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n, err := p.sweepShard(ctx, store.OutboxPartition(shard), before)
			mu.Lock()
			total += n
			if err != nil && first == nil {
				first = err
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	return total, first
}

// sweepPage bounds one read of a shard, so a large backlog is republished in steps.
const sweepPage = 100

func (p *Publisher) sweepShard(ctx context.Context, partition, before string) (_ int, err error) {
	defer derrors.Wrap(&err, "shard %s", partition)
	total := 0
	for {
		items, err := p.DB.QueryBefore(ctx, partition, before, sweepPage)
		if err != nil {
			return total, err
		}
		msgs := make([]queue.Message, 0, len(items))
		for _, raw := range items {
			var it OutboxItem
			if err := store.Unmarshal(raw, &it); err != nil {
				return total, err
			}
			msgs = append(msgs, eventMessage(it.EventID, it.EventType, it.Payload))
		}
		failed, err := queue.SendAll(ctx, p.SQS, p.QueueURL, msgs)
		var sent []store.Key
		for _, m := range msgs {
			if _, bad := failed[m.ID]; !bad {
				sent = append(sent, store.OutboxKey(m.ID))
			}
		}
		if derr := p.DB.DeleteKeys(ctx, sent...); derr != nil && err == nil {
			err = derr
		}
		total += len(sent)
		if err != nil {
			return total, err
		}
		if len(failed) > 0 {
			return total, sendFailures(failed)
		}
		if len(items) < sweepPage {
			return total, nil
		}
	}
}

func eventMessage(id, eventType, payload string) queue.Message {
	return queue.Message{ID: id, Body: payload, Attrs: map[string]string{AttrKind: KindEvent, "event_type": eventType}}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// sendFailures is the error of a sweep page whose messages SQS refused one by one.
type sendFailures map[string]string

// Error implements error.
func (f sendFailures) Error() string {
	for id, why := range f {
		return "sqs refused " + id + ": " + why
	}
	return "sqs refused a message"
}

// SweepEvery sweeps the outbox every interval until ctx ends (the local server's stand-in for
// the scheduled function).
func (p *Publisher) SweepEvery(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			n, err := p.Sweep(ctx)
			if err != nil && ctx.Err() == nil {
				p.log().Warn("sweep failed", "err", err.Error())
			}
			if n > 0 {
				p.log().Info("outbox swept", "republished", n)
			}
		}
	}
}
