package delivery_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"tunnelapi/shared/platform/config"
	"tunnelapi/shared/platform/queue"
	"tunnelapi/shared/platform/store"
	"tunnelapi/shared/platform/stream"
	"tunnelapi/shared/testing/standin"
	"tunnelapi/shared/testing/testkit"
	"tunnelapi/shared/workers/delivery"
)

// 1,000 mutations while everything after their commit fails at random: the server drops the
// connection instead of answering (as if killed between commit and response), the stream
// reader is killed in the middle of batches and started again from its checkpoint, and the
// worker crashes after batches (before reporting them). Every committed event reaches the
// sink, none is invented, and a consumer that dedupes on the partition key (the event id) sees
// each exactly once.
func TestRandomCrashesLoseNothing(t *testing.T) {
	var mu sync.Mutex
	rng := rand.New(rand.NewPCG(5, uint64(time.Now().UnixNano())))
	roll := func(p float64) bool { mu.Lock(); defer mu.Unlock(); return rng.Float64() < p }
	var workerCrashes, readerKills, dropped atomic.Int64
	h := newHarness(t, func(w *delivery.Worker) {
		w.Fault = func() bool {
			if roll(0.03) {
				workerCrashes.Add(1)
				return true
			}
			return false
		}
	})
	a := h.s.NewAccount(t)
	types := []string{"api_key_created.v0", "api_key_updated.v0", "api_key_deleted.v0"}
	subscribe(t, a, types, destination(t, a, h.kinesisCreds(t, "crashy")))
	h.s.AbortAfterCommit = func(*http.Request) bool {
		if roll(0.05) {
			dropped.Add(1)
			return true
		}
		return false
	}
	// The stack's reader is replaced by one that is killed at random and started again.
	h.s.StopReader()
	ctx, cancel := context.WithCancel(context.Background())
	var readers sync.WaitGroup
	readers.Add(1)
	go func() {
		defer readers.Done()
		for ctx.Err() == nil {
			r := h.s.NewReader(stream.Events.To(h.s.Queues.Events), func(r *stream.Reader) {
				r.Fault = func(int) bool { return roll(0.05) }
			})
			if errors.Is(r.Run(ctx), stream.ErrCrashed) {
				readerKills.Add(1)
			}
		}
	}()
	defer func() { cancel(); readers.Wait() }()

	const total = 1000
	var done atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for done.Add(1) <= total {
				// A dropped answer still committed; without the id, the next steps are skipped.
				res, err := mutate(a, "POST", "/api_keys", map[string]any{"description": "crash test"})
				if err != nil {
					continue
				}
				if res.StatusCode != http.StatusCreated {
					t.Errorf("POST: %d", res.StatusCode)
					return
				}
				id := res.Body["id"].(string)
				if done.Add(1) > total {
					return
				}
				if res, err := mutate(a, "PATCH", "/api_keys/"+id, map[string]any{"metadata": "updated"}); err == nil && res.StatusCode != http.StatusOK {
					t.Errorf("PATCH: %d", res.StatusCode)
					return
				}
				if done.Add(1) > total {
					return
				}
				if res, err := mutate(a, "DELETE", "/api_keys/"+id, nil); err == nil && res.StatusCode != http.StatusNoContent {
					t.Errorf("DELETE: %d", res.StatusCode)
					return
				}
			}
		}()
	}
	wg.Wait()
	mutating := time.Since(start)
	h.s.AbortAfterCommit = nil
	// The account's audit log has every committed event: the ones that must arrive.
	want := map[string]bool{}
	for _, it := range a.AuditLog(t) {
		if strings.HasPrefix(it.EventType, "api_key_") {
			want[it.EventID] = true
		}
	}
	if len(want) != total {
		t.Fatalf("%d api key events in the audit log, want %d", len(want), total)
	}
	eventually(t, 90*time.Second, "every event at the sink", func() bool { u, _ := h.st.Kinesis.Unique(); return len(u) >= total })
	converged := time.Since(start)
	time.Sleep(time.Second)
	got, dups := h.st.Kinesis.Unique()
	for id, r := range got {
		if !want[id] {
			t.Fatalf("the sink got an event that was never committed: %s", id)
		}
		if head := decode(t, r.Data); head["event_id"] != id {
			t.Fatalf("partition key %s carries event %v", id, head["event_id"])
		}
	}
	if len(got) != total {
		t.Fatalf("%d distinct events at the sink, want %d", len(got), total)
	}
	t.Logf("%d mutations in %v, all delivered after %v; %d answers dropped after commit, %d reader kills, %d worker crashes; %d duplicates dropped by the deduping consumer",
		total, mutating.Round(time.Millisecond), converged.Round(time.Millisecond), dropped.Load(), readerKills.Load(), workerCrashes.Load(), dups)
}

// decoded is a response whose connection was not dropped.
type decoded struct {
	StatusCode int
	Body       map[string]any
}

// mutate sends a request as a's admin, returning an error when the server dropped it.
func mutate(a *testkit.Account, method, path string, body any) (*decoded, error) {
	req, err := testkit.NewRequest(method, a.URL(path), a.Token, body)
	if err != nil {
		return nil, err
	}
	res, err := testkit.Send(req)
	if err != nil {
		return nil, err
	}
	out := &decoded{StatusCode: res.Status}
	json.Unmarshal(res.Body, &out.Body)
	return out, nil
}

// The local server killed right after a commit, before its response (FAULT_CRASH_AT=
// before-response makes the process exit there) and after it (after-response): once it runs
// again, each event reaches the sink exactly once, carried by the table's stream.
func TestLocalServerKilledAfterCommit(t *testing.T) {
	ddb := testkit.Endpoint(t)
	if os.Getenv("SQS_ENDPOINT") == "" {
		t.Skip("no SQS emulator")
	}
	st := standin.Start()
	defer st.Close()
	ep := st.Endpoints()
	l := testkit.BuildLocalServer(t, "../../..", fmt.Sprintf("crash-%d", time.Now().UnixNano()))
	l.Env = append(l.Env, "DYNAMODB_ENDPOINT="+ddb, "SINK_ENDPOINT_KINESIS="+ep.Kinesis, "SINK_ENDPOINT_STS="+ep.STS)
	if key := os.Getenv("SEAL_KEY_FILE"); key != "" {
		l.Env = append(l.Env, "SEAL_KEY_FILE="+key)
	}
	t.Cleanup(func() { cleanupLocal(t, l.Name) }) // after the processes' stops, registered later
	base := l.URL()
	srv := l.Start(t)
	token := l.Token(t)
	do := func(method, path string, body any) (*testkit.Response, error) {
		req, err := testkit.NewRequest(method, base+path, token, body)
		if err != nil {
			return nil, err
		}
		return testkit.Send(req)
	}
	mustDo := func(method, path string, body any, status int) map[string]any {
		res, err := do(method, path, body)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		return res.Expect(t, status)
	}
	h := &harness{st: st}
	d := mustDo("POST", "/event_destinations", map[string]any{"target": h.kinesisCreds(t, "killed")}, 201)["id"].(string)
	mustDo("POST", "/event_subscriptions", map[string]any{"sources": []any{map[string]any{"type": "api_key_created.v0"}},
		"destination_ids": []string{d}}, 201)
	srv.Stop(30 * time.Second)

	for i, at := range []string{"before-response", "after-response"} {
		crashing := l.Start(t, "FAULT_CRASH_AT="+at)
		res, err := do("POST", "/api_keys", map[string]any{"description": "committed, then killed " + at})
		// An answer cut short after its status line (res with err) still counts as an answer.
		switch {
		case at == "before-response" && res != nil:
			t.Fatalf("%s: the request got an answer: %d", at, res.Status)
		case at == "after-response" && (res == nil || res.Status != http.StatusCreated):
			t.Fatalf("%s: %v %v", at, err, res)
		}
		if err := crashing.Wait(); err == nil || !strings.Contains(crashing.Output(), "FAULT_CRASH_AT="+at) {
			t.Fatalf("the server did not crash after the commit: %v\n%s", err, crashing.Output())
		}
		restarted := l.Start(t)
		// A message the killed worker had received comes back after the events queue's
		// visibility timeout (30 s locally).
		deadline := time.Now().Add(60 * time.Second)
		for u, _ := st.Kinesis.Unique(); len(u) != i+1; u, _ = st.Kinesis.Unique() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: %d events at the sink after the restart, want %d\n%s", at, len(u), i+1, restarted.Output())
			}
			time.Sleep(20 * time.Millisecond)
		}
		restarted.Stop(30 * time.Second)
	}
	time.Sleep(time.Second)
	got, dups := st.Kinesis.Unique()
	descriptions := map[string]bool{}
	for _, r := range got {
		ev := decode(t, r.Data)
		if ev["event_type"] != "api_key_created.v0" {
			t.Fatalf("delivered %v", ev)
		}
		descriptions[ev["object"].(map[string]any)["description"].(string)] = true
	}
	if len(got) != 2 || !descriptions["committed, then killed before-response"] || !descriptions["committed, then killed after-response"] {
		t.Fatalf("the sink has %v", descriptions)
	}
	t.Logf("both events delivered; %d duplicates dropped by the deduping consumer", dups)
}

// cleanupLocal drops the table and queues a local server run created.
func cleanupLocal(t *testing.T, name string) {
	ctx := context.Background()
	c := testkit.Config(t, config.LoadHTTP)
	o := c.StoreOptions()
	o.Table = name
	db, err := store.Open(ctx, o)
	if err == nil {
		db.Client.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(name)})
	}
	sc := queue.NewClient(c.AWSConfig(), c.SQSEndpoint)
	for _, q := range []string{"-events", "-events-dlq", "-cert-jobs", "-cert-jobs-dlq"} {
		if u, err := sc.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(name + q)}); err == nil {
			sc.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: u.QueueUrl})
		}
	}
}
