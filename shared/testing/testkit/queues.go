package testkit

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"tunnelapi/shared/platform/awsconfig"
	"tunnelapi/shared/platform/config"
	"tunnelapi/shared/platform/queue"
)

// Queues is a fresh events queue and its dead-letter queue on the SQS emulator.
type Queues struct {
	Client      *sqs.Client
	Events, DLQ string
}

// QueueVisibility is the visibility timeout of test queues: short, so a message whose batch
// "crashed" comes back quickly.
const QueueVisibility = 2

var queueSeq atomic.Int64

// NewQueues creates an events queue with a dead-letter queue (SQS moves a message there after
// 10 receives) under names unique to this run, deleted when the test ends. calls, when given,
// counts the client's operations. It fails or skips like Endpoint when there is no emulator.
func NewQueues(t testing.TB, calls *Counter) *Queues {
	t.Helper()
	Require(t, "SQS_ENDPOINT")
	ctx := context.Background()
	cfg := Config(t, config.LoadHTTP)
	var opts []func(*sqs.Options)
	if calls != nil {
		opts = append(opts, func(o *sqs.Options) { o.APIOptions = append(o.APIOptions, calls.Add) })
	}
	c := queue.NewClient(awsconfig.New(cfg.AWS), cfg.SQSEndpoint, opts...)
	name := fmt.Sprintf("t%d-%d-%d", time.Now().UnixNano(), os.Getpid(), queueSeq.Add(1))
	url, dlq, err := queue.CreatePair(ctx, c, name, queue.PairOptions{VisibilityTimeout: QueueVisibility, MaxReceiveCount: 10})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, u := range []string{url, dlq} {
			c.DeleteQueue(context.Background(), &sqs.DeleteQueueInput{QueueUrl: aws.String(u)})
		}
	})
	return &Queues{Client: c, Events: url, DLQ: dlq}
}

// Drain receives every message currently visible on url (deleting them), waiting up to wait
// for the first.
func (q *Queues) Drain(t testing.TB, url string, wait time.Duration) []sqstypes.Message {
	t.Helper()
	var out []sqstypes.Message
	deadline := time.Now().Add(wait)
	for {
		res, err := q.Client.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{QueueUrl: aws.String(url),
			MaxNumberOfMessages: 10, MessageAttributeNames: []string{"All"}, WaitTimeSeconds: 1,
			MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameAll}})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range res.Messages {
			out = append(out, m)
			q.Client.DeleteMessage(context.Background(), &sqs.DeleteMessageInput{QueueUrl: aws.String(url), ReceiptHandle: m.ReceiptHandle})
		}
		if len(res.Messages) == 0 && (len(out) > 0 || time.Now().After(deadline)) {
			return out
		}
	}
}

// DrainEvents receives event envelopes from url (deleting them) until want distinct event ids
// have arrived, failing the test after timeout, then for linger more to catch late duplicates.
// It returns how many times each event id arrived.
func (q *Queues) DrainEvents(t testing.TB, url string, want int, timeout, linger time.Duration) map[string]int {
	t.Helper()
	got := map[string]int{}
	deadline := time.Now().Add(timeout)
	var until time.Time
	for {
		for _, m := range q.Drain(t, url, 200*time.Millisecond) {
			var env struct {
				EventID string `json:"event_id"`
			}
			if err := json.Unmarshal([]byte(aws.ToString(m.Body)), &env); err != nil || env.EventID == "" {
				t.Fatalf("a message that is not an event envelope: %q", aws.ToString(m.Body))
			}
			got[env.EventID]++
		}
		now := time.Now()
		if until.IsZero() && len(got) >= want {
			until = now.Add(linger)
		}
		if !until.IsZero() && now.After(until) {
			return got
		}
		if until.IsZero() && now.After(deadline) {
			t.Fatalf("%d distinct events after %v, want %d", len(got), timeout, want)
		}
	}
}
