package cost_test

import (
	"context"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	lambdaevents "github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"tunnelapi/infra/cost"
	"tunnelapi/shared/families/domains"
	"tunnelapi/shared/families/tlscerts"
	"tunnelapi/shared/platform/config"
	"tunnelapi/shared/platform/seal"
	"tunnelapi/shared/platform/store"
	"tunnelapi/shared/testing/testkit"
	"tunnelapi/shared/workers/certs"
	"tunnelapi/shared/workers/delivery"
)

// countingSealer counts the sealer's calls: in AWS each Seal is one KMS GenerateDataKey and
// each Open one KMS Decrypt (package kmsseal keeps no data key).
type countingSealer struct {
	seal.Sealer
	calls atomic.Int64
}

func (c *countingSealer) Seal(ctx context.Context, p []byte, aad map[string]string) (seal.Sealed, error) {
	c.calls.Add(1)
	return c.Sealer.Seal(ctx, p, aad)
}

func (c *countingSealer) Open(ctx context.Context, s seal.Sealed, aad map[string]string) ([]byte, error) {
	c.calls.Add(1)
	return c.Sealer.Open(ctx, s, aad)
}

// workerRun is what a worker consumed over a run of jobs, driven as its SQS trigger drives it:
// receive a batch, hand it to the handler (one invocation, timed), delete what succeeded.
type workerRun struct {
	q           *sqs.Client
	url         string
	handle      func(context.Context, lambdaevents.SQSEvent) (lambdaevents.SQSEventResponse, error)
	invocations int
	busy        time.Duration
}

// drain handles every message visible on the queue in batches of up to batch, until done says
// the work is finished or timeout passes.
func (r *workerRun) drain(tb testing.TB, batch int32, timeout time.Duration, done func() bool) {
	tb.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(timeout)
	for !done() {
		if time.Now().After(deadline) {
			tb.Fatalf("the worker did not finish within %v", timeout)
		}
		out, err := r.q.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(r.url), MaxNumberOfMessages: batch,
			WaitTimeSeconds: 1, MessageAttributeNames: []string{"All"}, MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{"All"}})
		if err != nil {
			tb.Fatal(err)
		}
		if len(out.Messages) == 0 {
			continue
		}
		ev := lambdaevents.SQSEvent{}
		for _, m := range out.Messages {
			ev.Records = append(ev.Records, toLambda(m))
		}
		start := time.Now()
		res, err := r.handle(ctx, ev)
		r.busy += time.Since(start)
		r.invocations++
		if err != nil {
			tb.Fatal(err)
		}
		failed := map[string]bool{}
		for _, f := range res.BatchItemFailures {
			failed[f.ItemIdentifier] = true
		}
		var del []sqstypes.DeleteMessageBatchRequestEntry
		for _, m := range out.Messages {
			if !failed[aws.ToString(m.MessageId)] {
				del = append(del, sqstypes.DeleteMessageBatchRequestEntry{Id: m.MessageId, ReceiptHandle: m.ReceiptHandle})
			}
		}
		if len(del) > 0 {
			if _, err := r.q.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: aws.String(r.url), Entries: del}); err != nil {
				tb.Fatal(err)
			}
		}
	}
}

// deliveredEvent measures an audit event's way from the table's stream to a Kinesis sink: the
// Pipe's send to the events queue (the local stream reader makes it), the event worker's
// fan-out invocation, its delivery invocation, and their queue and table calls, per event, in
// batches of 10 as the template's trigger takes them. The mutation that made the event is a
// row of its own.
func deliveredEvent(b *testing.B, events int) cost.Usage {
	k := testkit.StartSinks(b)
	s, st := k.Stack, k.Stand
	m := &meter{Client: s.DB.Client}
	db := &store.DB{Client: m, Table: s.DB.Table}
	sealer := &countingSealer{Sealer: s.Deps.Kit.Seal}
	w := delivery.New(db, s.Queues.Client, sealer, k.Worker.AWSConfig(), k.Worker)
	w.Log, w.Metrics = testkit.Logger(), testkit.Metrics()
	a := s.NewAccount(b)
	target := k.KinesisTarget("cost")
	dest := a.Do(b, "POST", "/event_destinations", map[string]any{"target": target}).Expect(b, http.StatusCreated)["id"].(string)
	a.Do(b, "POST", "/event_subscriptions", map[string]any{"sources": []any{map[string]any{"type": "api_key_created.v0"}},
		"destination_ids": []string{dest}}).Expect(b, http.StatusCreated)
	run := &workerRun{q: s.Queues.Client, url: s.Queues.Events, handle: w.Handle}
	delivered := func(n int) func() bool { return func() bool { return len(st.Kinesis.Received()) >= n } }
	// A warm worker: the destination loaded and its client built, as in a running container.
	a.Do(b, "POST", "/api_keys", map[string]any{}).Expect(b, http.StatusCreated)
	run.drain(b, 10, time.Minute, delivered(1))
	for range events {
		a.Do(b, "POST", "/api_keys", map[string]any{}).Expect(b, http.StatusCreated)
	}
	// Every event on the queue before the first receive, so batches are as full as the
	// trigger's would be under load.
	waitQueued(b, s.Queues.Client, s.Queues.Events, events)
	m.take()
	sealer.calls.Store(0)
	sqsBefore := s.SQSCalls.Detached()
	*run = workerRun{q: s.Queues.Client, url: s.Queues.Events, handle: w.Handle}
	run.drain(b, 10, time.Minute, delivered(1+events))
	read, write, _ := m.take()
	n := float64(events)
	// The Pipe's sends to the queue were made before sqsBefore; the Pipe makes one per record.
	sqsCalls := float64(s.SQSCalls.Detached()-sqsBefore) + n
	return cost.Usage{Kind: "event delivered (kinesis)", Invocations: float64(run.invocations) / n,
		Lambda: run.busy / time.Duration(run.invocations), MemoryMB: functionMemoryMB(b, "EventWorkerFunction"),
		ReadUnits: read / n, WriteUnits: write / n, SQS: sqsCalls / n, Pipes: 1, KMS: float64(sealer.calls.Load()) / n}
}

// issuedCertificate measures a managed certificate's issue from its job: the Pipe's send to the
// certificate jobs queue, the certificate worker's invocations (an ACME order against the local
// pebble with a DNS-01 challenge in its challtestsrv, the key sealed, the certificate stored),
// and their queue and table calls, per certificate.
func issuedCertificate(b *testing.B, certificates int) cost.Usage {
	testkit.Require(b, "ACME_DIRECTORY", "CHALLTESTSRV_URL")
	s := testkit.StartWithEvents(b, domains.ReservedDomainsDescriptor, domains.AgentIngressesDescriptor, tlscerts.TLSCertificatesDescriptor)
	s.StopReader() // only the jobs Pipe's reader below sends, so its sends are the ones counted
	q := testkit.NewQueues(b, nil)
	b.Cleanup(s.RunReader(certs.JobsConsumer.To(q.Events), nil))
	c, err := config.LoadCertWorker(config.Env)
	if err != nil {
		b.Fatal(err)
	}
	c.QueueURL = q.Events
	m := &meter{Client: s.DB.Client}
	sealer := &countingSealer{Sealer: s.Deps.Kit.Seal}
	w, err := certs.New(&store.DB{Client: m, Table: s.DB.Table}, s.Queues.Client, sealer, c, testkit.Logger())
	if err != nil {
		b.Fatal(err)
	}
	w.Backoff, w.MaxBackoff = time.Second, 2*time.Second
	w.Metrics = testkit.Metrics()
	a := s.NewAccount(b)
	create := func() string {
		return a.Do(b, "POST", "/agent_ingresses", map[string]any{"domain": testkit.UniqueName("cost", "example.com"),
			"certificate_management_policy": map[string]any{"private_key_type": "ecdsa"}}).Expect(b, http.StatusCreated)["id"].(string)
	}
	issuedAll := func(ingresses []string) func() bool {
		return func() bool {
			for _, id := range ingresses {
				body := a.Do(b, "GET", "/agent_ingresses/"+id, nil).Expect(b, http.StatusOK)
				st, _ := body["certificate_management_status"].(map[string]any)
				if st == nil || st["provisioning_job"] != nil || st["renews_at"] == nil {
					return false
				}
			}
			return true
		}
	}
	run := &workerRun{q: s.Queues.Client, url: q.Events, handle: w.Handle}
	run.drain(b, 5, 2*time.Minute, issuedAll([]string{create()})) // the ACME account registered once, as a warm container has it
	var ingresses []string
	for range certificates {
		ingresses = append(ingresses, create())
	}
	waitQueued(b, s.Queues.Client, q.Events, certificates)
	m.take()
	sealer.calls.Store(0)
	sqsBefore := s.SQSCalls.Detached()
	*run = workerRun{q: s.Queues.Client, url: q.Events, handle: w.Handle}
	run.drain(b, 5, 2*time.Minute, issuedAll(ingresses))
	read, write, _ := m.take()
	n := float64(certificates)
	sqsCalls := float64(s.SQSCalls.Detached()-sqsBefore) + n
	return cost.Usage{Kind: "certificate issued (ACME)", Invocations: float64(run.invocations) / n,
		Lambda: run.busy / time.Duration(run.invocations), MemoryMB: functionMemoryMB(b, "CertWorkerFunction"),
		ReadUnits: read / n, WriteUnits: write / n, SQS: sqsCalls / n, Pipes: 1, KMS: float64(sealer.calls.Load()) / n}
}

// toLambda is m as the SQS trigger hands it to a function.
func toLambda(m sqstypes.Message) lambdaevents.SQSMessage {
	out := lambdaevents.SQSMessage{MessageId: aws.ToString(m.MessageId), ReceiptHandle: aws.ToString(m.ReceiptHandle),
		Body: aws.ToString(m.Body), Attributes: m.Attributes, MessageAttributes: map[string]lambdaevents.SQSMessageAttribute{}}
	for k, v := range m.MessageAttributes {
		out.MessageAttributes[k] = lambdaevents.SQSMessageAttribute{StringValue: v.StringValue, DataType: aws.ToString(v.DataType)}
	}
	return out
}

// waitQueued waits until the queue holds at least n visible messages.
func waitQueued(tb testing.TB, q *sqs.Client, url string, n int) {
	tb.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		out, err := q.GetQueueAttributes(context.Background(), &sqs.GetQueueAttributesInput{QueueUrl: aws.String(url),
			AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameApproximateNumberOfMessages}})
		if err != nil {
			tb.Fatal(err)
		}
		if got, _ := strconv.Atoi(out.Attributes[string(sqstypes.QueueAttributeNameApproximateNumberOfMessages)]); got >= n {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("%d messages did not reach the queue within a minute", n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
