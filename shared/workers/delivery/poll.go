package delivery

import (
	"context"
	"log/slog"
	"os"
	"strconv"
	"time"

	"tunnelapi/shared/platform/awsconfig"

	"tunnelapi/shared/platform/queue"
	"tunnelapi/shared/platform/seal"
	"tunnelapi/shared/platform/store"

	// Secrets of this family are sealed with KMS in AWS.
	_ "tunnelapi/shared/platform/seal/kmsseal"
)

// Poll runs the worker the way Lambda's SQS trigger does (queue.Poll), for the local server
// and tests. It returns when ctx ends.
func (w *Worker) Poll(ctx context.Context, batch int) {
	queue.Poll(ctx, w.SQS, w.QueueURL, batch, w.log(), w.Handle)
}

// FromEnv builds the worker from the environment with no network I/O: TABLE_NAME and
// DYNAMODB_ENDPOINT (store.Open), EVENTS_QUEUE_URL and EVENTS_DLQ_URL, SQS_ENDPOINT, the
// sealer's SEAL_KMS_KEY_ID or SEAL_KEY_FILE, the SINK_ENDPOINT_* overrides (Endpoints), and
// DELIVERY_MAX_ATTEMPTS and DELIVERY_BACKOFF (a Go duration) for the retry policy.
func FromEnv(ctx context.Context, log *slog.Logger) (*Worker, error) {
	cfg := awsconfig.FromEnv()
	db, err := store.Open(ctx, store.Options{Config: &cfg})
	if err != nil {
		return nil, err
	}
	sealer := seal.FromEnv(cfg)
	w := New(db, queue.NewClient(cfg), os.Getenv("EVENTS_QUEUE_URL"), os.Getenv("EVENTS_DLQ_URL"), sealer, cfg, EndpointsFromEnv())
	w.Log = log
	if n, err := strconv.Atoi(os.Getenv("DELIVERY_MAX_ATTEMPTS")); err == nil && n > 0 {
		w.MaxAttempts = n
	}
	if d, err := time.ParseDuration(os.Getenv("DELIVERY_BACKOFF")); err == nil && d > 0 {
		w.Backoff = d
	}
	return w, nil
}

// Main is the event worker Lambda's whole main.
func Main() {
	queue.Start(FromEnv)
}
