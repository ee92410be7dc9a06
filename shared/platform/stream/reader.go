package stream

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	"tunnelapi/shared/platform/derrors"
	"tunnelapi/shared/platform/queue"
	"tunnelapi/shared/platform/store"
)

// Consumer is one reader of the table's stream, declared like an EventBridge Pipe: which
// records (Pattern), what each message says (InputTemplate), and where it goes (QueueURL).
type Consumer struct {
	// Name keys the consumer's checkpoints; two readers of one name share a position.
	Name          string
	Pattern       string
	InputTemplate string
	QueueURL      string
}

// API is the part of the DynamoDB Streams client a Reader uses; tests supply a fake stream.
type API interface {
	DescribeStream(ctx context.Context, in *dynamodbstreams.DescribeStreamInput, opts ...func(*dynamodbstreams.Options)) (*dynamodbstreams.DescribeStreamOutput, error)
	GetShardIterator(ctx context.Context, in *dynamodbstreams.GetShardIteratorInput, opts ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetShardIteratorOutput, error)
	GetRecords(ctx context.Context, in *dynamodbstreams.GetRecordsInput, opts ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetRecordsOutput, error)
}

// NewClient builds a Streams client from cfg with no network I/O; endpoint (DynamoDB Local's
// URL, which serves the Streams API too) may be empty in AWS.
func NewClient(cfg aws.Config, endpoint string, opts ...func(*dynamodbstreams.Options)) *dynamodbstreams.Client {
	all := []func(*dynamodbstreams.Options){func(o *dynamodbstreams.Options) {
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
	}}
	return dynamodbstreams.NewFromConfig(cfg, append(all, opts...)...)
}

// ErrCrashed is what Run returns when Fault stopped it (a simulated kill).
var ErrCrashed = errors.New("stream: reader stopped by an injected fault")

// Defaults of a Reader.
const (
	DefaultIdle    = 100 * time.Millisecond
	DefaultLimit   = 100
	DefaultRefresh = 5 * time.Second
	// checkpointTTL outlives the stream's 24-hour retention, after which a shard and so its
	// checkpoint are of no use.
	checkpointTTL = 48 * time.Hour
)

// Reader sends the records of the table's stream that match its consumer's pattern to the
// consumer's queue, in stream order per shard, and checkpoints each batch once SQS has
// accepted all of it.
type Reader struct {
	// DB is the table: its stream is read, and the checkpoints are kept in it.
	DB *store.DB
	// StreamARN is the stream to read; empty reads the table's latest stream.
	StreamARN string
	Streams   API
	SQS       queue.API
	Consumer  Consumer
	Log       *slog.Logger
	// Idle is the pause after a pass over the shards that found no record (DefaultIdle).
	Idle time.Duration
	// Limit is the records per GetRecords call (DefaultLimit; DynamoDB allows 1,000).
	Limit int32
	// Refresh is how often the shard list is read again (DefaultRefresh); a shard that
	// closes triggers a refresh at once.
	Refresh time.Duration
	// Fault, when set, is asked after each SendMessageBatch SQS accepted, with the number of
	// messages of the current batch sent so far; true stops Run there with ErrCrashed, before
	// the batch's checkpoint (fault injection in tests).
	Fault func(sent int) bool

	pattern  *Pattern
	template Template
	arn      string
	shards   map[string]*shard
	order    []string
}

type shard struct {
	id, parent string
	iter       *string
	after      string // the last acknowledged sequence number
	done       bool
}

// checkpoint is how far a consumer has read a shard.
type checkpoint struct {
	store.Key
	Seq  string `dynamodbav:"seq"`
	Done bool   `dynamodbav:"done"`
	TTL  int64  `dynamodbav:"ttl"`
}

func (r *Reader) log() *slog.Logger {
	if r.Log != nil {
		return r.Log
	}
	return slog.Default()
}

// Run reads until ctx ends (then it returns nil) or Fault stops it. It resumes from the
// consumer's checkpoints, or from the oldest record of shards it has none for.
func (r *Reader) Run(ctx context.Context) error {
	var err error
	if r.pattern, err = ParsePattern(r.Consumer.Pattern); err != nil {
		return err
	}
	if r.template, err = ParseTemplate(r.Consumer.InputTemplate); err != nil {
		return err
	}
	if err := r.start(ctx); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	idle := r.Idle
	if idle <= 0 {
		idle = DefaultIdle
	}
	refresh := r.Refresh
	if refresh <= 0 {
		refresh = DefaultRefresh
	}
	lastRefresh := time.Now()
	for ctx.Err() == nil {
		stale := time.Since(lastRefresh) > refresh
		got := 0
		for _, id := range r.order {
			s := r.shards[id]
			if s.done || !r.parentDone(s) {
				continue
			}
			n, err := r.step(ctx, s)
			if errors.Is(err, ErrCrashed) {
				return err
			}
			if err != nil {
				if ctx.Err() != nil {
					return nil
				}
				r.log().Warn("stream: read failed; retrying", "consumer", r.Consumer.Name, "shard", s.id, "err", err.Error())
				sleep(ctx, idle)
			}
			got += n
			stale = stale || s.done
		}
		if stale {
			if err := r.describe(ctx); err != nil && ctx.Err() == nil {
				r.log().Warn("stream: describe failed", "consumer", r.Consumer.Name, "err", err.Error())
			}
			lastRefresh = time.Now()
		}
		if got == 0 {
			sleep(ctx, idle)
		}
	}
	return nil
}

// start finds the stream, loads the checkpoints and lists the shards.
func (r *Reader) start(ctx context.Context) (err error) {
	defer derrors.Wrap(&err, "stream.start(%s)", r.Consumer.Name)
	r.arn = r.StreamARN
	for r.arn == "" {
		out, err := r.DB.Client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(r.DB.Table)})
		if err != nil {
			return fmt.Errorf("describe table %s: %w", r.DB.Table, err)
		}
		if spec := out.Table.StreamSpecification; spec == nil || !aws.ToBool(spec.StreamEnabled) || out.Table.LatestStreamArn == nil {
			return fmt.Errorf("table %s has no stream", r.DB.Table)
		}
		if spec := out.Table.StreamSpecification; spec.StreamViewType != ddbtypes.StreamViewTypeNewImage && spec.StreamViewType != ddbtypes.StreamViewTypeNewAndOldImages {
			return fmt.Errorf("table %s streams %s, not new images", r.DB.Table, spec.StreamViewType)
		}
		r.arn = aws.ToString(out.Table.LatestStreamArn)
	}
	items, err := r.DB.QueryAll(ctx, store.StreamCheckpoints(r.Consumer.Name))
	if err != nil {
		return fmt.Errorf("read the checkpoints: %w", err)
	}
	r.shards = map[string]*shard{}
	for _, it := range items {
		var c checkpoint
		if err := store.Unmarshal(it, &c); err != nil {
			return fmt.Errorf("decode a checkpoint: %w", err)
		}
		r.shards[c.SK] = &shard{id: c.SK, after: c.Seq, done: c.Done}
	}
	return r.describe(ctx)
}

// describe adds the shards the stream lists that the reader does not know yet. Shard ids sort
// in creation order, so parents come before their children in r.order.
func (r *Reader) describe(ctx context.Context) (err error) {
	defer derrors.Wrap(&err, "stream.describe(%s)", r.arn)
	in := &dynamodbstreams.DescribeStreamInput{StreamArn: aws.String(r.arn)}
	listed := map[string]bool{}
	for {
		out, err := r.Streams.DescribeStream(ctx, in)
		if err != nil {
			return err
		}
		for _, sh := range out.StreamDescription.Shards {
			id := aws.ToString(sh.ShardId)
			listed[id] = true
			s, ok := r.shards[id]
			if !ok {
				s = &shard{id: id}
				r.shards[id] = s
			}
			s.parent = aws.ToString(sh.ParentShardId)
		}
		if out.StreamDescription.LastEvaluatedShardId == nil {
			break
		}
		in.ExclusiveStartShardId = out.StreamDescription.LastEvaluatedShardId
	}
	// Shards the stream no longer lists were trimmed; their checkpoints expire by TTL.
	r.order = r.order[:0]
	for id := range r.shards {
		if listed[id] {
			r.order = append(r.order, id)
		} else {
			delete(r.shards, id)
		}
	}
	sort.Strings(r.order)
	return nil
}

// parentDone reports whether s may be read: its parent is finished or no longer listed.
func (r *Reader) parentDone(s *shard) bool {
	p, ok := r.shards[s.parent]
	return s.parent == "" || !ok || p.done
}

// step reads one batch of shard s, sends what matches, and checkpoints it. It returns how many
// records it read.
func (r *Reader) step(ctx context.Context, s *shard) (_ int, err error) {
	defer derrors.Wrap(&err, "stream.step(%s)", s.id)
	if s.iter == nil {
		in := &dynamodbstreams.GetShardIteratorInput{StreamArn: aws.String(r.arn), ShardId: aws.String(s.id),
			ShardIteratorType: types.ShardIteratorTypeTrimHorizon}
		if s.after != "" {
			in.ShardIteratorType, in.SequenceNumber = types.ShardIteratorTypeAfterSequenceNumber, aws.String(s.after)
		}
		out, err := r.Streams.GetShardIterator(ctx, in)
		var trimmed *types.TrimmedDataAccessException
		if errors.As(err, &trimmed) && s.after != "" {
			// The checkpoint is older than the stream's retention: what followed it is gone.
			r.log().Error("stream: records past the checkpoint were trimmed before they were read", "consumer", r.Consumer.Name, "shard", s.id)
			s.after = ""
			return 0, err
		}
		if err != nil {
			return 0, fmt.Errorf("get a shard iterator: %w", err)
		}
		s.iter = out.ShardIterator
	}
	limit := r.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}
	out, err := r.Streams.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: s.iter, Limit: aws.Int32(limit)})
	var expired *types.ExpiredIteratorException
	if errors.As(err, &expired) {
		s.iter = nil // a fresh one from the checkpoint
		return 0, nil
	}
	if err != nil {
		s.iter = nil // the next try starts again from the checkpoint
		return 0, fmt.Errorf("get records: %w", err)
	}
	// A batch in hand is sent and acknowledged even while stopping, as a Pipe would.
	bctx := context.WithoutCancel(ctx)
	var msgs []queue.Message
	for _, rec := range out.Records {
		ev := Event(rec)
		if !r.pattern.Match(ev) {
			continue
		}
		body, err := r.template.Apply(ev)
		if err != nil {
			// Never written by the service; a Pipe would retry it into its dead-letter queue.
			r.log().Error("stream: matching record without a body; skipped", "consumer", r.Consumer.Name,
				"sequence", aws.ToString(rec.Dynamodb.SequenceNumber), "err", err.Error())
			continue
		}
		msgs = append(msgs, queue.Message{ID: "r" + strconv.Itoa(len(msgs)), Body: body})
	}
	if err := r.send(ctx, bctx, msgs); err != nil {
		return 0, err
	}
	closed := out.NextShardIterator == nil
	if n := len(out.Records); n > 0 {
		s.after = aws.ToString(out.Records[n-1].Dynamodb.SequenceNumber)
	}
	if len(msgs) > 0 || closed {
		// Only batches that sent something (or finish a shard) are persisted: a checkpoint
		// is itself a write on the stream, which must not call for another.
		if err := r.checkpoint(bctx, s, closed); err != nil {
			return 0, err
		}
	}
	s.iter, s.done = out.NextShardIterator, closed
	return len(out.Records), nil
}

// send delivers msgs to the queue ten at a time, retrying what SQS refuses until it takes
// everything or ctx ends.
func (r *Reader) send(ctx, bctx context.Context, msgs []queue.Message) error {
	sent := 0
	for start := 0; start < len(msgs); start += queue.MaxBatch {
		chunk := msgs[start:min(start+queue.MaxBatch, len(msgs))]
		for attempt := 0; len(chunk) > 0; attempt++ {
			if attempt > 0 {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				sleep(ctx, time.Duration(min(attempt, 10))*100*time.Millisecond)
			}
			failed, err := queue.SendAll(bctx, r.SQS, r.Consumer.QueueURL, chunk)
			var again []queue.Message
			for _, m := range chunk {
				if _, bad := failed[m.ID]; bad {
					again = append(again, m)
				} else {
					sent++
				}
			}
			if len(again) > 0 {
				r.log().Warn("stream: send failed; retrying", "consumer", r.Consumer.Name, "failed", len(again), "err", errString(err))
			}
			chunk = again
		}
		if r.Fault != nil && r.Fault(sent) {
			return ErrCrashed
		}
	}
	return nil
}

func (r *Reader) checkpoint(ctx context.Context, s *shard, done bool) (err error) {
	defer derrors.Wrap(&err, "stream.checkpoint(%s)", s.id)
	c := checkpoint{Key: store.StreamCheckpointKey(r.Consumer.Name, s.id), Seq: s.after, Done: done,
		TTL: time.Now().Add(checkpointTTL).Unix()}
	return r.DB.Put(ctx, c)
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
