package chaos

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"tunnelapi/shared/platform/queue"
	"tunnelapi/shared/platform/store"
	"tunnelapi/shared/testing/faults"
	"tunnelapi/shared/testing/testkit"
	"tunnelapi/shared/workers/delivery"
)

// The event worker survives every fault class on its way to DynamoDB and SQS, one after another
// while keys are created: once the network heals, a deduping sink (the Kinesis stand-in, keyed
// by event id) has every created key's event, none other, and nothing went to the dead-letter
// queue.
func TestEventWorkerSurvivesFaults(t *testing.T) {
	k := testkit.StartSinks(t)
	s, st := k.Stack, k.Stand
	c := k.Worker
	fs := faults.NewStore(t, "dynamodb-worker", c.AWSConfig(), store.Options{Table: s.DB.Table})
	db, dyn, ddb, cfg := fs.Open(t), fs.DynamoDB, fs.Proxy, fs.Config
	sqsProxy := faults.NewProxy(t, "sqs-worker", os.Getenv("SQS_ENDPOINT"))
	sqsClient := queue.NewClient(cfg, sqsProxy.URL)
	w := delivery.New(db, sqsClient, s.Deps.Kit.Seal, cfg, c)
	w.Log, w.Metrics, w.Backoff = testkit.Logger(), testkit.Metrics(), 500*time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); w.Poll(ctx, 10) }()
	defer func() { cancel(); wg.Wait() }()

	a := s.NewAccount(t)
	dest := a.Do(t, "POST", "/event_destinations", map[string]any{"target": k.KinesisTarget("chaos")}).Expect(t, 201)["id"].(string)
	a.Do(t, "POST", "/event_subscriptions", map[string]any{"sources": []any{map[string]any{"type": "api_key_created.v0"}},
		"destination_ids": []string{dest}}).Expect(t, 201)

	created := 0
	for _, fc := range faults.Classes {
		fc.Harsh(0.3).Apply(t, dyn, ddb, sqsProxy)
		for i := 0; i < 8; i++ {
			a.Do(t, "POST", "/api_keys", map[string]any{"description": fc.Name}).Expect(t, 201)
			created++
		}
		time.Sleep(2 * time.Second)
		faults.Heal(dyn, ddb, sqsProxy)
	}
	want := map[string]bool{}
	for _, it := range a.AuditLog(t) {
		if it.EventType == "api_key_created.v0" {
			want[it.EventID] = true
		}
	}
	if len(want) != created {
		t.Fatalf("%d created events in the audit log for %d creates", len(want), created)
	}
	received := func() map[string]int {
		got := map[string]int{}
		for _, r := range st.Kinesis.Received() {
			got[r.Key]++
		}
		return got
	}
	for deadline := time.Now().Add(time.Minute); len(received()) < len(want) && time.Now().Before(deadline); {
		time.Sleep(200 * time.Millisecond)
	}
	// A repeat may still be on its way.
	time.Sleep(time.Second)
	dups := delivered(t, want, received())
	if dead := s.Queues.Drain(t, s.Queues.DLQ, 200*time.Millisecond); len(dead) > 0 {
		t.Errorf("%d events went to the dead-letter queue", len(dead))
	}
	t.Logf("%d events under %d fault classes all reached the sink; %d repeated deliveries, dropped by its dedupe on event id; toxics %d+%d, DynamoDB failures %v", len(want), len(faults.Classes), dups, ddb.Added(), sqsProxy.Added(), dyn.Injected())
}
