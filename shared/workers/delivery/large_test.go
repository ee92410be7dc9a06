package delivery_test

import (
	"context"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"tunnelapi/shared/platform/audit"
	"tunnelapi/shared/platform/queue"
	"tunnelapi/shared/workers/delivery"
)

// receiveRecorder notes the largest message body the worker receives.
type receiveRecorder struct {
	queue.API
	mu      sync.Mutex
	largest int
}

func (r *receiveRecorder) ReceiveMessage(ctx context.Context, in *sqs.ReceiveMessageInput, opts ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error) {
	out, err := r.API.ReceiveMessage(ctx, in, opts...)
	if err == nil {
		r.mu.Lock()
		for _, m := range out.Messages {
			if m.Body != nil {
				r.largest = max(r.largest, len(*m.Body))
			}
		}
		r.mu.Unlock()
	}
	return out, err
}

// An event too large for a queue message (an endpoint with a 255 KB traffic policy) crosses the
// queue as its reference and reaches the destination whole: its object equal to the GET body.
func TestLargeEventDeliveredWhole(t *testing.T) {
	rec := &receiveRecorder{}
	h := newHarness(t, func(w *delivery.Worker) { rec.API = w.SQS; w.SQS = rec })
	a := h.s.NewAccount(t)
	d := destination(t, a, h.kinesisCreds(t, "large"))
	subscribe(t, a, []string{"endpoint_created.v0"}, d)
	doc := "on_http_request:\n  - actions:\n      - type: custom-response\n        config:\n          content: '" +
		strings.Repeat("lorem ipsum ", 255<<10/12) + "'\n"
	ep := a.Do(t, "POST", "/endpoints", map[string]any{"url": "https://large.example.com", "traffic_policy": doc}).Expect(t, 201)
	eventually(t, 15*time.Second, "the event at the sink", func() bool { return len(h.st.Kinesis.Received()) > 0 })
	got := h.st.Kinesis.Received()
	if len(got) != 1 {
		t.Fatalf("%d records at the sink, want 1", len(got))
	}
	if len(got[0].Data) <= audit.MaxMessageBytes {
		t.Fatalf("the event is %d bytes; the test needs one larger than a queue message (%d)", len(got[0].Data), audit.MaxMessageBytes)
	}
	env := decode(t, got[0].Data)
	getBody := a.Do(t, "GET", "/endpoints/"+ep["id"].(string), nil).Expect(t, 200)
	if env["event_type"] != "endpoint_created.v0" || !reflect.DeepEqual(env["object"], any(getBody)) {
		t.Fatalf("delivered %.300v", env)
	}
	rec.mu.Lock()
	largest := rec.largest
	rec.mu.Unlock()
	if largest == 0 || largest > audit.MaxMessageBytes {
		t.Fatalf("the largest message the worker received is %d bytes, want at most %d", largest, audit.MaxMessageBytes)
	}
}
