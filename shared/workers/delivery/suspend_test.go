package delivery_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"tunnelapi/shared/platform/auth"
	"tunnelapi/shared/workers/delivery"
	"tunnelapi/shared/workers/operator"
)

// A suspended account's events wait on the queue, undelivered, however often the worker looks
// at them (every PauseDelay, more often than the queue's redrive would allow one message);
// once the account is resumed they are delivered, once.
func TestSuspendedAccountsDeliveriesPause(t *testing.T) {
	h := newHarness(t, func(w *delivery.Worker) { w.PauseDelay = time.Second })
	h.stop() // the worker looks at the event only once the account is suspended
	a := h.s.NewAccount(t)
	subscribe(t, a, []string{"api_key_created.v0"}, destination(t, a, h.kinesisCreds(t, "paused")))
	a.Do(t, "POST", "/api_keys", map[string]any{"description": "made before the suspension"}).Expect(t, http.StatusCreated)
	op := &operator.Operator{DB: h.s.DB}
	if _, err := op.SetStatus(t.Context(), a.AccountID, auth.StatusSuspended); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); h.w.Poll(ctx, 10) }()
	t.Cleanup(func() { cancel(); <-done })

	// More pauses than the queue's maxReceiveCount (10): the event is not dead-lettered.
	time.Sleep(13 * time.Second)
	if got := h.st.Kinesis.Received(); len(got) != 0 {
		t.Fatalf("%d records delivered for a suspended account", len(got))
	}
	if _, err := op.SetStatus(t.Context(), a.AccountID, ""); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "the event after the resumption", func() bool { return len(h.st.Kinesis.Received()) > 0 })
	time.Sleep(1500 * time.Millisecond) // room for a duplicate to show up, if there were one
	if got := h.st.Kinesis.Received(); len(got) != 1 {
		t.Fatalf("%d records after the resumption, want 1", len(got))
	}
}
