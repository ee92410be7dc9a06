package usage

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"time"

	lambdaevents "github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"

	"tunnelapi/shared/platform/config"
	"tunnelapi/shared/platform/metrics"
	"tunnelapi/shared/platform/store"
)

// Worker is the usage worker: the destination of every function's log group's subscription
// filter (metrics.UsageFilterPattern).
type Worker struct {
	DB  *store.DB
	Log *slog.Logger
}

// Decode reads a CloudWatch Logs subscription delivery (base64 of gzip of JSON) into the sums
// of its usage lines, each dated by its log event's timestamp, and the batch id the same
// delivery always gets. A control message (sent when a filter is created) has no lines.
func Decode(ev lambdaevents.CloudwatchLogsEvent) (batch string, s Sums, err error) {
	d, err := ev.AWSLogs.Parse()
	if err != nil {
		return "", nil, err
	}
	s = Sums{}
	if d.MessageType != "DATA_MESSAGE" || len(d.LogEvents) == 0 {
		return "", s, nil
	}
	for _, e := range d.LogEvents {
		if u, err := metrics.ParseUsage([]byte(e.Message)); err == nil {
			s.Add(time.UnixMilli(e.Timestamp), u)
		}
	}
	h := sha256.Sum256([]byte(d.LogGroup + "\n" + d.LogStream + "\n" + d.LogEvents[0].ID + "\n" + d.LogEvents[len(d.LogEvents)-1].ID))
	return hex.EncodeToString(h[:16]), s, nil
}

// Handle adds one delivery's usage lines to their days. A delivery that cannot be decoded is
// logged and dropped (it never will be); a write that failed after Write's own retries is
// returned, so that Lambda invokes the function with the delivery again (CloudWatch Logs
// invokes it asynchronously: twice more, then the delivery goes to the function's on-failure
// destination, a queue with an alarm, from which it can be sent again), and the batch's markers
// keep what was written from counting twice.
func (w *Worker) Handle(ctx context.Context, ev lambdaevents.CloudwatchLogsEvent) error {
	batch, s, err := Decode(ev)
	if err != nil {
		w.Log.Error("usage delivery dropped: it cannot be decoded", "err", err.Error())
		return nil
	}
	if len(s) == 0 {
		return nil
	}
	if err := Write(ctx, w.DB, batch, s); err != nil {
		w.Log.Warn("usage batch not written: returned for Lambda to invoke again", "batch", batch, "err", err.Error())
		return err
	}
	return nil
}

// FromConfig builds the worker configured by c, with no network I/O.
func FromConfig(ctx context.Context, c config.UsageWorker, log *slog.Logger) (*Worker, error) {
	db, err := store.Open(ctx, c.StoreOptions())
	if err != nil {
		return nil, err
	}
	return &Worker{DB: db, Log: log}, nil
}

// Main is the usage worker Lambda's whole main.
func Main() {
	w := config.Start(config.LoadUsageWorker, FromConfig)
	lambda.Start(w.Handle)
}
