package queue

import (
	"context"
	"log/slog"
	"strconv"
	"time"

	lambdaevents "github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go/logging"

	"tunnelapi/shared/platform/config"
)

// Handler is a Lambda handler of an SQS trigger with ReportBatchItemFailures: it returns the
// messages that must be received again.
type Handler func(ctx context.Context, ev lambdaevents.SQSEvent) (lambdaevents.SQSEventResponse, error)

// Poll runs handle on url the way Lambda's SQS trigger does, for the local server and tests:
// receive up to batch messages, call handle, delete what it did not report as failed (a failed
// or crashed batch comes back after the visibility timeout). It returns when ctx ends.
func Poll(ctx context.Context, c API, url string, batch int, log *slog.Logger, handle Handler) {
	for ctx.Err() == nil {
		out, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
			QueueUrl: aws.String(url), MaxNumberOfMessages: int32(min(max(batch, 1), 10)), WaitTimeSeconds: 1,
			MessageAttributeNames:       []string{"All"},
			MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameApproximateReceiveCount},
		}, func(o *sqs.Options) {
			// Stopping cancels a long poll in flight; the SDK would log that as a warning.
			o.Logger = logging.Nop{}
		})
		if err != nil {
			if ctx.Err() == nil {
				log.Warn("receive failed", "err", err.Error())
				select {
				case <-ctx.Done():
				case <-time.After(time.Second):
				}
			}
			continue
		}
		if len(out.Messages) == 0 {
			continue
		}
		ev := lambdaevents.SQSEvent{Records: make([]lambdaevents.SQSMessage, len(out.Messages))}
		for i, m := range out.Messages {
			ev.Records[i] = FromSQS(m)
		}
		// A batch in hand is finished even while stopping, as Lambda would.
		res, err := handle(context.WithoutCancel(ctx), ev)
		if err != nil {
			continue
		}
		failed := map[string]bool{}
		for _, f := range res.BatchItemFailures {
			failed[f.ItemIdentifier] = true
		}
		del := &sqs.DeleteMessageBatchInput{QueueUrl: aws.String(url)}
		for i, m := range out.Messages {
			if !failed[aws.ToString(m.MessageId)] {
				del.Entries = append(del.Entries, sqstypes.DeleteMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), ReceiptHandle: m.ReceiptHandle})
			}
		}
		if len(del.Entries) > 0 {
			if _, err := c.DeleteMessageBatch(context.WithoutCancel(ctx), del); err != nil {
				log.Warn("delete failed", "err", err.Error())
			}
		}
	}
}

// FromSQS is a received message as Lambda's SQS trigger presents it.
func FromSQS(m sqstypes.Message) lambdaevents.SQSMessage {
	out := lambdaevents.SQSMessage{MessageId: aws.ToString(m.MessageId), ReceiptHandle: aws.ToString(m.ReceiptHandle),
		Body: aws.ToString(m.Body), Attributes: m.Attributes, MessageAttributes: map[string]lambdaevents.SQSMessageAttribute{},
		EventSource: "aws:sqs"}
	for k, v := range m.MessageAttributes {
		out.MessageAttributes[k] = lambdaevents.SQSMessageAttribute{StringValue: v.StringValue, DataType: aws.ToString(v.DataType)}
	}
	return out
}

// Worker is what a queue worker's Lambda serves: Handle takes one batch.
type Worker interface {
	Handle(ctx context.Context, ev lambdaevents.SQSEvent) (lambdaevents.SQSEventResponse, error)
}

// Start is the whole main of a queue worker's Lambda: parse its configuration with load and
// build the worker (no network I/O) as config.Start does, then serve its Handle.
func Start[C config.Settings, W Worker](load func(config.Lookup) (C, error), build func(context.Context, C, *slog.Logger) (W, error)) {
	lambda.Start(Handler(config.Start(load, build).Handle))
}
