package delivery

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/credentials/stscreds"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs/types"
	"github.com/aws/aws-sdk-go-v2/service/firehose"
	fhtypes "github.com/aws/aws-sdk-go-v2/service/firehose/types"
	"github.com/aws/aws-sdk-go-v2/service/kinesis"
	kintypes "github.com/aws/aws-sdk-go-v2/service/kinesis/types"
	"github.com/aws/aws-sdk-go-v2/service/sts"

	"tunnelapi/shared/families/eventsub"
	"tunnelapi/shared/platform/config"
)

// DefaultExpiryWindow is how long before expiry assumed-role credentials are renewed.
const DefaultExpiryWindow = 5 * time.Minute

// AWS builds the SDK clients of AWS targets: credentials from the destination's access key, or
// from STS AssumeRole of its role (with the account id as external id, so one account cannot
// have the service assume another's role), cached until shortly before they expire. A role of
// the deployment's own AWS account is never assumed: a role there that trusts the worker without
// checking the external id would otherwise be any tenant's (the template's IAM policy denies it
// too).
type AWS struct {
	// Base is the worker's own configuration: its credentials call STS.
	Base aws.Config
	// Endpoints override where each sink is reached: all empty in AWS, the stand-ins locally
	// and in tests (SINK_ENDPOINT_*).
	Endpoints config.Sinks
	// ExpiryWindow renews assumed-role credentials this long before they expire
	// (DefaultExpiryWindow when zero).
	ExpiryWindow time.Duration
	// Deployment is the AWS account the deployment runs in (DEPLOYMENT_ACCOUNT_ID), whose roles
	// are refused; empty refuses none.
	Deployment string

	mu    sync.Mutex
	sts   *sts.Client
	roles map[string]*aws.CredentialsCache
}

// errDeploymentRole is a destination naming a role of the deployment's own account.
var errDeploymentRole = errors.New("the destination's role is in the deployment's own AWS account, whose roles are never assumed")

// maxRoles bounds the assumed-role cache; past it the cache starts over.
const maxRoles = 4096

func (a *AWS) credentials(d *Destination) (aws.CredentialsProvider, error) {
	t := d.Target
	if t.RoleARN == "" {
		if d.Secret == "" {
			return nil, errNoSecret
		}
		return credentials.NewStaticCredentialsProvider(t.AccessKeyID, d.Secret, ""), nil
	}
	if a.Deployment != "" && eventsub.RoleAccount(t.RoleARN) == a.Deployment {
		return nil, errDeploymentRole
	}
	key := t.RoleARN + "\x00" + d.AccountID
	a.mu.Lock()
	defer a.mu.Unlock()
	if c, ok := a.roles[key]; ok {
		return c, nil
	}
	if a.sts == nil {
		ep := a.Endpoints.STS
		a.sts = sts.NewFromConfig(a.Base, func(o *sts.Options) {
			if ep != "" {
				o.BaseEndpoint = aws.String(ep)
			}
		})
	}
	if a.roles == nil || len(a.roles) >= maxRoles {
		a.roles = map[string]*aws.CredentialsCache{}
	}
	window := a.ExpiryWindow
	if window == 0 {
		window = DefaultExpiryWindow
	}
	account := d.AccountID
	p := stscreds.NewAssumeRoleProvider(a.sts, t.RoleARN, func(o *stscreds.AssumeRoleOptions) {
		o.ExternalID = aws.String(account)
		o.RoleSessionName = "tunnelapi-events"
		o.Duration = time.Hour
	})
	c := aws.NewCredentialsCache(p, func(o *aws.CredentialsCacheOptions) { o.ExpiryWindow = window })
	a.roles[key] = c
	return c, nil
}

// config is the SDK configuration for d's target: its region and credentials. Sink errors are
// retried by the worker with backoff, so the SDK makes one attempt.
func (a *AWS) config(d *Destination) (aws.Config, error) {
	creds, err := a.credentials(d)
	if err != nil {
		return aws.Config{}, err
	}
	cfg := a.Base.Copy()
	cfg.Region = d.Target.Region()
	cfg.Credentials = creds
	cfg.RetryMaxAttempts = 1
	return cfg, nil
}

// recordErrors is the outcome of each of n records a batch call of service answered with
// results, whose failures carry an error code and message (failure returns them, nil codes for
// a record written).
func recordErrors[R any](service string, n int, results []R, failure func(r R) (code, msg *string)) []error {
	if len(results) != n {
		return every(n, fmt.Errorf("%s: %d results for %d records", service, len(results), n))
	}
	errs := make([]error, n)
	for j, r := range results {
		if code, msg := failure(r); code != nil {
			errs[j] = fmt.Errorf("%s: %s: %s", service, aws.ToString(code), aws.ToString(msg))
		}
	}
	return errs
}

func endpoint(ep string) *string {
	if ep == "" {
		return nil
	}
	return aws.String(ep)
}

// awsSink is the sink of an AWS target kind whose SDK client is C.
type awsSink[C any] struct {
	aws *AWS
	// newClient makes the client of a destination's configuration, reaching the service at
	// ep's override when it has one.
	newClient func(cfg aws.Config, ep config.Sinks) C
	// put delivers the records to d with c.
	put func(ctx context.Context, c C, d *Destination, recs []Record) []error
}

// Deliver implements Sink: the destination's client is made on its first delivery and cached
// with it.
func (s awsSink[C]) Deliver(ctx context.Context, d *Destination, recs []Record) []error {
	c, err := d.cachedClient(func() (any, error) {
		cfg, err := s.aws.config(d)
		if err != nil {
			return nil, err
		}
		return s.newClient(cfg, s.aws.Endpoints), nil
	})
	if err != nil {
		return every(len(recs), err)
	}
	return s.put(ctx, c.(C), d, recs)
}

func (s awsSink[C]) builder() *AWS { return s.aws }

// putKinesis delivers with PutRecords; the partition key is the event id, so a consumer can
// drop duplicates by key.
func putKinesis(ctx context.Context, c *kinesis.Client, d *Destination, recs []Record) []error {
	// PutRecords: at most 500 records and 5 MiB (data plus partition keys) per call.
	return deliverChunked(recs, 500, 5<<20, 64, func(chunk []Record) []error {
		in := &kinesis.PutRecordsInput{StreamARN: &d.Target.ARN, Records: make([]kintypes.PutRecordsRequestEntry, len(chunk))}
		for j := range chunk {
			in.Records[j] = kintypes.PutRecordsRequestEntry{Data: chunk[j].Data, PartitionKey: &chunk[j].EventID}
		}
		out, err := c.PutRecords(ctx, in)
		if err != nil {
			return every(len(chunk), fmt.Errorf("kinesis: %w", err))
		}
		return recordErrors("kinesis", len(chunk), out.Records, func(r kintypes.PutRecordsResultEntry) (code, msg *string) {
			return r.ErrorCode, r.ErrorMessage
		})
	})
}

// putFirehose delivers with PutRecordBatch, one JSON document per line.
func putFirehose(ctx context.Context, c *firehose.Client, d *Destination, recs []Record) []error {
	// PutRecordBatch: at most 500 records and 4 MiB per call.
	return deliverChunked(recs, 500, 4<<20, 1, func(chunk []Record) []error {
		in := &firehose.PutRecordBatchInput{DeliveryStreamName: aws.String(d.Target.ResourceName())}
		for _, r := range chunk {
			in.Records = append(in.Records, fhtypes.Record{Data: append(append([]byte{}, r.Data...), '\n')})
		}
		out, err := c.PutRecordBatch(ctx, in)
		if err != nil {
			return every(len(chunk), fmt.Errorf("firehose: %w", err))
		}
		return recordErrors("firehose", len(chunk), out.RequestResponses, func(r fhtypes.PutRecordBatchResponseEntry) (code, msg *string) {
			return r.ErrorCode, r.ErrorMessage
		})
	})
}

// LogStream is the log stream the CloudWatch Logs sink writes to in a target's log group; it
// is created on first use.
const LogStream = "tunnelapi-events"

// putLogs delivers with PutLogEvents, in event time order as the API requires.
func putLogs(ctx context.Context, c *cloudwatchlogs.Client, d *Destination, recs []Record) []error {
	order := make([]int, len(recs))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(x, y int) bool { return recs[order[x]].Time.Before(recs[order[y]].Time) })
	sorted := make([]Record, len(recs))
	for i, o := range order {
		sorted[i] = recs[o]
	}
	group := d.Target.ResourceName()
	// PutLogEvents: at most 10,000 events and 1 MiB, counting 26 bytes per event.
	errs := deliverChunked(sorted, 10000, 1<<20, 26, func(chunk []Record) []error {
		in := &cloudwatchlogs.PutLogEventsInput{LogGroupName: aws.String(group), LogStreamName: aws.String(LogStream)}
		for _, r := range chunk {
			in.LogEvents = append(in.LogEvents, cwtypes.InputLogEvent{
				Message: aws.String(string(r.Data)), Timestamp: aws.Int64(r.Time.UnixMilli())})
		}
		out, err := c.PutLogEvents(ctx, in)
		var nf *cwtypes.ResourceNotFoundException
		if errors.As(err, &nf) {
			// The stream does not exist yet (first delivery to this group): create it, once.
			_, cerr := c.CreateLogStream(ctx, &cloudwatchlogs.CreateLogStreamInput{LogGroupName: aws.String(group), LogStreamName: aws.String(LogStream)})
			var exists *cwtypes.ResourceAlreadyExistsException
			if cerr != nil && !errors.As(cerr, &exists) {
				return every(len(chunk), fmt.Errorf("cloudwatch_logs: create log stream: %w", cerr))
			}
			out, err = c.PutLogEvents(ctx, in)
		}
		if err != nil {
			return every(len(chunk), fmt.Errorf("cloudwatch_logs: %w", err))
		}
		errs := make([]error, len(chunk))
		if rej := out.RejectedLogEventsInfo; rej != nil {
			for j := range chunk {
				switch {
				case rej.TooOldLogEventEndIndex != nil && int32(j) < *rej.TooOldLogEventEndIndex:
					errs[j] = errors.New("cloudwatch_logs: event too old for the log group")
				case rej.ExpiredLogEventEndIndex != nil && int32(j) < *rej.ExpiredLogEventEndIndex:
					errs[j] = errors.New("cloudwatch_logs: event older than the log group's retention")
				case rej.TooNewLogEventStartIndex != nil && int32(j) >= *rej.TooNewLogEventStartIndex:
					errs[j] = errors.New("cloudwatch_logs: event too far in the future")
				}
			}
		}
		return errs
	})
	out := make([]error, len(recs))
	for i, o := range order {
		out[o] = errs[i]
	}
	return out
}

// awsSinks are the sinks of the AWS target kinds.
func awsSinks(a *AWS) map[string]Sink {
	return map[string]Sink{
		eventsub.KindKinesis: awsSink[*kinesis.Client]{a, func(cfg aws.Config, ep config.Sinks) *kinesis.Client {
			return kinesis.NewFromConfig(cfg, func(o *kinesis.Options) { o.BaseEndpoint = endpoint(ep.Kinesis) })
		}, putKinesis},
		eventsub.KindFirehose: awsSink[*firehose.Client]{a, func(cfg aws.Config, ep config.Sinks) *firehose.Client {
			return firehose.NewFromConfig(cfg, func(o *firehose.Options) { o.BaseEndpoint = endpoint(ep.Firehose) })
		}, putFirehose},
		eventsub.KindCloudWatchLogs: awsSink[*cloudwatchlogs.Client]{a, func(cfg aws.Config, ep config.Sinks) *cloudwatchlogs.Client {
			return cloudwatchlogs.NewFromConfig(cfg, func(o *cloudwatchlogs.Options) { o.BaseEndpoint = endpoint(ep.Logs) })
		}, putLogs},
	}
}
