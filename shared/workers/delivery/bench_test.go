package delivery_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"tunnelapi/shared/testing/benchkit"

	lambdaevents "github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/kinesis"
	kintypes "github.com/aws/aws-sdk-go-v2/service/kinesis/types"

	"tunnelapi/shared/platform/audit"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/queue"
	"tunnelapi/shared/workers/delivery"
)

// BenchmarkCommitToDelivery measures, one mutation at a time, how long an event takes from its
// commit to its arrival at a Kinesis stand-in: the table's stream (the local reader polls it
// every testkit.ReaderIdle), the events queue, fan-out, the delivery queue and the sink. The
// commit happens between sending the request and receiving its answer, so the time from the
// answer is a lower bound (commit→delivery ≥ answer→delivery) and from sending an upper one.
func BenchmarkCommitToDelivery(b *testing.B) {
	h := newHarness(b, nil)
	a := h.s.NewAccount(b)
	subscribe(b, a, []string{"api_key_created.v0"}, destination(b, a, h.kinesisCreds(b, "latency")))
	a.Do(b, "POST", "/api_keys", map[string]any{}).Expect(b, 201) // warm every cache on the path
	eventually(b, 10*time.Second, "the warm-up event", func() bool { return len(h.st.Kinesis.Received()) == 1 })
	var fromAnswer, fromRequest benchkit.Samples
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		a.Do(b, "POST", "/api_keys", map[string]any{}).Expect(b, 201)
		t1 := time.Now()
		eventually(b, 10*time.Second, "the event", func() bool { return len(h.st.Kinesis.Received()) == i+2 })
		at := h.st.Kinesis.Received()[i+1].At
		fromAnswer = append(fromAnswer, at.Sub(t1))
		fromRequest = append(fromRequest, at.Sub(t0))
	}
	b.StopTimer()
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(fromAnswer.Quantile(0.5)), "p50_ms")
	b.ReportMetric(ms(fromAnswer.Quantile(0.99)), "p99_ms")
	b.ReportMetric(ms(fromRequest.Quantile(0.5)), "p50_from_request_ms")
	b.ReportMetric(ms(fromRequest.Quantile(0.99)), "p99_from_request_ms")
}

// BenchmarkKinesisWorkerVsRaw compares the events per second one worker delivers to a Kinesis
// stand-in, in batches of 10 delivery messages handed to its Lambda handler (as the SQS trigger
// does), with the raw PutRecords rate of the same stand-in, 10 records per call, in the same
// run. worker/raw is the share of the sink's raw rate the worker reaches. queue_events/s is the
// rate through the SQS emulator with the local poller (receive, handle, delete), for reference.
// minBatches is the fewest batches each side of BenchmarkKinesisWorkerVsRaw sends.
const minBatches = 2000

func BenchmarkKinesisWorkerVsRaw(b *testing.B) {
	h := newHarness(b, nil)
	h.stop() // the handler is driven directly
	a := h.s.NewAccount(b)
	target := h.kinesisCreds(b, "throughput")
	d := destination(b, a, target)
	creds := target["kinesis"].(map[string]any)["auth"].(map[string]any)["creds"].(map[string]any)
	batch := func() lambdaevents.SQSEvent {
		var ev lambdaevents.SQSEvent
		for i := 0; i < 10; i++ {
			env := audit.Envelope{EventID: ids.New(ids.Event), EventType: "api_key_created.v0", EventTimestamp: time.Now().UTC().Format(time.RFC3339),
				AccountID: a.AccountID, Object: json.RawMessage(`{"id":"ak_x","uri":"https://api.example.com/api_keys/ak_x","description":"benchmark key","metadata":"","created_at":"2026-01-01T00:00:00Z","token":null,"owner_id":"usr_x"}`),
				Principal: audit.Principal{ID: a.UserID, Subject: "admin@test.local", Source: "API"}}
			raw, _ := json.Marshal(env)
			q := delivery.Message{EventID: env.EventID, EventType: env.EventType, AccountID: a.AccountID, DestinationID: d,
				DestinationVersion: 1, Attempt: 1, Event: raw}.Queued(strconv.Itoa(i), 0)
			m := lambdaevents.SQSMessage{MessageId: q.ID, Body: q.Body, MessageAttributes: map[string]lambdaevents.SQSMessageAttribute{}}
			for k, v := range q.Attrs {
				m.MessageAttributes[k] = lambdaevents.SQSMessageAttribute{StringValue: aws.String(v), DataType: "String"}
			}
			ev.Records = append(ev.Records, m)
		}
		return ev
	}
	// The raw client: the same SDK, credentials, endpoint and record sizes, nothing else.
	cfg, _ := config.LoadDefaultConfig(context.Background())
	cfg.Region = region
	cfg.Credentials = credentials.NewStaticCredentialsProvider(creds["aws_access_key_id"].(string), creds["aws_secret_access_key"].(string), "")
	cfg.RetryMaxAttempts = 1
	raw := kinesis.NewFromConfig(cfg, func(o *kinesis.Options) { o.BaseEndpoint = aws.String(h.st.Kinesis.URL) })
	stream := target["kinesis"].(map[string]any)["stream_arn"].(string)
	rawInput := func(ev lambdaevents.SQSEvent) *kinesis.PutRecordsInput {
		in := &kinesis.PutRecordsInput{StreamARN: aws.String(stream)}
		for _, m := range ev.Records {
			msg, _ := delivery.ParseMessage(m)
			in.Records = append(in.Records, kintypes.PutRecordsRequestEntry{Data: msg.Event, PartitionKey: aws.String(msg.EventID)})
		}
		return in
	}
	rawPut := func(in *kinesis.PutRecordsInput) {
		if _, err := raw.PutRecords(context.Background(), in); err != nil {
			b.Fatal(err)
		}
	}
	handle := func(ev lambdaevents.SQSEvent) {
		res, err := h.w.Handle(context.Background(), ev)
		if err != nil || len(res.BatchItemFailures) > 0 {
			b.Fatalf("handle: %v %v", err, res.BatchItemFailures)
		}
	}
	handle(batch()) // loads the destination and builds its client once
	rawPut(rawInput(batch()))
	// At least minBatches a side: a ratio of rates on a shared 2-core machine needs that many
	// samples to be stable from run to run, whatever -benchtime asks for.
	n := max(b.N, minBatches)
	// Each side's batch is made just before its call, outside the timing: in Lambda the SQS
	// event was just decoded when the handler gets it, and so was raw's input before its call.
	// Made all up front, both would be read from memory gone cold (tens of megabytes of them).
	var workerTime, rawTime time.Duration
	var workerBatches, rawBatches benchkit.Samples
	b.ResetTimer()
	// Interleave in short rounds, alternating which goes first (the first of a pair pays for
	// whatever the machine was doing before), so both see the same conditions.
	for round, start := 0, 0; start < n; round, start = round+1, start+20 {
		end := min(start+20, n)
		runWorker := func() { timeEach(end-start, batch, handle, &workerTime, &workerBatches) }
		runRaw := func() {
			timeEach(end-start, func() *kinesis.PutRecordsInput { return rawInput(batch()) }, rawPut, &rawTime, &rawBatches)
		}
		if round%2 == 0 {
			runWorker()
			runRaw()
		} else {
			runRaw()
			runWorker()
		}
	}
	b.StopTimer()
	events := float64(10 * n)
	workerRate, rawRate := events/workerTime.Seconds(), events/rawTime.Seconds()
	b.ReportMetric(workerRate, "worker_events/s")
	b.ReportMetric(rawRate, "raw_events/s")
	b.ReportMetric(workerRate/rawRate, "worker/raw-mean")
	// The goal's ratio is taken on the typical (median) batch: on this shared 2-core machine a
	// few stalled batches (GC, the JVM next door) otherwise decide the means.
	b.ReportMetric(float64(rawBatches.Quantile(0.5))/float64(workerBatches.Quantile(0.5)), "worker/raw-p50-ratio")
	queued := make([]lambdaevents.SQSEvent, 100)
	for i := range queued {
		queued[i] = batch()
	}
	b.ReportMetric(queueRate(b, h, queued), "queue_events/s")
}

// queueRate puts the batches' messages on the events queue and measures how fast one poller
// (receive 10, handle, delete) delivers them all.
func queueRate(b *testing.B, h *harness, batches []lambdaevents.SQSEvent) float64 {
	var msgs []queue.Message
	for _, ev := range batches {
		for _, m := range ev.Records {
			msg, _ := delivery.ParseMessage(m)
			msgs = append(msgs, msg.Queued(fmt.Sprint("m", len(msgs)%10), 0))
		}
	}
	for i := 0; i < len(msgs); i += 10 {
		if failed, err := queue.SendAll(context.Background(), h.s.Queues.Client, h.s.Queues.Events, msgs[i:min(i+10, len(msgs))]); err != nil || len(failed) > 0 {
			b.Fatalf("enqueue: %v %v", err, failed)
		}
	}
	before := len(h.st.Kinesis.Received())
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	t0 := time.Now()
	go func() { defer wg.Done(); h.w.Poll(ctx, 10) }()
	eventually(b, 60*time.Second, "the queued deliveries", func() bool { return len(h.st.Kinesis.Received()) >= before+len(msgs) })
	elapsed := time.Since(t0)
	cancel()
	wg.Wait()
	return float64(len(msgs)) / elapsed.Seconds()
}

// timeEach runs op n times, each on an item next made just before (untimed), adding each run's
// duration to total and to samples.
func timeEach[E any](n int, next func() E, op func(E), total *time.Duration, samples *benchkit.Samples) {
	for range n {
		it := next()
		t0 := time.Now()
		op(it)
		d := time.Since(t0)
		*total += d
		*samples = append(*samples, d)
	}
}
