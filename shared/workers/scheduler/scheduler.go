// Package scheduler is the scheduled function: an EventBridge schedule runs it every minute to
// sweep the outbox, republishing every committed event that its request did not publish (a
// crash between commit and publish, or an SQS failure).
package scheduler

import (
	"context"
	"log/slog"
	"os"
	"time"

	"tunnelapi/shared/platform/awsconfig"

	lambdaevents "github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"

	"tunnelapi/shared/platform/audit"
	"tunnelapi/shared/platform/queue"
	"tunnelapi/shared/platform/store"
)

// Result is what one scheduled run reports.
type Result struct {
	Republished int `json:"republished"`
}

// Handler is the Lambda handler of the schedule: one sweep.
func Handler(p *audit.Publisher) func(context.Context, lambdaevents.EventBridgeEvent) (Result, error) {
	return func(ctx context.Context, _ lambdaevents.EventBridgeEvent) (Result, error) {
		n, err := p.Sweep(ctx)
		if n > 0 {
			p.Logger().Info("outbox swept", "republished", n)
		}
		return Result{Republished: n}, err
	}
}

// FromEnv builds the sweeping publisher with no network I/O: TABLE_NAME, DYNAMODB_ENDPOINT,
// EVENTS_QUEUE_URL, SQS_ENDPOINT, and OUTBOX_GRACE (a Go duration; audit.DefaultGrace when
// unset).
func FromEnv(ctx context.Context, log *slog.Logger) (*audit.Publisher, error) {
	cfg := awsconfig.FromEnv()
	db, err := store.Open(ctx, store.Options{Config: &cfg})
	if err != nil {
		return nil, err
	}
	p := &audit.Publisher{DB: db, SQS: queue.NewClient(cfg), QueueURL: os.Getenv("EVENTS_QUEUE_URL"), Log: log}
	if d, err := time.ParseDuration(os.Getenv("OUTBOX_GRACE")); err == nil {
		p.Grace = d
	}
	return p, nil
}

// Main is the scheduler Lambda's whole main.
func Main() {
	log := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	p, err := FromEnv(context.Background(), log)
	if err != nil {
		log.Error("init failed", "err", err.Error())
		os.Exit(1)
	}
	lambda.Start(Handler(p))
}
