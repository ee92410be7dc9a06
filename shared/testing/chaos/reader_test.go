package chaos

import (
	"context"
	"net/http"
	"os"
	"testing"
	"time"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

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
	ddb := faults.NewProxy(t, "dynamodb-stream", testkit.Endpoint(t))
	sqsProxy := faults.NewProxy(t, "sqs", os.Getenv("SQS_ENDPOINT"))
	cfg := testkit.Config(t, config.LoadHTTP).AWSConfig()
	cfg.HTTPClient = awshttp.NewBuildableClient().WithTransportOptions(func(tr *http.Transport) { tr.DisableKeepAlives = true })
	dyn := &faults.DynamoDB{}
	db, err := store.Open(context.Background(), store.Options{Table: s.DB.Table, Endpoint: ddb.URL, Config: &cfg,
		APIOptions: []func(*dynamodb.Options){dyn.Option}})
	if err != nil {
		t.Fatal(err)
	}
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
