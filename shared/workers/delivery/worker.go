// Package delivery is the event worker: it takes committed events off the events queue,
// matches each against its account's subscriptions, fans it out as one delivery message per
// destination, and delivers those in batches per destination to Kinesis, Firehose, CloudWatch
// Logs, Datadog or Azure Logs Ingestion. Delivery is at-least-once with the event id as the
// dedupe key; a failed delivery is retried with exponential backoff and jitter, and after
// MaxAttempts it goes to the dead-letter queue with the destination id and the last error.
// Each destination's deliveries are separate messages, so one failing destination never holds
// back another.
package delivery

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	lambdaevents "github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"tunnelapi/shared/families/eventsub"
	"tunnelapi/shared/platform/audit"
	"tunnelapi/shared/platform/auth"
	"tunnelapi/shared/platform/config"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/metrics"
	"tunnelapi/shared/platform/queue"
	"tunnelapi/shared/platform/seal"
	"tunnelapi/shared/platform/store"
)

// MaxBackoff is SQS's longest message delay.
const MaxBackoff = 15 * time.Minute

// Attributes of the messages the worker writes. A delivery's routing travels in attributes
// and its body is the envelope verbatim, so delivering needs no parsing of the body.
const (
	AttrDestination        = "destination_id"
	AttrDestinationVersion = "destination_version"
	AttrAccount            = "account_id"
	AttrEventID            = "event_id"
	AttrEventType          = "event_type"
	AttrAttempts           = "attempts"
	AttrLastError          = "last_error"
	AttrStage              = "stage"
	// AttrStored is set on a delivery whose body is an event's audit.Reference: the envelope
	// was too large for the queue and is read from where the reference says (audit.Load).
	AttrStored = "stored"
)

// Worker processes batches of the events queue.
type Worker struct {
	DB       *store.DB
	SQS      queue.API
	QueueURL string
	DLQURL   string
	Seal     seal.Sealer
	Log      *slog.Logger
	// Sinks deliver by target kind.
	Sinks map[string]Sink
	// MaxAttempts bounds the deliveries of one event to one destination (and the receives of
	// an event that cannot be fanned out) before it goes to the dead-letter queue.
	MaxAttempts int
	// Backoff is the base delay of the first retry; each further retry doubles it, and a
	// random part up to the same again spreads retries out.
	Backoff time.Duration
	// Fault, when set, is asked after a batch has been processed; true makes Handle fail the
	// whole batch as if the worker had crashed before reporting (fault injection in tests).
	Fault func() bool
	// Metrics receives the metrics.Delivery lines of the delivery attempts (one per batch,
	// destination and outcome, each attempt a sample); nil is standard output.
	Metrics *metrics.Emitter
	// PauseDelay is how long a suspended account's event waits before it is looked at again;
	// zero is DefaultPauseDelay.
	PauseDelay time.Duration

	mu    sync.Mutex
	dests map[destKey]*Destination
}

// New builds a worker of db's table configured by c (its queues, retry policy and sink
// endpoints) with every sink, taking events through q.
func New(db *store.DB, q queue.API, sealer seal.Sealer, base aws.Config, c config.EventWorker) *Worker {
	a := &AWS{Base: base, Endpoints: c.Sinks, Deployment: c.AccountID}
	sinks := awsSinks(a)
	for k, v := range httpSinks(&http.Client{Timeout: httpSinkTimeout}, c.Sinks) {
		sinks[k] = v
	}
	return &Worker{DB: db, SQS: q, QueueURL: c.QueueURL, DLQURL: c.DLQURL, Seal: sealer, Sinks: sinks,
		MaxAttempts: c.MaxAttempts, Backoff: c.Backoff}
}

// AWS returns the worker's AWS client builder (tests tune its expiry window).
func (w *Worker) AWS() *AWS {
	if s, ok := w.Sinks[eventsub.KindKinesis].(interface{ builder() *AWS }); ok {
		return s.builder()
	}
	return nil
}

func (w *Worker) log() *slog.Logger {
	if w.Log != nil {
		return w.Log
	}
	return slog.Default()
}

func kindOf(m lambdaevents.SQSMessage) string {
	if a, ok := m.MessageAttributes[audit.AttrKind]; ok && a.StringValue != nil {
		return *a.StringValue
	}
	return audit.KindEvent
}

// Handle is the Lambda handler of the SQS trigger (ReportBatchItemFailures): it returns the
// messages that must be received again; every other message is done (delivered, scheduled
// for a retry, or in the dead-letter queue).
func (w *Worker) Handle(ctx context.Context, ev lambdaevents.SQSEvent) (lambdaevents.SQSEventResponse, error) {
	// A batch is mostly of one kind, taken as it is; a mixed one is split.
	n := 0
	for _, m := range ev.Records {
		if kindOf(m) == audit.KindDelivery {
			n++
		}
	}
	var evs, dels []lambdaevents.SQSMessage
	switch n {
	case 0:
		evs = ev.Records
	case len(ev.Records):
		dels = ev.Records
	default:
		evs, dels = make([]lambdaevents.SQSMessage, 0, len(ev.Records)-n), make([]lambdaevents.SQSMessage, 0, n)
		for _, m := range ev.Records {
			if kindOf(m) == audit.KindDelivery {
				dels = append(dels, m)
			} else {
				evs = append(evs, m)
			}
		}
	}
	var failed []string
	switch {
	case len(dels) == 0:
		failed = w.fanOut(ctx, evs)
	case len(evs) == 0:
		failed = w.deliver(ctx, dels)
	default:
		// Both kinds in one batch: neither waits for the other.
		done := make(chan []string, 1)
		go func() { done <- w.fanOut(ctx, evs) }()
		failed = append(w.deliver(ctx, dels), <-done...)
	}
	if w.Fault != nil && w.Fault() {
		return lambdaevents.SQSEventResponse{}, errors.New("delivery: injected crash")
	}
	resp := lambdaevents.SQSEventResponse{BatchItemFailures: []lambdaevents.SQSBatchItemFailure{}}
	for _, id := range failed {
		resp.BatchItemFailures = append(resp.BatchItemFailures, lambdaevents.SQSBatchItemFailure{ItemIdentifier: id})
	}
	return resp, nil
}

// backoff is the delay before retry n (1-based): Backoff·2^(n-1) plus a random part of up to
// as much again, in whole seconds as SQS delays are, at most MaxBackoff.
func (w *Worker) backoff(n int) int32 {
	d := w.Backoff << min(n-1, 20)
	if d > MaxBackoff || d <= 0 {
		d = MaxBackoff
	}
	d += time.Duration(rand.Int64N(int64(d)))
	d = min(d, MaxBackoff)
	return int32(max(1, (d+time.Second-1)/time.Second))
}

// envelopeHead is the part of an envelope the worker routes by.
type envelopeHead struct {
	EventID   string `json:"event_id"`
	EventType string `json:"event_type"`
	AccountID string `json:"account_id"`
	// Stored is set when the message is the event's audit.Reference.
	Stored string `json:"stored"`
}

func parseEnvelope(body string) (envelopeHead, error) {
	var h envelopeHead
	if err := json.Unmarshal([]byte(body), &h); err != nil {
		return h, fmt.Errorf("unreadable event: %w", err)
	}
	if !ids.Is(h.EventID, ids.Event) || h.EventType == "" || !ids.Is(h.AccountID, ids.Account) {
		return h, errors.New("the event lacks event_id, event_type or account_id")
	}
	if h.Stored != "" && h.Stored != audit.StoredInLog {
		return h, fmt.Errorf("the event is stored in %q, which this worker cannot read", h.Stored)
	}
	return h, nil
}

// pendingEvent is an event message with its routing fields.
type pendingEvent struct {
	m lambdaevents.SQSMessage
	h envelopeHead
}

// fanOut matches committed events against their accounts' subscriptions and enqueues one
// delivery message per matching destination. It returns the events to receive again.
func (w *Worker) fanOut(ctx context.Context, msgs []lambdaevents.SQSMessage) []string {
	byAccount := map[string][]pendingEvent{}
	var failed []string
	for _, m := range msgs {
		h, err := parseEnvelope(m.Body)
		if err != nil {
			if !w.toDLQ(ctx, "fanout", queue.Message{ID: "dlq", Body: m.Body, Attrs: plainAttrs(m)}, m.MessageId, err) {
				failed = append(failed, m.MessageId)
			}
			continue
		}
		byAccount[h.AccountID] = append(byAccount[h.AccountID], pendingEvent{m, h})
	}
	return append(failed, concurrently(slices.Collect(maps.Values(byAccount)), func(ps []pendingEvent) []string {
		bad, err := w.fanOutAccount(ctx, ps[0].h.AccountID, ps)
		var failed []string
		if errors.Is(err, errPaused) {
			// A suspended account's events go back on the queue until it is resumed; a deleted
			// account's are dropped.
			for _, p := range ps {
				if !w.pause(ctx, p.m) {
					failed = append(failed, p.m.MessageId)
				}
			}
			return failed
		}
		if errors.Is(err, errGone) {
			return nil
		}
		for i, p := range ps {
			if err == nil && bad[i] == nil {
				continue
			}
			reason := err
			if reason == nil {
				reason = bad[i]
			}
			if !w.retryEvent(ctx, p.m, reason) {
				failed = append(failed, p.m.MessageId)
			}
		}
		return failed
	})...)
}

// fanOutAccount routes the events of one account: one consistent Query of the account's
// subscriptions (only their sources and destinations), one read of the matched destinations'
// versions, then the delivery messages. bad[i] is set for an event some of whose deliveries
// were not enqueued; err for a failure of the whole account.
func (w *Worker) fanOutAccount(ctx context.Context, account string, ps []pendingEvent) (bad []error, err error) {
	var acct auth.AccountItem
	switch err := w.DB.Get(ctx, store.AccountKey(account), &acct); {
	case store.IsNotFound(err) || err == nil && acct.Status == auth.StatusDeleting:
		return nil, errGone
	case err != nil:
		return nil, err
	case acct.Status == auth.StatusSuspended:
		return nil, errPaused
	}
	subs, err := w.DB.QueryAll(ctx, store.Collection(account, ids.EventSubscription), eventsub.AttrSources, eventsub.AttrDestinations)
	if err != nil {
		return nil, err
	}
	byType := map[string]map[string]bool{}
	for _, raw := range subs {
		var sub struct {
			Sources      []string `dynamodbav:"sources"`
			Destinations []string `dynamodbav:"dests"`
		}
		if err := store.Unmarshal(raw, &sub); err != nil {
			return nil, err
		}
		for _, t := range sub.Sources {
			if byType[t] == nil {
				byType[t] = map[string]bool{}
			}
			for _, d := range sub.Destinations {
				byType[t][d] = true
			}
		}
	}
	var keys []store.Key
	var destIDs []string
	seen := map[string]bool{}
	for _, p := range ps {
		for d := range byType[p.h.EventType] {
			if !seen[d] {
				seen[d] = true
				destIDs = append(destIDs, d)
				keys = append(keys, store.ResourceKey(account, d))
			}
		}
	}
	bad = make([]error, len(ps))
	if len(keys) == 0 {
		return bad, nil
	}
	versions := map[string]int64{}
	for start := 0; start < len(keys); start += 100 {
		items, err := w.DB.GetMany(ctx, keys[start:min(start+100, len(keys))]...)
		if err != nil {
			return nil, err
		}
		for i, it := range items {
			if it == nil {
				continue // deleted since the subscription was read: nothing to deliver to
			}
			var meta store.Meta
			if err := store.Unmarshal(it, &meta); err != nil {
				return nil, err
			}
			versions[destIDs[start+i]] = meta.Version
		}
	}
	var out []queue.Message
	owner := map[string]int{}
	for i, p := range ps {
		for d := range byType[p.h.EventType] {
			v, ok := versions[d]
			if !ok {
				continue
			}
			id := "d" + strconv.Itoa(len(out))
			owner[id] = i
			out = append(out, Message{EventID: p.h.EventID, EventType: p.h.EventType, AccountID: account, DestinationID: d,
				DestinationVersion: v, Attempt: 1, Event: []byte(p.m.Body), Stored: p.h.Stored != ""}.Queued(id, 0))
		}
	}
	failed, _ := queue.SendAll(ctx, w.SQS, w.QueueURL, out)
	for id, why := range failed {
		bad[owner[id]] = errors.New("enqueue delivery: " + why)
	}
	return bad, nil
}

// errPaused and errGone are a fan-out refused for a suspended account (its events wait) and for
// a deleted one (its events are dropped).
var (
	errPaused = errors.New("delivery: the account is suspended")
	errGone   = errors.New("delivery: the account is deleted")
)

// pause puts an event of a suspended account back on the queue as a new message delayed by
// its PauseDelay (at most SQS's MaxBackoff): it is looked at again then, and as its receive
// count starts over it never reaches the DLQ however long the suspension lasts. It reports
// whether the event was put back (false: the message itself returns after its visibility
// timeout).
func (w *Worker) pause(ctx context.Context, m lambdaevents.SQSMessage) bool {
	delay := min(w.pauseDelay(), MaxBackoff)
	failed, err := queue.SendAll(ctx, w.SQS, w.QueueURL, []queue.Message{{ID: "paused", Body: m.Body,
		Attrs: plainAttrs(m), Delay: int32(delay / time.Second)}})
	return err == nil && len(failed) == 0
}

// DefaultPauseDelay is how long a suspended account's event waits before it is looked at again.
const DefaultPauseDelay = MaxBackoff

func (w *Worker) pauseDelay() time.Duration {
	if w.PauseDelay > 0 {
		return w.PauseDelay
	}
	return DefaultPauseDelay
}

// retryEvent handles an event that could not be fanned out: before its last attempt it is
// left on the queue with a backoff delay (reported as failed); at the last it goes to the DLQ.
func (w *Worker) retryEvent(ctx context.Context, m lambdaevents.SQSMessage, reason error) (done bool) {
	n, _ := strconv.Atoi(m.Attributes["ApproximateReceiveCount"])
	if n >= w.MaxAttempts {
		return w.toDLQ(ctx, "fanout", queue.Message{ID: "dlq", Body: m.Body, Attrs: plainAttrs(m)}, m.MessageId, reason)
	}
	w.log().Warn("fan-out failed; will retry", "message", m.MessageId, "receives", n, "err", reason.Error())
	if m.ReceiptHandle != "" {
		// Best effort: without it the message returns after the visibility timeout instead.
		_, _ = w.SQS.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: aws.String(w.QueueURL),
			ReceiptHandle: aws.String(m.ReceiptHandle), VisibilityTimeout: w.backoff(max(n, 1))})
	}
	return false
}

// plainAttrs are a received message's string attributes.
func plainAttrs(m lambdaevents.SQSMessage) map[string]string {
	out := map[string]string{}
	for k, a := range m.MessageAttributes {
		if a.StringValue != nil {
			out[k] = *a.StringValue
		}
	}
	return out
}

// toDLQ sends out (the failed message, with its attributes) to the dead-letter queue with the
// stage and reason added as attributes. It reports whether the DLQ took it.
func (w *Worker) toDLQ(ctx context.Context, stage string, out queue.Message, messageID string, reason error) bool {
	if out.Attrs == nil {
		out.Attrs = map[string]string{}
	}
	if out.Attrs[audit.AttrKind] == "" {
		out.Attrs[audit.AttrKind] = audit.KindEvent
	}
	out.Attrs[AttrStage] = stage
	out.Attrs[AttrLastError] = truncate(reason.Error(), 1024)
	out.Delay = 0
	failed, err := queue.SendAll(ctx, w.SQS, w.DLQURL, []queue.Message{out})
	if err != nil || len(failed) > 0 {
		w.log().Error("dead-letter send failed", "message", messageID, "err", errString(err))
		return false
	}
	w.log().Warn("dead-lettered", "message", messageID, "stage", stage, "reason", reason.Error())
	return true
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
