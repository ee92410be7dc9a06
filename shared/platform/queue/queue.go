package queue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"tunnelapi/shared/platform/derrors"
)

// API is the part of the SQS client the service uses; tests wrap it to inject failures.
type API interface {
	SendMessageBatch(ctx context.Context, in *sqs.SendMessageBatchInput, opts ...func(*sqs.Options)) (*sqs.SendMessageBatchOutput, error)
	ReceiveMessage(ctx context.Context, in *sqs.ReceiveMessageInput, opts ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error)
	DeleteMessageBatch(ctx context.Context, in *sqs.DeleteMessageBatchInput, opts ...func(*sqs.Options)) (*sqs.DeleteMessageBatchOutput, error)
	ChangeMessageVisibility(ctx context.Context, in *sqs.ChangeMessageVisibilityInput, opts ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityOutput, error)
}

// NewClient builds an SQS client from cfg without network I/O, reaching SQS at endpoint when
// set (the local emulator, SQS_ENDPOINT).
func NewClient(cfg aws.Config, endpoint string, opts ...func(*sqs.Options)) *sqs.Client {
	ep := endpoint
	all := []func(*sqs.Options){func(o *sqs.Options) {
		if ep != "" {
			o.BaseEndpoint = aws.String(ep)
		}
	}}
	return sqs.NewFromConfig(cfg, append(all, opts...)...)
}

// Message is one message to send: its body, string attributes, and an optional delay.
type Message struct {
	// ID identifies the message within one batch call (letters, digits, - and _; at most 80).
	ID    string
	Body  string
	Attrs map[string]string
	Delay int32 // seconds, at most 900
}

// MaxBatch is SQS's limit on the entries of one batch call.
const MaxBatch = 10

// SendAll sends msgs in batches of ten and returns the ids of those SQS did not accept, with
// the reason of each; err is set only when a whole call failed (every message of the failed
// call is then in failed as well).
func SendAll(ctx context.Context, c API, url string, msgs []Message) (failed map[string]string, err error) {
	defer derrors.Wrap(&err, "queue.SendAll(%s)", url)
	failed = map[string]string{}
	for start := 0; start < len(msgs); start += MaxBatch {
		chunk := msgs[start:min(start+MaxBatch, len(msgs))]
		in := &sqs.SendMessageBatchInput{QueueUrl: aws.String(url)}
		for _, m := range chunk {
			e := types.SendMessageBatchRequestEntry{Id: aws.String(m.ID), MessageBody: aws.String(m.Body), DelaySeconds: m.Delay}
			if len(m.Attrs) > 0 {
				e.MessageAttributes = map[string]types.MessageAttributeValue{}
				for k, v := range m.Attrs {
					e.MessageAttributes[k] = types.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(v)}
				}
			}
			in.Entries = append(in.Entries, e)
		}
		out, cerr := c.SendMessageBatch(ctx, in)
		if cerr != nil {
			for _, m := range chunk {
				failed[m.ID] = cerr.Error()
			}
			err = cerr
			continue
		}
		for _, f := range out.Failed {
			failed[aws.ToString(f.Id)] = aws.ToString(f.Code) + ": " + aws.ToString(f.Message)
		}
	}
	return failed, err
}

// PairOptions shape a queue and its dead-letter queue.
type PairOptions struct {
	VisibilityTimeout int // seconds
	MaxReceiveCount   int // receives before SQS itself moves a message to the DLQ
}

// CreatePair creates (or finds) the queue name and its dead-letter queue name+"-dlq", with a
// redrive policy from one to the other, and returns both URLs as SQS returned them (clients
// must use those verbatim: the emulator looks queues up by exact URL).
func CreatePair(ctx context.Context, c *sqs.Client, name string, o PairOptions) (url, dlqURL string, err error) {
	defer derrors.Wrap(&err, "queue.CreatePair(%s)", name)
	dlq, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name + "-dlq"),
		Attributes: map[string]string{"MessageRetentionPeriod": "1209600"}})
	if err != nil {
		return "", "", fmt.Errorf("create the dead-letter queue: %w", err)
	}
	attrs, err := c.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: dlq.QueueUrl,
		AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameQueueArn}})
	if err != nil {
		return "", "", fmt.Errorf("read the dead-letter queue's ARN: %w", err)
	}
	arn := attrs.Attributes[string(types.QueueAttributeNameQueueArn)]
	if arn == "" {
		return "", "", errors.New("the dead-letter queue has no ARN")
	}
	policy, _ := json.Marshal(map[string]any{"deadLetterTargetArn": arn, "maxReceiveCount": o.MaxReceiveCount})
	q, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name), Attributes: map[string]string{
		"VisibilityTimeout": strconv.Itoa(o.VisibilityTimeout),
		"RedrivePolicy":     string(policy),
	}})
	if err != nil {
		return "", "", fmt.Errorf("create the queue: %w", err)
	}
	return aws.ToString(q.QueueUrl), aws.ToString(dlq.QueueUrl), nil
}
