package audit_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/audit"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/queue"
	"tunnelapi/shared/platform/store"
	"tunnelapi/shared/testing/fakedb"
)

func request() *api.Request {
	r := &api.Request{HTTP: httptest.NewRequest("POST", "https://api.test/widgets", nil)}
	r.SetCaller(&api.Caller{AccountID: "ac_1", PrincipalID: "usr_1", CredentialID: "ak_1", Subject: "someone@example.com"})
	return r
}

func TestType(t *testing.T) {
	if got := audit.Type("api_key", "created"); got != "api_key_created.v0" {
		t.Errorf("Type = %q", got)
	}
}

// TestRecord: a mutation's event is one outbox item and one audit-log item in its transaction,
// both carrying the envelope as delivered.
func TestRecord(t *testing.T) {
	ctx := context.Background()
	f := fakedb.New()
	db := store.New(f, "t")
	tx := &store.Tx{}
	object := map[string]string{"id": "w_1"}
	start := time.Now().UTC()
	env, err := audit.Record(tx, request(), "widget_created.v0", object)
	if err != nil {
		t.Fatal(err)
	}
	if tx.Len() != 2 {
		t.Fatalf("Record added %d writes, want 2", tx.Len())
	}
	if err := db.Commit(ctx, tx); err != nil {
		t.Fatal(err)
	}
	if !ids.Is(env.EventID, ids.Event) || env.EventType != "widget_created.v0" || env.AccountID != "ac_1" || string(env.Object) != `{"id":"w_1"}` {
		t.Errorf("envelope = %+v", env)
	}
	ts, err := time.Parse("2006-01-02T15:04:05Z", env.EventTimestamp)
	if err != nil || ts.Before(start.Truncate(time.Second)) || ts.After(time.Now().Add(time.Second)) {
		t.Errorf("event_timestamp = %q (%v)", env.EventTimestamp, err)
	}
	want := audit.Principal{ID: "usr_1", Subject: "someone@example.com", Source: "API",
		Credential: api.Ref{ID: "ak_1", URI: "https://api.test/api_keys/ak_1"}}
	if env.Principal != want {
		t.Errorf("principal = %+v, want %+v", env.Principal, want)
	}

	var ob audit.OutboxItem
	ok := store.OutboxKey(env.EventID)
	if err := store.Unmarshal(f.Item(ok.PK, ok.SK), &ob); err != nil {
		t.Fatal(err)
	}
	payload, _ := json.Marshal(env)
	if ob.EventID != env.EventID || ob.EventType != env.EventType || ob.AccountID != "ac_1" || ob.Payload != string(payload) || ob.Created < start.Unix() {
		t.Errorf("outbox item = %+v", ob)
	}
	// The payload's members are in the wire order.
	order := []string{`"event_id"`, `"event_type"`, `"event_timestamp"`, `"account_id"`, `"object"`, `"principal"`}
	last := -1
	for _, m := range order {
		i := strings.Index(ob.Payload, m)
		if i < last {
			t.Errorf("payload member %s out of order: %s", m, ob.Payload)
		}
		last = i
	}

	var lg audit.LogItem
	lk := store.EventLogKey("ac_1", env.EventID)
	if err := store.Unmarshal(f.Item(lk.PK, lk.SK), &lg); err != nil {
		t.Fatal(err)
	}
	if lg.Payload != ob.Payload || lg.EventType != env.EventType || lg.TTL < start.Add(audit.LogRetention).Unix()-1 {
		t.Errorf("log item = %+v", lg)
	}
}

func TestRecordErrors(t *testing.T) {
	if _, err := audit.Record(&store.Tx{}, &api.Request{HTTP: httptest.NewRequest("POST", "/", nil)}, "x_created.v0", 1); err == nil {
		t.Error("no caller: no error")
	}
	if _, err := audit.Record(&store.Tx{}, request(), "x_created.v0", make(chan int)); err == nil {
		t.Error("unmarshalable object: no error")
	}
}

// fakeSQS accepts every message except those whose id is in refuse.
type fakeSQS struct {
	queue.API
	mu     sync.Mutex
	sent   []string
	refuse map[string]bool
}

func (q *fakeSQS) SendMessageBatch(_ context.Context, in *sqs.SendMessageBatchInput, _ ...func(*sqs.Options)) (*sqs.SendMessageBatchOutput, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := &sqs.SendMessageBatchOutput{}
	for _, e := range in.Entries {
		id := aws.ToString(e.Id)
		if q.refuse[id] {
			out.Failed = append(out.Failed, sqstypes.BatchResultErrorEntry{Id: aws.String(id), Code: aws.String("Refused"), Message: aws.String("refused")})
			continue
		}
		if e.MessageAttributes[audit.AttrKind].StringValue == nil || *e.MessageAttributes[audit.AttrKind].StringValue != audit.KindEvent {
			continue
		}
		q.sent = append(q.sent, id)
	}
	return out, nil
}

// TestPublishAndSweep: Publish sends and then clears the outbox; what it left (a crash before
// sending) the sweep republishes once it is older than the grace period.
func TestPublishAndSweep(t *testing.T) {
	ctx := context.Background()
	f := fakedb.New()
	db := store.New(f, "t")
	q := &fakeSQS{}
	p := &audit.Publisher{DB: db, SQS: q, QueueURL: "q"}
	record := func() *audit.Envelope {
		tx := &store.Tx{}
		env, err := audit.Record(tx, request(), "widget_created.v0", map[string]string{})
		if err != nil {
			t.Fatal(err)
		}
		if err := db.Commit(ctx, tx); err != nil {
			t.Fatal(err)
		}
		return env
	}
	published := record()
	p.Publish(ctx, []*audit.Envelope{published})
	p.Flush()
	k := store.OutboxKey(published.EventID)
	if f.Item(k.PK, k.SK) != nil || len(q.sent) != 1 || q.sent[0] != published.EventID {
		t.Fatalf("after Publish: sent %v, outbox item left: %v", q.sent, f.Item(k.PK, k.SK) != nil)
	}

	left := record() // its publisher died before sending
	p.Grace = time.Hour
	if n, err := p.Sweep(ctx); err != nil || n != 0 {
		t.Errorf("sweep within the grace period: %d, %v", n, err)
	}
	p.Grace = -time.Minute // everything is old enough
	if n, err := p.Sweep(ctx); err != nil || n != 1 {
		t.Errorf("sweep: %d, %v", n, err)
	}
	k = store.OutboxKey(left.EventID)
	if f.Item(k.PK, k.SK) != nil || q.sent[len(q.sent)-1] != left.EventID {
		t.Errorf("after Sweep: sent %v", q.sent)
	}

	// A message SQS refuses stays in the outbox, and the sweep says so.
	refused := record()
	q.refuse = map[string]bool{refused.EventID: true}
	if _, err := p.Sweep(ctx); err == nil || !strings.Contains(err.Error(), refused.EventID) {
		t.Errorf("sweep with a refusal: %v", err)
	}
	k = store.OutboxKey(refused.EventID)
	if f.Item(k.PK, k.SK) == nil {
		t.Error("refused event left the outbox")
	}
	// A table that fails is reported with where it happened.
	for range store.OutboxShards {
		f.Fail(fakedb.OpQuery, fakedb.Throttled())
	}
	if _, err := p.Sweep(ctx); err == nil || !strings.Contains(err.Error(), "audit.Sweep") {
		t.Errorf("sweep with a throttled table: %v", err)
	}
}
