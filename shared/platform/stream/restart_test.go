package stream_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"tunnelapi/shared/families/principals"
	"tunnelapi/shared/platform/queue"
	"tunnelapi/shared/platform/stream"
	"tunnelapi/shared/testing/testkit"
)

// recording passes sends to SQS and keeps the event ids SQS accepted, in order.
type recording struct {
	queue.API
	mu  sync.Mutex
	ids []string
}

func (r *recording) SendMessageBatch(ctx context.Context, in *sqs.SendMessageBatchInput, opts ...func(*sqs.Options)) (*sqs.SendMessageBatchOutput, error) {
	out, err := r.API.SendMessageBatch(ctx, in, opts...)
	if err != nil {
		return out, err
	}
	ok := map[string]bool{}
	for _, s := range out.Successful {
		ok[*s.Id] = true
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range in.Entries {
		if ok[*e.Id] {
			var env struct {
				EventID string `json:"event_id"`
			}
			json.Unmarshal([]byte(*e.MessageBody), &env)
			r.ids = append(r.ids, env.EventID)
		}
	}
	return out, nil
}

// The reader killed in the middle of a batch (some of its messages sent, its checkpoint not
// written) and started again on DynamoDB Local's stream and the SQS emulator: every committed
// event arrives, and the only duplicates are the messages the killed batch had sent.
func TestReaderKilledMidBatchLosesNothing(t *testing.T) {
	s := testkit.StartWithEvents(t, principals.APIKeysDescriptor)
	if s.Queues == nil {
		t.Skip("no SQS emulator")
	}
	a := s.NewAccount(t)
	for i := 0; i < 150; i++ {
		a.Do(t, "POST", "/api_keys", map[string]any{"description": "stream"}).Expect(t, http.StatusCreated)
	}
	q := testkit.NewQueues(t, nil)
	c := stream.Events.To(q.Events)
	c.Name = "killed"
	rec := &recording{API: q.Client}
	atCrash := 0
	first := s.NewReader(c, func(r *stream.Reader) {
		r.SQS, r.Limit = rec, 100
		r.Fault = func(sent int) bool {
			if len(rec.ids) >= 45 {
				atCrash = sent
				return true
			}
			return false
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := first.Run(ctx); !errors.Is(err, stream.ErrCrashed) {
		t.Fatalf("the first reader ended with %v, want the injected crash", err)
	}
	if atCrash == 0 || atCrash == len(rec.ids) {
		t.Fatalf("crashed after %d of %d sent: not in the middle of a later batch", atCrash, len(rec.ids))
	}
	killed := map[string]bool{}
	for _, id := range rec.ids[len(rec.ids)-atCrash:] {
		killed[id] = true
	}

	defer s.RunReader(c, nil)()
	want := map[string]bool{}
	for _, it := range s.Outbox(t) {
		want[it.EventID] = true
	}
	got := q.DrainEvents(t, q.Events, len(want), 30*time.Second, time.Second)
	for id, n := range got {
		switch {
		case !want[id]:
			t.Errorf("%s arrived but was never committed", id)
		case killed[id] && n != 2:
			t.Errorf("%s, sent by the killed batch, arrived %d times, want 2", id, n)
		case !killed[id] && n != 1:
			t.Errorf("%s arrived %d times, want once", id, n)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d distinct events arrived, want %d", len(got), len(want))
	}
	t.Logf("%d events; the killed batch had sent %d (of %d sent before the kill), each resent once", len(want), atCrash, len(rec.ids))
}
