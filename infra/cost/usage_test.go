package cost_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	lambdaevents "github.com/aws/aws-lambda-go/events"

	"tunnelapi/infra/cost"
	"tunnelapi/shared/platform/metrics"
	"tunnelapi/shared/platform/store"
	"tunnelapi/shared/testing/testkit"
	"tunnelapi/shared/workers/usage"
)

// byteCounter counts the bytes written to it (the usage lines of a request).
type byteCounter struct{ n atomic.Int64 }

func (c *byteCounter) Write(p []byte) (int, error) { c.n.Add(int64(len(p))); return len(p), nil }

// take returns the bytes written since the last take.
func (c *byteCounter) take() int64 { return c.n.Swap(0) }

// usageLinesPerDelivery is how many usage lines one CloudWatch Logs subscription delivery is
// assumed to carry to the usage worker. CloudWatch Logs batches a log stream's events and AWS
// documents no size; a function instance under load writes many lines a second, an idle one
// few. The figure is a model input, not a measurement: the report of `make bench` says what
// follows from it.
const usageLinesPerDelivery = 100

// usagePart is the usage worker's part of one usage line: its invocations, their duration and
// memory, and its write units.
type usagePart struct {
	invocations, writeUnits float64
	lambda                  time.Duration
	memoryMB                int
}

// add adds the part to u.
func (p usagePart) add(u cost.Usage) cost.Usage {
	u.UsageInvocations, u.UsageLambda, u.UsageMemoryMB = p.invocations, p.lambda, p.memoryMB
	u.WriteUnits += p.writeUnits
	return u
}

// usageShare measures the usage worker handling deliveries of usageLinesPerDelivery lines of
// one account (the common case: a function instance serves one tenant's burst), through m
// (write units as DynamoDB Local reports them) on table, and returns one line's part of it.
func usageShare(b *testing.B, m *meter, table, account string) usagePart {
	w := &usage.Worker{DB: store.New(m, table), Log: testkit.Logger()}
	line := strings.TrimSpace(string(metrics.UsageLine(metrics.Usage{Account: account, Family: "ip_policies", Status: 200, ReadUnits: 3, WriteUnits: 1})))
	const runs = 20
	var busy time.Duration
	var writes float64
	for r := range runs {
		ev := logsDelivery(b, r, line)
		m.take()
		start := time.Now()
		if err := w.Handle(context.Background(), ev); err != nil {
			b.Fatal(err)
		}
		busy += time.Since(start)
		_, write, _ := m.take()
		writes += write
	}
	return usagePart{invocations: 1.0 / usageLinesPerDelivery, writeUnits: writes / runs / usageLinesPerDelivery,
		lambda: busy / runs, memoryMB: functionMemoryMB(b, "UsageWorkerFunction")}
}

// logsDelivery is the r-th subscription delivery of usageLinesPerDelivery copies of line, as
// CloudWatch Logs sends it (gzip, then base64, of its JSON document).
func logsDelivery(b *testing.B, r int, line string) lambdaevents.CloudwatchLogsEvent {
	var evs []lambdaevents.CloudwatchLogsLogEvent
	now := time.Now().UnixMilli()
	for i := range usageLinesPerDelivery {
		evs = append(evs, lambdaevents.CloudwatchLogsLogEvent{ID: fmt.Sprintf("%056d", r*usageLinesPerDelivery+i), Timestamp: now, Message: line})
	}
	doc, _ := json.Marshal(lambdaevents.CloudwatchLogsData{MessageType: "DATA_MESSAGE", Owner: "123456789012",
		LogGroup: "/aws/lambda/IPPoliciesFunction", LogStream: "2026/01/01/[$LATEST]0123456789abcdef", LogEvents: evs})
	var z bytes.Buffer
	gz := gzip.NewWriter(&z)
	if _, err := gz.Write(doc); err != nil {
		b.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		b.Fatal(err)
	}
	return lambdaevents.CloudwatchLogsEvent{AWSLogs: lambdaevents.CloudwatchLogsRawData{Data: base64.StdEncoding.EncodeToString(z.Bytes())}}
}
