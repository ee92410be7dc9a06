package delivery

import (
	"context"
	"log/slog"
	"os"
	"strconv"
	"time"

	"tunnelapi/shared/platform/awsconfig"

	lambdaevents "github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go/logging"

	"tunnelapi/shared/platform/queue"
	"tunnelapi/shared/platform/seal"
	"tunnelapi/shared/platform/store"

	// Secrets of this family are sealed with KMS in AWS.
	_ "tunnelapi/shared/platform/seal/kmsseal"
)

// Poll runs the worker the way Lambda's SQS trigger does, for the local server and tests:
// receive up to batch messages, call Handle, delete what it did not report as failed (a
// failed or crashed batch comes back after the visibility timeout). It returns when ctx ends.
func (w *Worker) Poll(ctx context.Context, batch int) {
	for ctx.Err() == nil {
		out, err := w.SQS.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
			QueueUrl: aws.String(w.QueueURL), MaxNumberOfMessages: int32(min(max(batch, 1), 10)), WaitTimeSeconds: 1,
			MessageAttributeNames:       []string{"All"},
			MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameApproximateReceiveCount},
		}, func(o *sqs.Options) {
			// Stopping cancels a long poll in flight; the SDK would log that as a warning.
			o.Logger = logging.Nop{}
		})
		if err != nil {
			if ctx.Err() == nil {
				w.log().Warn("receive failed", "err", err.Error())
				sleep(ctx, time.Second)
			}
			continue
		}
		if len(out.Messages) == 0 {
			continue
		}
		ev := lambdaevents.SQSEvent{Records: make([]lambdaevents.SQSMessage, len(out.Messages))}
		for i, m := range out.Messages {
			ev.Records[i] = fromSQS(m)
		}
		// A batch in hand is finished even while stopping, as Lambda would.
		res, err := w.Handle(context.WithoutCancel(ctx), ev)
		if err != nil {
			continue
		}
		failed := map[string]bool{}
		for _, f := range res.BatchItemFailures {
			failed[f.ItemIdentifier] = true
		}
		del := &sqs.DeleteMessageBatchInput{QueueUrl: aws.String(w.QueueURL)}
		for i, m := range out.Messages {
			if !failed[aws.ToString(m.MessageId)] {
				del.Entries = append(del.Entries, sqstypes.DeleteMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), ReceiptHandle: m.ReceiptHandle})
			}
		}
		if len(del.Entries) > 0 {
			if _, err := w.SQS.DeleteMessageBatch(context.WithoutCancel(ctx), del); err != nil {
				w.log().Warn("delete failed", "err", err.Error())
			}
		}
	}
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

func fromSQS(m sqstypes.Message) lambdaevents.SQSMessage {
	out := lambdaevents.SQSMessage{MessageId: aws.ToString(m.MessageId), ReceiptHandle: aws.ToString(m.ReceiptHandle),
		Body: aws.ToString(m.Body), Attributes: m.Attributes, MessageAttributes: map[string]lambdaevents.SQSMessageAttribute{},
		EventSource: "aws:sqs"}
	for k, v := range m.MessageAttributes {
		out.MessageAttributes[k] = lambdaevents.SQSMessageAttribute{StringValue: v.StringValue, DataType: aws.ToString(v.DataType)}
	}
	return out
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
	log := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	w, err := FromEnv(context.Background(), log)
	if err != nil {
		log.Error("init failed", "err", err.Error())
		os.Exit(1)
	}
	lambda.Start(w.Handle)
}
