package delivery_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"tunnelapi/shared/platform/audit"
	"tunnelapi/shared/platform/queue"
	"tunnelapi/shared/platform/store"
	"tunnelapi/shared/testing/standin"
	"tunnelapi/shared/testing/testkit"
	"tunnelapi/shared/workers/delivery"
)

// 1,000 mutations while publishing crashes at random after commit (before sending, or after
// sending but before deleting the outbox item) and the worker crashes at random after a batch
// (before reporting it): every event reaches the sink, none is invented, and a consumer that
// dedupes on the partition key (the event id) sees each exactly once.
func TestRandomCrashesLoseNothing(t *testing.T) {
	var mu sync.Mutex
	rng := rand.New(rand.NewPCG(5, uint64(time.Now().UnixNano())))
	roll := func(p float64) bool { mu.Lock(); defer mu.Unlock(); return rng.Float64() < p }
	var workerCrashes, sendCrashes, deleteCrashes atomic.Int64
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
	pub := h.s.Deps.Publisher
	pub.Flush()
	pub.Grace = 500 * time.Millisecond
	pub.Fault = func(step audit.Step) bool {
		if roll(0.1) {
			if step == audit.StepSend {
				sendCrashes.Add(1)
			} else {
				deleteCrashes.Add(1)
			}
			return true
		}
		return false
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go pub.SweepEvery(ctx, 300*time.Millisecond)

	const total = 1000
	var done atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for done.Add(1) <= total {
				id := a.Do(t, "POST", "/api_keys", map[string]any{"description": "crash test"}).Expect(t, 201)["id"].(string)
				if done.Add(1) > total {
					return
				}
				a.Do(t, "PATCH", "/api_keys/"+id, map[string]any{"metadata": "updated"}).Expect(t, 200)
				if done.Add(1) > total {
					return
				}
				a.Do(t, "DELETE", "/api_keys/"+id, nil).Expect(t, 204)
			}
		}()
	}
	wg.Wait()
	mutating := time.Since(start)
	// The account's audit log has every committed event: the ones that must arrive.
	logItems, err := h.s.DB.QueryAll(context.Background(), store.EventLogKey(a.AccountID, "").PK)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, raw := range logItems {
		var it audit.LogItem
		if err := store.Unmarshal(raw, &it); err != nil {
			t.Fatal(err)
		}
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
	pub.Fault = nil
	eventually(t, 10*time.Second, "an empty outbox", func() bool { return outboxCount(t, h.s.DB) == 0 })
	t.Logf("%d mutations in %v, all delivered after %v; crashes: %d before send, %d before outbox delete, %d worker batches; %d duplicates dropped by the deduping consumer",
		total, mutating.Round(time.Millisecond), converged.Round(time.Millisecond), sendCrashes.Load(), deleteCrashes.Load(), workerCrashes.Load(), dups)
}

// The local server killed between a commit and its publishing (FAULT_CRASH_AT=send makes the
// process exit there): after a restart its sweep delivers the event, once.
func TestLocalServerKilledBetweenCommitAndPublish(t *testing.T) {
	ddb := testkit.Endpoint(t)
	if os.Getenv("SQS_ENDPOINT") == "" {
		t.Skip("no SQS emulator")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "local")
	build := exec.Command("go", "build", "-o", bin, "./infra/local")
	build.Dir = "../../.."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	st := standin.Start()
	defer st.Close()
	ep := st.Endpoints()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := fmt.Sprint(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	name := fmt.Sprintf("crash-%d", time.Now().UnixNano())
	env := append(os.Environ(), "TABLE_NAME="+name, "QUEUE_PREFIX="+name, "PORT="+port, "STATE_DIR="+dir,
		"DYNAMODB_ENDPOINT="+ddb, "SWEEP_INTERVAL=300ms", "OUTBOX_GRACE=1s",
		"SINK_ENDPOINT_KINESIS="+ep.Kinesis, "SINK_ENDPOINT_STS="+ep.STS,
		// Its own queues, whatever the calling shell has exported.
		"EVENTS_QUEUE_URL=", "EVENTS_DLQ_URL=", "CERT_JOBS_QUEUE_URL=", "CERT_JOBS_DLQ_URL=")
	if os.Getenv("SEAL_KEY_FILE") == "" {
		env = append(env, "SEAL_KEY_FILE="+filepath.Join(dir, "seal.key"))
	}
	defer cleanupLocal(t, name)
	base := "http://127.0.0.1:" + port
	start := func(extra ...string) (*exec.Cmd, *bytes.Buffer) {
		var logs bytes.Buffer
		cmd := exec.Command(bin, "serve")
		cmd.Env = append(append([]string{}, env...), extra...)
		cmd.Stdout, cmd.Stderr = &logs, &logs
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		eventually(t, 30*time.Second, "the local server", func() bool {
			res, err := http.Get(base + "/api_keys")
			if err == nil {
				res.Body.Close()
			}
			return err == nil
		})
		return cmd, &logs
	}
	stop := func(cmd *exec.Cmd) {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	}
	srv, _ := start()
	tok, err := os.ReadFile(filepath.Join(dir, "admin.token"))
	if err != nil {
		t.Fatal(err)
	}
	token := strings.TrimSpace(string(tok))
	do := func(method, path string, body any) (*http.Response, []byte, error) {
		b, _ := json.Marshal(body)
		req, _ := http.NewRequest(method, base+path, bytes.NewReader(b))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, nil, err
		}
		defer res.Body.Close()
		rb, _ := io.ReadAll(res.Body)
		return res, rb, nil
	}
	mustDo := func(method, path string, body any, status int) map[string]any {
		res, b, err := do(method, path, body)
		if err != nil || res.StatusCode != status {
			t.Fatalf("%s %s: %v %v %s", method, path, err, res, b)
		}
		return decode(t, b)
	}
	h := &harness{st: st}
	d := mustDo("POST", "/event_destinations", map[string]any{"target": h.kinesisCreds(t, "killed")}, 201)["id"].(string)
	mustDo("POST", "/event_subscriptions", map[string]any{"sources": []any{map[string]any{"type": "api_key_created.v0"}},
		"destination_ids": []string{d}}, 201)
	stop(srv)

	crashing, logs := start("FAULT_CRASH_AT=send")
	if _, _, err := do("POST", "/api_keys", map[string]any{"description": "committed, then killed"}); err == nil {
		t.Fatal("the request survived the crash")
	}
	if err := crashing.Wait(); err == nil || !strings.Contains(logs.String(), "FAULT_CRASH_AT=send") {
		t.Fatalf("the server did not crash after the commit: %v\n%s", err, logs)
	}
	time.Sleep(500 * time.Millisecond)
	if n := len(st.Kinesis.Received()); n != 0 {
		t.Fatalf("%d records delivered although nothing was published", n)
	}

	restarted, _ := start()
	defer stop(restarted)
	eventually(t, 20*time.Second, "the event after the restart", func() bool { return len(st.Kinesis.Received()) > 0 })
	time.Sleep(time.Second)
	got := st.Kinesis.Received()
	if len(got) != 1 {
		t.Fatalf("%d records, want 1", len(got))
	}
	ev := decode(t, got[0].Data)
	if ev["event_type"] != "api_key_created.v0" || ev["object"].(map[string]any)["description"] != "committed, then killed" {
		t.Fatalf("delivered %v", ev)
	}
}

// cleanupLocal drops the table and queues a local server run created.
func cleanupLocal(t *testing.T, name string) {
	ctx := context.Background()
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return
	}
	db, err := store.Open(ctx, store.Options{Table: name, Config: &cfg})
	if err == nil {
		db.Client.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(name)})
	}
	c := queue.NewClient(cfg)
	for _, q := range []string{"-events", "-events-dlq", "-cert-jobs", "-cert-jobs-dlq"} {
		if u, err := c.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(name + q)}); err == nil {
			c.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: u.QueueUrl})
		}
	}
}
