package usage_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"reflect"
	"testing"
	"time"

	lambdaevents "github.com/aws/aws-lambda-go/events"

	"tunnelapi/shared/families/principals"
	"tunnelapi/shared/platform/auth"
	"tunnelapi/shared/platform/metrics"
	"tunnelapi/shared/platform/store"
	"tunnelapi/shared/testing/testkit"
	"tunnelapi/shared/workers/usage"
)

// subscription is testdata/subscription.b64: a CloudWatch Logs subscription delivery as Lambda
// receives it (gzip, then base64, of the JSON document CloudWatch Logs documents), from an HTTP
// function's log group: four usage lines of one account, the last one past midnight UTC.
func subscription(t *testing.T) lambdaevents.CloudwatchLogsEvent {
	raw, err := os.ReadFile("testdata/subscription.b64")
	if err != nil {
		t.Fatal(err)
	}
	return lambdaevents.CloudwatchLogsEvent{AWSLogs: lambdaevents.CloudwatchLogsRawData{Data: string(raw)}}
}

const account = "acct_2Bxz7mWl3jk8UpN5sQ0vR9tYc1a"

// The usage worker decodes a subscription delivery into its lines' sums per UTC day and adds
// them to the account's days once, however many times the same delivery comes; a control
// message and an undecodable delivery add nothing.
func TestWorkerAddsADeliveryOnce(t *testing.T) {
	s := testkit.Start(t)
	w := &usage.Worker{DB: s.DB, Log: testkit.Logger(), Sources: stack}
	ctx := context.Background()
	if err := s.DB.Put(ctx, principals.TenantItem{Key: store.TenantKey(account), ID: account}); err != nil {
		t.Fatal(err)
	}
	want := []usage.Day{
		{Day: "2025-11-28", Requests: map[string]map[string]int64{"api_keys": {"2xx": 2, "4xx": 1}}, Mutations: 2,
			ItemsStored: 0, ReadUnits: 3.5, WriteUnits: 11},
		{Day: "2025-11-29", Requests: map[string]map[string]int64{"api_keys": {"2xx": 1}}, ReadUnits: 2.5, WriteUnits: 1},
	}
	for range 2 {
		if err := w.Handle(ctx, subscription(t)); err != nil {
			t.Fatal(err)
		}
		got, err := usage.Days(ctx, s.DB, account, "2025-11-01", "2025-11-30")
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("days %+v, %v\nwant %+v", got, err, want)
		}
	}
	control := `{"messageType":"CONTROL_MESSAGE","owner":"CloudwatchLogs","logGroup":"","logStream":"","subscriptionFilters":[],"logEvents":[{"id":"","timestamp":1764288000000,"message":"CWL CONTROL MESSAGE: Checking health of destination Lambda."}]}`
	for _, data := range []string{gzipBase64(t, control), "not base64", ""} {
		ev := lambdaevents.CloudwatchLogsEvent{AWSLogs: lambdaevents.CloudwatchLogsRawData{Data: data}}
		if err := w.Handle(ctx, ev); err != nil {
			t.Fatalf("%.30s: %v", data, err)
		}
	}
	if got, _ := usage.Days(ctx, s.DB, account, "2025-11-01", "2025-11-30"); !reflect.DeepEqual(got, want) {
		t.Fatalf("after a control message and undecodable deliveries: %+v", got)
	}
	if _, err := usage.Days(ctx, s.DB, account, "2025-11", "2025-11-30"); err == nil {
		t.Fatal("a month read as a day")
	}
}

// Usage lines of a tenant being erased, or erased, add nothing (so nothing outlives the
// erasure), while those of a live tenant in the same delivery are added.
func TestWorkerAddsNothingForAnErasedTenant(t *testing.T) {
	s := testkit.Start(t)
	ctx := context.Background()
	live, deleting, gone := s.NewAccount(t), s.NewAccount(t), "acct_2Bxz7mWl3jk8UpN5sQ0vR9tYc1b"
	// Marked as the operator's erasure marks it: the account item and the tenant's entry.
	tx := &store.Tx{}
	tx.Put("account", auth.AccountItem{Key: store.AccountKey(deleting.AccountID), ID: deleting.AccountID, Status: auth.StatusDeleting})
	tx.Put("tenant", principals.TenantItem{Key: store.TenantKey(deleting.AccountID), ID: deleting.AccountID, Status: auth.StatusDeleting})
	if err := s.DB.Commit(ctx, tx); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2025, 11, 28, 12, 0, 0, 0, time.UTC)
	sums := usage.Sums{}
	for _, acct := range []string{live.AccountID, deleting.AccountID, gone} {
		sums.Add(at, metrics.Usage{Account: acct, Family: "api_keys", Status: 200, ReadUnits: 1})
	}
	if err := usage.Write(ctx, s.DB, "erased-tenants", sums); err != nil {
		t.Fatal(err)
	}
	for acct, want := range map[string]int{live.AccountID: 1, deleting.AccountID: 0, gone: 0} {
		days, err := usage.Days(ctx, s.DB, acct, "2025-11-28", "2025-11-28")
		if err != nil || len(days) != want {
			t.Errorf("%s: %+v, %v; want %d days", acct, days, err, want)
		}
	}
}

// stack is the stack testdata/subscription.b64 comes from: its log group
// tunnelapi-ApiKeysFunctionLogGroup-Q1w2E3r4T5y6 of account 123456789012.
var stack = &usage.Sources{Owner: "123456789012", Stack: "tunnelapi"}

// The worker adds the lines of its own stack's log groups only: the same delivery from another
// account, from a stack whose name extends its own, or from a log group CloudFormation did not
// make for the stack, is dropped (logged, and not returned as a failure to retry).
func TestWorkerAddsOnlyItsStacksLogGroups(t *testing.T) {
	s := testkit.Start(t)
	ctx := context.Background()
	if err := s.DB.Put(ctx, principals.TenantItem{Key: store.TenantKey(account), ID: account}); err != nil {
		t.Fatal(err)
	}
	w := &usage.Worker{DB: s.DB, Log: testkit.Logger(), Sources: stack}
	var d lambdaevents.CloudwatchLogsData
	raw, err := subscription(t).AWSLogs.Parse()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ owner, group string }{
		{"210987654321", "tunnelapi-ApiKeysFunctionLogGroup-Q1w2E3r4T5y6"},
		{"123456789012", "tunnelapi-dev-ApiKeysFunctionLogGroup-Q1w2E3r4T5y6"},
		{"123456789012", "other-ApiKeysFunctionLogGroup-Q1w2E3r4T5y6"},
		{"123456789012", "/aws/lambda/tunnelapi-ApiKeysFunction-Q1w2E3r4T5y6"},
		{"123456789012", "tunnelapi-ApiKeysFunctionLogGroup"},
		{"123456789012", "tunnelapi-ApiKeys/FunctionLogGroup-Q1w2E3r4T5y6"},
		{"", "tunnelapi-ApiKeysFunctionLogGroup-Q1w2E3r4T5y6"},
	} {
		d = raw
		d.Owner, d.LogGroup = c.owner, c.group
		b, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		ev := lambdaevents.CloudwatchLogsEvent{AWSLogs: lambdaevents.CloudwatchLogsRawData{Data: gzipBase64(t, string(b))}}
		if err := w.Handle(ctx, ev); err != nil {
			t.Fatalf("%s of %s: %v", c.group, c.owner, err)
		}
		if got, err := usage.Days(ctx, s.DB, account, "2025-11-01", "2025-11-30"); err != nil || len(got) != 0 {
			t.Fatalf("after a delivery from %s of %q: days %+v, %v; want none", c.group, c.owner, got, err)
		}
	}
	if err := w.Handle(ctx, subscription(t)); err != nil {
		t.Fatal(err)
	}
	if got, err := usage.Days(ctx, s.DB, account, "2025-11-01", "2025-11-30"); err != nil || len(got) != 2 {
		t.Fatalf("after the stack's own delivery: days %+v, %v; want its two", got, err)
	}
}

func gzipBase64(t *testing.T, s string) string {
	var b bytes.Buffer
	z := gzip.NewWriter(&b)
	if _, err := z.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(b.Bytes())
}
