package delivery_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	lambdaevents "github.com/aws/aws-lambda-go/events"

	"tunnelapi/shared/app"
	"tunnelapi/shared/platform/audit"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/metrics"
	"tunnelapi/shared/testing/standin"
	"tunnelapi/shared/testing/testkit"
	"tunnelapi/shared/workers/delivery"
)

var timestampRE = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$`)

func decode(t testing.TB, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("not a JSON object: %v: %s", err, b)
	}
	return m
}

// A key created under a subscription for api_key_created.v0 reaches the sink exactly once, in
// WIRE.md's envelope, its object equal to the key's GET body.
func TestKeyCreatedDeliveredOnce(t *testing.T) {
	h := newHarness(t, nil)
	a := h.s.NewAccount(t)
	d := destination(t, a, h.kinesisCreds(t, "audit"))
	subscribe(t, a, []string{"api_key_created.v0"}, d)
	key := a.Do(t, "POST", "/api_keys", map[string]any{"description": "delivered", "metadata": `{"n":1}`}).Expect(t, 201)
	eventually(t, 10*time.Second, "the event at the sink", func() bool { return len(h.st.Kinesis.Received()) > 0 })
	time.Sleep(1500 * time.Millisecond) // room for a duplicate to show up, if there were one
	got := h.st.Kinesis.Received()
	if len(got) != 1 {
		t.Fatalf("%d records at the sink, want exactly 1", len(got))
	}
	env := decode(t, got[0].Data)
	id, _ := env["event_id"].(string)
	if !ids.Is(id, ids.Event) || got[0].Key != id {
		t.Fatalf("event_id %v, partition key %s", env["event_id"], got[0].Key)
	}
	if env["event_type"] != "api_key_created.v0" || env["account_id"] != a.AccountID || !timestampRE.MatchString(fmt.Sprint(env["event_timestamp"])) {
		t.Fatalf("envelope %v", env)
	}
	wantPrincipal := map[string]any{"id": a.UserID, "subject": "admin@test.local", "source": "API",
		"credential": map[string]any{"id": a.APIKeyID, "uri": h.s.Server.URL + "/api_keys/" + a.APIKeyID}}
	if !reflect.DeepEqual(env["principal"], wantPrincipal) {
		t.Fatalf("principal %v, want %v", env["principal"], wantPrincipal)
	}
	getBody := a.Do(t, "GET", "/api_keys/"+key["id"].(string), nil).Expect(t, 200)
	if !reflect.DeepEqual(env["object"], any(getBody)) {
		t.Fatalf("object %v\nGET    %v", env["object"], getBody)
	}
	if len(env) != 6 {
		t.Fatalf("envelope has fields %v", env)
	}
	if h.st.Kinesis.Rejects.Load() != 0 {
		t.Fatalf("the stand-in refused a request: %v", h.st.Kinesis.LastReject.Load())
	}
}

// Every target kind receives well-formed batches, authenticated as each service requires;
// role targets assume their role once for the cache period, Azure fetches one token.
func TestEveryTargetKind(t *testing.T) {
	h := newHarness(t, nil)
	a := h.s.NewAccount(t)
	ddTarget, ddKey := h.datadog("ngrok-audit")
	azTarget, azClient := h.azure("NgrokEvents")
	kc := h.kinesisCreds(t, "creds-stream")
	akid := kc["kinesis"].(map[string]any)["auth"].(map[string]any)["creds"].(map[string]any)["aws_access_key_id"]
	dests := []string{
		destination(t, a, kc), destination(t, a, h.kinesisRole("role-stream")), destination(t, a, h.firehoseRole("fh")),
		destination(t, a, h.cloudwatchCreds("/ngrok/events")), destination(t, a, ddTarget), destination(t, a, azTarget),
	}
	subscribe(t, a, []string{"api_key_created.v0", "api_key_updated.v0"}, dests...)
	var keys []string
	for i := 0; i < 3; i++ {
		keys = append(keys, a.Do(t, "POST", "/api_keys", map[string]any{"description": fmt.Sprint("k", i)}).Expect(t, 201)["id"].(string))
	}
	a.Do(t, "PATCH", "/api_keys/"+keys[0], map[string]any{"description": "renamed"}).Expect(t, 200)
	a.Do(t, "POST", "/credentials", map[string]any{}).Expect(t, 201) // not subscribed
	sinks := map[string]*standin.Sink{"kinesis": h.st.Kinesis, "firehose": h.st.Firehose, "cloudwatch_logs": h.st.Logs,
		"datadog": h.st.Datadog, "azure": h.st.Azure.Sink}
	for name, sink := range sinks {
		eventually(t, 15*time.Second, name+" deliveries", func() bool { u, _ := sink.Unique(); return len(u) >= 4 })
	}
	eventually(t, 15*time.Second, "both kinesis streams", func() bool { return len(h.st.Kinesis.Received()) >= 8 })
	for name, sink := range sinks {
		if n := sink.Rejects.Load(); n != 0 {
			t.Errorf("%s refused %d requests: %v", name, n, sink.LastReject.Load())
		}
		for _, r := range sink.Received() {
			typ := decode(t, eventData(t, name, r.Data))["event_type"]
			if typ != "api_key_created.v0" && typ != "api_key_updated.v0" {
				t.Errorf("%s received %v", name, typ)
			}
		}
	}
	// Who signed or authenticated each record.
	byStream := map[string][]standin.Received{}
	for _, r := range h.st.Kinesis.Received() {
		byStream[r.Target] = append(byStream[r.Target], r)
	}
	for stream, rs := range byStream {
		for _, r := range rs {
			if strings.HasSuffix(stream, "creds-stream") && r.Auth != akid {
				t.Errorf("creds stream signed by %s", r.Auth)
			}
			if strings.HasSuffix(stream, "role-stream") && !strings.HasPrefix(r.Auth, "ASIA") {
				t.Errorf("role stream signed by %s, not assumed-role credentials", r.Auth)
			}
		}
		if len(rs) != 4 {
			t.Errorf("stream %s got %d records, want 4", stream, len(rs))
		}
	}
	for _, r := range h.st.Firehose.Received() {
		if r.Target != "fh" || !strings.HasPrefix(r.Auth, "ASIA") || !strings.HasSuffix(string(r.Data), "}\n") {
			t.Errorf("firehose record %+v", r)
		}
	}
	for _, r := range h.st.Logs.Received() {
		if r.Target != "/ngrok/events" {
			t.Errorf("log group %s", r.Target)
		}
	}
	for _, r := range h.st.Datadog.Received() {
		if r.Auth != ddKey || r.Target != "ngrok-audit" {
			t.Errorf("datadog record %+v", r)
		}
	}
	for _, r := range h.st.Azure.Received() {
		row := decode(t, r.Data)
		if r.Auth != azClient || r.Target != "Custom-NgrokEvents" || row["object"] == nil || row["account_id"] != a.AccountID {
			t.Errorf("azure row %+v", row)
		}
	}
	// Both role targets share one assumed role for the cache period.
	assumed := h.st.STS.Assumed()
	if len(assumed) != 1 || assumed[0].Get("RoleArn") != testRole || assumed[0].Get("ExternalId") != a.AccountID {
		t.Fatalf("AssumeRole calls %v, want one for %s with external id %s", assumed, testRole, a.AccountID)
	}
	if n := h.st.Azure.TokenCalls.Load(); n != 1 {
		t.Fatalf("%d Azure token requests, want 1 (cached)", n)
	}
}

// eventData extracts the envelope from what a sink stored.
func eventData(t testing.TB, sink string, b []byte) []byte {
	if sink != "azure" {
		return b
	}
	row := decode(t, b)
	env, _ := json.Marshal(map[string]any{"event_id": row["event_id"], "event_type": row["event_type"]})
	return env
}

// Assumed-role credentials are reused until they near expiry, then renewed: one STS call per
// cache period.
func TestRoleCredentialsCachedPerPeriod(t *testing.T) {
	h := newHarness(t, func(w *delivery.Worker) { w.AWS().ExpiryWindow = 2 * time.Second })
	h.st.STS.TTL.Store(int64(6 * time.Second)) // renewed 4 s after issue
	a := h.s.NewAccount(t)
	subscribe(t, a, []string{"api_key_created.v0"}, destination(t, a, h.kinesisRole("cached")))
	deliver := func(n int) {
		a.Do(t, "POST", "/api_keys", map[string]any{}).Expect(t, 201)
		eventually(t, 10*time.Second, fmt.Sprint(n, " records"), func() bool { return len(h.st.Kinesis.Received()) >= n })
	}
	deliver(1)
	first := time.Now()
	deliver(2)
	deliver(3)
	if n := len(h.st.STS.Assumed()); n != 1 {
		t.Fatalf("%d AssumeRole calls within one period, want 1", n)
	}
	time.Sleep(time.Until(first.Add(4500 * time.Millisecond)))
	deliver(4)
	deliver(5)
	if n := len(h.st.STS.Assumed()); n != 2 {
		t.Fatalf("%d AssumeRole calls across two periods, want 2", n)
	}
}

// A sink that fails is retried with growing delays, then the delivery lands in the DLQ with the
// destination id and the error; another destination of the same event is delivered at once.
func TestFailingSinkRetriesThenDeadLetters(t *testing.T) {
	var emitted metrics.Buffer
	h := newHarness(t, func(w *delivery.Worker) { w.Metrics = &metrics.Emitter{W: &emitted} })
	h.st.Datadog.Fail(http.StatusInternalServerError)
	a := h.s.NewAccount(t)
	ddTarget, _ := h.datadog("failing")
	bad := destination(t, a, ddTarget)
	good := destination(t, a, h.kinesisCreds(t, "healthy"))
	subscribe(t, a, []string{"api_key_created.v0"}, bad, good)
	start := time.Now()
	a.Do(t, "POST", "/api_keys", map[string]any{}).Expect(t, 201)
	eventually(t, 3*time.Second, "the healthy destination", func() bool { return len(h.st.Kinesis.Received()) == 1 })
	healthyAfter := time.Since(start)
	dlq := h.s.Queues.Drain(t, h.s.Queues.DLQ, 20*time.Second)
	calls := h.st.Datadog.Calls()
	if len(dlq) != 1 {
		t.Fatalf("%d DLQ messages, want 1", len(dlq))
	}
	m := dlq[0]
	attr := func(k string) string {
		if v, ok := m.MessageAttributes[k]; ok && v.StringValue != nil {
			return *v.StringValue
		}
		return ""
	}
	if attr(delivery.AttrDestination) != bad || !strings.Contains(attr(delivery.AttrLastError), "HTTP 500") || attr(delivery.AttrAttempts) != "3" {
		t.Fatalf("DLQ attributes: destination %q, error %q, attempts %q", attr(delivery.AttrDestination), attr(delivery.AttrLastError), attr(delivery.AttrAttempts))
	}
	if ev := decode(t, []byte(*m.Body)); ev["event_type"] != "api_key_created.v0" || ev["event_id"] != attr(delivery.AttrEventID) {
		t.Fatalf("DLQ body %s is not the event", *m.Body)
	}
	if len(calls) != 3 {
		t.Fatalf("%d attempts at the failing sink, want 3", len(calls))
	}
	// Backoff: the first retry waits at least the base (1 s), the second at least twice it.
	gap1, gap2 := calls[1].Sub(calls[0]), calls[2].Sub(calls[1])
	if gap1 < 900*time.Millisecond || gap2 < 1900*time.Millisecond {
		t.Fatalf("retry gaps %v, %v: want at least 1 s then 2 s", gap1, gap2)
	}
	if healthyAfter > 2*time.Second || len(h.st.Kinesis.Received()) != 1 {
		t.Fatalf("the healthy destination got %d records after %v", len(h.st.Kinesis.Received()), healthyAfter)
	}
	t.Logf("healthy delivery after %v; failing sink attempts at +0, +%v, +%v", healthyAfter, gap1, gap1+gap2)
	// Each attempt is counted in a metric line: the healthy sink's delivery, the failing one's
	// two retries and its dead-lettering, each with its latency from the commit as a sample.
	count := map[string]int{}
	for _, rec := range metrics.Of(metrics.Delivery, emitted.Bytes()) {
		key := rec.Dims[metrics.DimSink] + " " + rec.Dims[metrics.DimOutcome]
		count[key] += int(rec.Values["Deliveries"])
		if n := len(rec.Samples["DeliveryLatency"]); n != int(rec.Values["Deliveries"]) {
			t.Errorf("%s: %d latencies for %v deliveries", key, n, rec.Values["Deliveries"])
		}
		for _, lat := range rec.Samples["DeliveryLatency"] {
			if lat < 0 || lat > float64(time.Since(start).Milliseconds()+1000) {
				t.Errorf("%s: latency %v ms, %v after the commit", key, lat, time.Since(start))
			}
		}
	}
	want := map[string]int{"kinesis delivered": 1, "datadog retried": 2, "datadog dead_lettered": 1}
	if !reflect.DeepEqual(count, want) {
		t.Fatalf("delivery metrics %v, want %v", count, want)
	}
}

// No HTTP request calls SQS, and a mutation costs its one transaction: committed events leave
// through the table's stream. Each mutation's event still reaches the events queue, once.
func TestRequestsMakeNoSQSCall(t *testing.T) {
	s := testkit.StartWithEvents(t, app.Families...)
	if s.Queues == nil {
		t.Skip("no SQS emulator")
	}
	a := s.NewAccount(t)
	a.Do(t, "POST", "/api_keys", map[string]any{}).Expect(t, 201) // warms the token hint
	s.Queues.DrainEvents(t, s.Queues.Events, 1, 10*time.Second, 0)
	s.Calls.Reset()
	s.SQSCalls.Reset()
	id := a.Do(t, "POST", "/api_keys", map[string]any{}).Expect(t, 201)["id"].(string)
	if s.Calls.Total() != 1 || s.Calls.ByName()["TransactWriteItems"] != 1 {
		t.Fatalf("DynamoDB calls of a create %v, want one TransactWriteItems", s.Calls.ByName())
	}
	a.Do(t, "GET", "/api_keys/"+id, nil).Expect(t, 200)
	a.Do(t, "GET", "/api_keys", nil).Expect(t, 200)
	a.Do(t, "PATCH", "/api_keys/"+id, map[string]any{"description": "x"}).Expect(t, 200)
	a.Do(t, "DELETE", "/api_keys/"+id, nil).Expect(t, 204)
	if n := s.SQSCalls.Total(); n != 0 {
		t.Fatalf("%d SQS calls on the request path %v, want none", n, s.SQSCalls.ByName())
	}
	got := s.Queues.DrainEvents(t, s.Queues.Events, 3, 10*time.Second, 500*time.Millisecond)
	if len(got) != 3 {
		t.Fatalf("%d events on the queue, want 3 (created, updated, deleted)", len(got))
	}
	for ev, n := range got {
		if n != 1 {
			t.Fatalf("%s arrived %d times", ev, n)
		}
	}
}

// Outbox items stay after their event was carried, as a short audit trail, and expire by TTL
// OutboxRetention after their commit.
func TestOutboxItemsExpireByTTL(t *testing.T) {
	s := testkit.StartWithEvents(t, app.Families...)
	a := s.NewAccount(t)
	before := time.Now()
	a.Do(t, "POST", "/api_keys", map[string]any{}).Expect(t, 201)
	items := s.Outbox(t)
	if len(items) != 1 {
		t.Fatalf("%d outbox items, want 1", len(items))
	}
	exp := time.Unix(items[0].TTL, 0)
	if lo, hi := before.Add(audit.OutboxRetention-time.Second), time.Now().Add(audit.OutboxRetention+time.Second); exp.Before(lo) || exp.After(hi) {
		t.Fatalf("the outbox item expires at %v, want %v after its commit", exp, audit.OutboxRetention)
	}
	if audit.DefaultOutboxRetention != 7*24*time.Hour {
		t.Fatalf("default retention %v", audit.DefaultOutboxRetention)
	}
}

// The worker reports exactly the messages it could not process; poison goes to the DLQ with a
// reason; an event that keeps failing goes there too at its last attempt.
func TestPartialBatchFailures(t *testing.T) {
	k := testkit.StartSinks(t)
	s := k.Stack
	a, b := s.NewAccount(t), s.NewAccount(t)
	d := a.Do(t, "POST", "/event_destinations", map[string]any{"target": map[string]any{"kinesis": map[string]any{
		"stream_arn": "arn:aws:kinesis:us-east-1:123456789012:stream/x", "auth": roleAuth()}}}).Expect(t, 201)["id"].(string)
	subscribe(t, a, []string{"api_key_created.v0"}, d)
	// Fan-out cannot enqueue: its queue does not exist. The DLQ works.
	c := k.Worker
	c.QueueURL += "-missing"
	w := delivery.New(s.DB, s.Queues.Client, s.Deps.Kit.Seal, c.AWSConfig(), c)
	w.Log, w.Metrics = testkit.Logger(), testkit.Metrics()
	w.MaxAttempts = 3
	envelope := func(account string) string {
		b, _ := json.Marshal(audit.Envelope{EventID: ids.New(ids.Event), EventType: "api_key_created.v0",
			EventTimestamp: time.Now().UTC().Format(time.RFC3339), AccountID: account, Object: json.RawMessage(`{}`)})
		return string(b)
	}
	msg := func(id, body string, receives int) lambdaevents.SQSMessage {
		return lambdaevents.SQSMessage{MessageId: id, Body: body, Attributes: map[string]string{"ApproximateReceiveCount": fmt.Sprint(receives)}}
	}
	batch := lambdaevents.SQSEvent{Records: []lambdaevents.SQSMessage{
		msg("subscribed", envelope(a.AccountID), 1),
		msg("unsubscribed", envelope(b.AccountID), 1),
		msg("poison", "{not json", 1),
		msg("last-attempt", envelope(a.AccountID), 3),
	}}
	res, err := w.Handle(context.Background(), batch)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.BatchItemFailures) != 1 || res.BatchItemFailures[0].ItemIdentifier != "subscribed" {
		t.Fatalf("batch item failures %v, want only the subscribed event", res.BatchItemFailures)
	}
	dlq := s.Queues.Drain(t, s.Queues.DLQ, 5*time.Second)
	reasons := map[string]string{}
	for _, m := range dlq {
		reasons[*m.Body] = *m.MessageAttributes[delivery.AttrLastError].StringValue
	}
	if len(dlq) != 2 || !strings.Contains(reasons["{not json"], "unreadable event") {
		t.Fatalf("DLQ %v", reasons)
	}
	for body, why := range reasons {
		if body != "{not json" && !strings.Contains(why, "enqueue delivery") {
			t.Fatalf("last attempt dead-lettered with reason %q", why)
		}
	}
}
