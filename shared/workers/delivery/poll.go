package delivery

import (
	"context"
	"log/slog"

	"tunnelapi/shared/platform/config"
	"tunnelapi/shared/platform/queue"
	"tunnelapi/shared/platform/seal"
	"tunnelapi/shared/platform/seal/kmsseal"
	"tunnelapi/shared/platform/store"
)

// Poll runs the worker the way Lambda's SQS trigger does (queue.Poll), for the local server
// and tests. It returns when ctx ends.
func (w *Worker) Poll(ctx context.Context, batch int) {
	queue.Poll(ctx, w.SQS, w.QueueURL, batch, w.log(), w.Handle)
}

// FromConfig builds the worker configured by c with no network I/O.
func FromConfig(ctx context.Context, c config.EventWorker, log *slog.Logger) (*Worker, error) {
	cfg := c.AWSConfig()
	db, err := store.Open(ctx, c.StoreOptions())
	if err != nil {
		return nil, err
	}
	// The destinations' secrets are sealed, with KMS in AWS.
	c.Seal.NewKMS = kmsseal.New
	w := New(db, queue.NewClient(cfg, c.SQSEndpoint), seal.New(cfg, c.Seal), cfg, c)
	w.Log = log
	return w, nil
}

// Main is the event worker Lambda's whole main.
func Main() {
	queue.Start(config.LoadEventWorker, FromConfig)
}
