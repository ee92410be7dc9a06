package delivery_test

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"tunnelapi/shared/platform/audit"
	"tunnelapi/shared/platform/queue"
	"tunnelapi/shared/rules/trafficpolicy/policytest"
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

// The campaign's cloud endpoints with an HTML page as their custom response (152 KiB and 250 KB,
// created and updated) are stored and their events reach the destination whole, each object
// equal to the GET body at that moment; the 250 KB ones are larger than a queue message and
// cross the queue as their reference (no message the worker receives is larger).
func TestLargeEventDeliveredWhole(t *testing.T) {
	rec := &receiveRecorder{}
	h := newHarness(t, func(w *delivery.Worker) { rec.API = w.SQS; w.SQS = rec })
	a := h.s.NewAccount(t)
	d := destination(t, a, h.kinesisCreds(t, "large"))
	subscribe(t, a, []string{"endpoint_created.v0", "endpoint_updated.v0"}, d)
	small, large := policytest.CustomResponse(policytest.HTMLPage(152<<10)), policytest.CustomResponse(policytest.HTMLPage(250_000))
	type step struct {
		method, path, policy, eventType string
	}
	var steps []*step
	parent, _ := a.ReserveWildcard(t)
	for i, policy := range []string{small, large} {
		ep := a.Do(t, "POST", "/endpoints", map[string]any{"url": fmt.Sprintf("https://html%d.%s", i, parent), "traffic_policy": policy}).
			Expect(t, http.StatusCreated)
		steps = append(steps, &step{method: "POST", path: "/endpoints/" + ep["id"].(string), policy: policy, eventType: "endpoint_created.v0"})
	}
	for i, policy := range []string{large, small} {
		path := steps[i].path
		a.Do(t, "PATCH", path, map[string]any{"traffic_policy": policy}).Expect(t, http.StatusOK)
		steps = append(steps, &step{method: "PATCH", path: path, policy: policy, eventType: "endpoint_updated.v0"})
	}
	eventually(t, 30*time.Second, "the events at the sink", func() bool { return len(h.st.Kinesis.Received()) >= len(steps) })
	got := h.st.Kinesis.Received()
	if len(got) != len(steps) {
		t.Fatalf("%d records at the sink, want %d", len(got), len(steps))
	}
	largeEvents := 0
	for _, st := range steps {
		found := false
		for _, r := range got {
			env := decode(t, r.Data)
			obj, _ := env["object"].(map[string]any)
			if env["event_type"] != st.eventType || obj == nil || "/endpoints/"+fmt.Sprint(obj["id"]) != st.path || obj["traffic_policy"] != st.policy {
				continue
			}
			found = true
			if len(r.Data) > audit.MaxMessageBytes {
				largeEvents++
			}
			if st.method == "PATCH" {
				// The endpoint as it is now: after its last step.
				get := a.Do(t, "GET", st.path, nil).Expect(t, http.StatusOK)
				if !reflect.DeepEqual(obj, map[string]any(get)) {
					t.Errorf("%s %s: delivered object differs from GET", st.method, st.path)
				}
			}
		}
		if !found {
			t.Errorf("%s %s (%d bytes of policy): no whole %s at the sink", st.method, st.path, len(st.policy), st.eventType)
		}
	}
	if largeEvents != 2 {
		t.Errorf("%d delivered events larger than a queue message (%d), want 2", largeEvents, audit.MaxMessageBytes)
	}
	rec.mu.Lock()
	largest := rec.largest
	rec.mu.Unlock()
	if largest == 0 || largest > audit.MaxMessageBytes {
		t.Fatalf("the largest message the worker received is %d bytes, want at most %d", largest, audit.MaxMessageBytes)
	}
}
