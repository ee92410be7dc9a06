package main

import (
	"context"

	"tunnelapi/shared/platform/config"
	"tunnelapi/shared/platform/queue"
)

// createQueues creates the SQS queues the workers use (events, certificate jobs and their
// dead-letter queues) on the local SQS emulator, named QUEUE_PREFIX-events, -events-dlq,
// -cert-jobs and -cert-jobs-dlq, and gives c their URLs where it names none. It returns each
// queue's URL by its variable (EVENTS_QUEUE_URL, EVENTS_DLQ_URL, CERT_JOBS_QUEUE_URL,
// CERT_JOBS_DLQ_URL). Creating is idempotent.
func createQueues(ctx context.Context, c *config.Local) (map[string]string, error) {
	client := queue.NewClient(c.HTTP.AWSConfig(), c.HTTP.SQSEndpoint)
	pairs := []struct {
		name, urlVar, dlqVar string
		url, dlq             *string
		o                    queue.PairOptions
	}{
		{c.QueuePrefix + "-events", "EVENTS_QUEUE_URL", "EVENTS_DLQ_URL", &c.EventWorker.QueueURL, &c.EventWorker.DLQURL,
			queue.PairOptions{VisibilityTimeout: 30, MaxReceiveCount: 10}},
		{c.QueuePrefix + "-cert-jobs", "CERT_JOBS_QUEUE_URL", "CERT_JOBS_DLQ_URL", &c.CertWorker.QueueURL, &c.CertJobsDLQURL,
			queue.PairOptions{VisibilityTimeout: 120, MaxReceiveCount: 5}},
	}
	out := map[string]string{}
	for _, p := range pairs {
		url, dlq, err := queue.CreatePair(ctx, client, p.name, p.o)
		if err != nil {
			return nil, err
		}
		if *p.url == "" {
			*p.url = url
		}
		if *p.dlq == "" {
			*p.dlq = dlq
		}
		out[p.urlVar], out[p.dlqVar] = *p.url, *p.dlq
	}
	return out, nil
}
