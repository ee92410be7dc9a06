package chaos

import (
	"context"
	"net/http"
	"os"
	"testing"
	"time"

	"tunnelapi/shared/families/principals"
	"tunnelapi/shared/platform/config"
	"tunnelapi/shared/platform/queue"
	"tunnelapi/shared/platform/store"
	"tunnelapi/shared/platform/stream"
	"tunnelapi/shared/testing/faults"
	"tunnelapi/shared/testing/testkit"
)

// The stream reader survives every fault class on its way to DynamoDB (the stream, its
// checkpoints) and to SQS, one after another while mutations commit: once the network heals,
// every committed event has reached the queue, and none that was not committed. The reader
// delivers at least once; a sink that drops repeated event ids sees each event exactly once.
func TestStreamReaderSurvivesFaults(t *testing.T) {
	s := testkit.StartWithEvents(t, principals.APIKeysDescriptor)
	if s.Queues == nil {
		t.Skip("no SQS emulator")
	}
	s.StopReader()
	fs := faults.NewStore(t, "dynamodb-stream", testkit.Config(t, config.LoadHTTP).AWSConfig(), store.Options{Table: s.DB.Table})
	db, dyn, ddb, cfg := fs.Open(t), fs.DynamoDB, fs.Proxy, fs.Config
	sqsProxy := faults.NewProxy(t, "sqs", os.Getenv("SQS_ENDPOINT"))
	q := testkit.NewQueues(t, nil)
	r := &stream.Reader{DB: db, Streams: stream.NewClient(cfg, ddb.URL),
		SQS:      queue.NewClient(cfg, sqsProxy.URL),
		Consumer: stream.Events.To(q.Events), Log: testkit.Logger(), Idle: testkit.ReaderIdle}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	defer func() { cancel(); <-done }()

	a := s.NewAccount(t)
	for _, fc := range faults.Classes {
		fc.Harsh(0.3).Apply(t, dyn, ddb, sqsProxy)
		for i := 0; i < 10; i++ {
			a.Do(t, "POST", "/api_keys", map[string]any{"description": fc.Name}).Expect(t, http.StatusCreated)
		}
		time.Sleep(time.Second)
		faults.Heal(dyn, ddb, sqsProxy)
		select {
		case err := <-done:
			t.Fatalf("the reader stopped under %s: %v", fc.Name, err)
		default:
		}
	}
	want := map[string]bool{}
	for _, it := range s.Outbox(t) {
		want[it.EventID] = true
	}
	got := q.DrainEvents(t, q.Events, len(want), time.Minute, time.Second)
	dups := delivered(t, want, got)
	t.Logf("%d committed events under %d fault classes all arrived; %d repeated deliveries, dropped by a deduping sink; toxics %d+%d, DynamoDB failures %v", len(want), len(faults.Classes), dups, ddb.Added(), sqsProxy.Added(), dyn.Injected())
}
