package main

import (
	"context"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"

	"tunnelapi/shared/platform/queue"
)

// createQueues creates the SQS queues the workers use (events, certificate jobs and their
// dead-letter queues) on the local SQS emulator, named QUEUE_PREFIX-events, -events-dlq,
// -cert-jobs and -cert-jobs-dlq, and exports their URLs (EVENTS_QUEUE_URL, EVENTS_DLQ_URL,
// CERT_JOBS_QUEUE_URL, CERT_JOBS_DLQ_URL) unless already set. Creating is idempotent.
func createQueues(ctx context.Context, cfg aws.Config) error {
	c := queue.NewClient(cfg)
	prefix := env("QUEUE_PREFIX", "tunnelapi")
	pairs := []struct {
		name, urlVar, dlqVar string
		o                    queue.PairOptions
	}{
		{prefix + "-events", "EVENTS_QUEUE_URL", "EVENTS_DLQ_URL", queue.PairOptions{VisibilityTimeout: 30, MaxReceiveCount: 10}},
		{prefix + "-cert-jobs", "CERT_JOBS_QUEUE_URL", "CERT_JOBS_DLQ_URL", queue.PairOptions{VisibilityTimeout: 120, MaxReceiveCount: 5}},
	}
	for _, p := range pairs {
		url, dlq, err := queue.CreatePair(ctx, c, p.name, p.o)
		if err != nil {
			return err
		}
		for k, v := range map[string]string{p.urlVar: url, p.dlqVar: dlq} {
			if os.Getenv(k) == "" {
				os.Setenv(k, v)
			}
		}
	}
	return nil
}
