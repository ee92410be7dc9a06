package delivery_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/testing/standin"
	"tunnelapi/shared/testing/testkit"
	"tunnelapi/shared/workers/delivery"
)

// harness is the whole pipeline on the local stack: the API, the stream reader feeding a fresh
// events queue, a worker polling it, and stand-ins for every sink.
type harness struct {
	s    *testkit.Stack
	st   *standin.Stand
	w    *delivery.Worker
	stop func()
}

const region = "us-east-1"

// newHarness starts the pipeline; tune adjusts the worker before it starts polling.
func newHarness(t testing.TB, tune func(w *delivery.Worker)) *harness {
	t.Helper()
	k := testkit.StartSinks(t)
	s, st := k.Stack, k.Stand
	w := delivery.New(s.DB, s.Queues.Client, s.Deps.Kit.Seal, k.Worker.AWSConfig(), k.Worker)
	w.Log, w.Metrics = testkit.Logger(), testkit.Metrics()
	w.Backoff = time.Second
	w.MaxAttempts = 3
	if tune != nil {
		tune(w)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); w.Poll(ctx, 10) }()
	h := &harness{s: s, st: st, w: w, stop: func() { cancel(); wg.Wait() }}
	t.Cleanup(h.stop)
	return h
}

// target bodies of destinations reaching the stand-ins.

func (h *harness) kinesisCreds(t testing.TB, stream string) map[string]any {
	akid := "AKIA" + upper(ids.RandomBase62(16))
	secret := ids.RandomBase62(40)
	h.st.Creds.Add(akid, secret, "", time.Time{})
	return map[string]any{"kinesis": map[string]any{"stream_arn": "arn:aws:kinesis:" + region + ":123456789012:stream/" + stream,
		"auth": map[string]any{"creds": map[string]any{"aws_access_key_id": akid, "aws_secret_access_key": secret}}}}
}

const testRole = "arn:aws:iam::123456789012:role/ngrok-events"

func roleAuth() map[string]any { return map[string]any{"role": map[string]any{"role_arn": testRole}} }

func (h *harness) kinesisRole(stream string) map[string]any {
	return map[string]any{"kinesis": map[string]any{"stream_arn": "arn:aws:kinesis:" + region + ":123456789012:stream/" + stream, "auth": roleAuth()}}
}

func (h *harness) firehoseRole(name string) map[string]any {
	return map[string]any{"firehose": map[string]any{"delivery_stream_arn": "arn:aws:firehose:" + region + ":123456789012:deliverystream/" + name, "auth": roleAuth()}}
}

func (h *harness) cloudwatchCreds(group string) map[string]any {
	akid := "AKIA" + upper(ids.RandomBase62(16))
	secret := ids.RandomBase62(40)
	h.st.Creds.Add(akid, secret, "", time.Time{})
	return map[string]any{"cloudwatch_logs": map[string]any{"log_group_arn": "arn:aws:logs:" + region + ":123456789012:log-group:" + group + ":*",
		"auth": map[string]any{"creds": map[string]any{"aws_access_key_id": akid, "aws_secret_access_key": secret}}}}
}

func (h *harness) datadog(service string) (map[string]any, string) {
	key := lowerHex(32)
	h.st.DatadogKeys.Store(key, true)
	return map[string]any{"datadog": map[string]any{"api_key": key, "service": service, "ddtags": "env:test", "ddsite": "datadoghq.eu"}}, key
}

func (h *harness) azure(stream string) (map[string]any, string) {
	client := "11111111-2222-3333-4444-" + lowerHex(12)
	secret := ids.RandomBase62(30)
	h.st.Azure.AddApp(client, secret)
	return map[string]any{"azure_logs_ingestion": map[string]any{"tenant_id": "contoso.onmicrosoft.com", "client_id": client,
		"client_secret": secret, "logs_ingestion_uri": "https://dce-1.eastus-1.ingest.monitor.azure.com",
		"data_collection_rule_id": "dcr-" + lowerHex(32), "data_collection_stream_name": "Custom-" + stream}}, client
}

func upper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'a' && c <= 'z' {
			b[i] = c - 32
		}
	}
	return string(b)
}

func lowerHex(n int) string {
	const hex = "0123456789abcdef"
	r := ids.RandomBase62(n)
	b := make([]byte, n)
	for i := range b {
		b[i] = hex[int(r[i])%16]
	}
	return string(b)
}

// destination creates a destination with target and returns its id.
func destination(t testing.TB, a *testkit.Account, target map[string]any) string {
	t.Helper()
	return a.Do(t, "POST", "/event_destinations", map[string]any{"target": target}).Expect(t, http.StatusCreated)["id"].(string)
}

// subscribe subscribes the destinations to the event types.
func subscribe(t testing.TB, a *testkit.Account, types []string, dests ...string) string {
	t.Helper()
	var sources []any
	for _, typ := range types {
		sources = append(sources, map[string]any{"type": typ})
	}
	return a.Do(t, "POST", "/event_subscriptions", map[string]any{"sources": sources, "destination_ids": dests}).Expect(t, http.StatusCreated)["id"].(string)
}

// eventually polls cond until it holds or timeout passes.
func eventually(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
