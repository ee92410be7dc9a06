package usage_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"os"
	"reflect"
	"testing"

	lambdaevents "github.com/aws/aws-lambda-go/events"

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
	w := &usage.Worker{DB: s.DB, Log: testkit.Logger()}
	ctx := context.Background()
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
