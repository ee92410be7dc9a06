package stream_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"tunnelapi/shared/platform/queue"
	"tunnelapi/shared/platform/stream"
	"tunnelapi/shared/testing/testkit"
)

// fakeStream is a DynamoDB stream whose shards the test closes and splits at will (DynamoDB
// Local never rolls a shard over). Iterators are "<shard>|<position>".
type fakeStream struct {
	mu      sync.Mutex
	shards  []*fakeShard
	seq     int
	expire  map[string]bool // shards whose next GetRecords fails with an expired iterator
	records int
}

type fakeShard struct {
	id, parent string
	recs       []types.Record
	closed     bool
}

func (f *fakeStream) shard(id string) *fakeShard {
	for _, s := range f.shards {
		if s.id == id {
			return s
		}
	}
	return nil
}

// add appends records to shard id (creating it under parent), pk "O#1" for bodies and any
// other partition for records the filter must drop.
func (f *fakeStream) add(id, parent string, keys ...string) {
	s := f.shard(id)
	if s == nil {
		s = &fakeShard{id: id, parent: parent}
		f.shards = append(f.shards, s)
	}
	for _, k := range keys {
		f.seq++
		pk, body := "O#1", k
		if strings.HasPrefix(k, "A#") {
			pk, body = k, "ignored"
		}
		s.recs = append(s.recs, types.Record{EventName: types.OperationTypeInsert, Dynamodb: &types.StreamRecord{
			SequenceNumber: aws.String(fmt.Sprintf("%021d", f.seq)),
			Keys:           map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: pk}, "sk": &types.AttributeValueMemberS{Value: k}},
			NewImage: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: pk},
				"payload": &types.AttributeValueMemberS{Value: body}}}})
	}
}

func (f *fakeStream) DescribeStream(_ context.Context, in *dynamodbstreams.DescribeStreamInput, _ ...func(*dynamodbstreams.Options)) (*dynamodbstreams.DescribeStreamOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	// One shard per page, so that paging is exercised.
	i := 0
	if in.ExclusiveStartShardId != nil {
		for i < len(f.shards) && f.shards[i].id != *in.ExclusiveStartShardId {
			i++
		}
		i++
	}
	d := &types.StreamDescription{}
	if i < len(f.shards) {
		s := f.shards[i]
		d.Shards = []types.Shard{{ShardId: aws.String(s.id), ParentShardId: aws.String(s.parent)}}
		if s.parent == "" {
			d.Shards[0].ParentShardId = nil
		}
		if i+1 < len(f.shards) {
			d.LastEvaluatedShardId = aws.String(s.id)
		}
	}
	return &dynamodbstreams.DescribeStreamOutput{StreamDescription: d}, nil
}

func (f *fakeStream) GetShardIterator(_ context.Context, in *dynamodbstreams.GetShardIteratorInput, _ ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetShardIteratorOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.shard(*in.ShardId)
	pos := 0
	if in.ShardIteratorType == types.ShardIteratorTypeAfterSequenceNumber {
		pos = -1
		for i, r := range s.recs {
			if *r.Dynamodb.SequenceNumber == *in.SequenceNumber {
				pos = i + 1
			}
		}
		if pos < 0 {
			return nil, fmt.Errorf("no sequence number %s in %s", *in.SequenceNumber, s.id)
		}
	}
	return &dynamodbstreams.GetShardIteratorOutput{ShardIterator: aws.String(s.id + "|" + strconv.Itoa(pos))}, nil
}

func (f *fakeStream) GetRecords(_ context.Context, in *dynamodbstreams.GetRecordsInput, _ ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetRecordsOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	id, p, _ := strings.Cut(*in.ShardIterator, "|")
	if f.expire[id] {
		delete(f.expire, id)
		return nil, &types.ExpiredIteratorException{Message: aws.String("expired")}
	}
	pos, _ := strconv.Atoi(p)
	s := f.shard(id)
	end := min(pos+int(*in.Limit), len(s.recs))
	out := &dynamodbstreams.GetRecordsOutput{Records: s.recs[pos:end]}
	f.records += end - pos
	if !s.closed || end < len(s.recs) {
		out.NextShardIterator = aws.String(id + "|" + strconv.Itoa(end))
	}
	return out, nil
}

// sink is an SQS stand-in for the reader's sends: it keeps the bodies in order.
type sink struct {
	queue.API
	mu     sync.Mutex
	bodies []string
}

func (s *sink) SendMessageBatch(_ context.Context, in *sqs.SendMessageBatchInput, _ ...func(*sqs.Options)) (*sqs.SendMessageBatchOutput, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := &sqs.SendMessageBatchOutput{}
	for _, e := range in.Entries {
		s.bodies = append(s.bodies, *e.MessageBody)
		out.Successful = append(out.Successful, sqstypes.SendMessageBatchResultEntry{Id: e.Id})
	}
	return out, nil
}

func (s *sink) got() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.bodies)
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func run(t *testing.T, r *stream.Reader) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	return func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("reader: %v", err)
		}
	}
}

// Shards close and split under the reader (a rollover): every record is sent once, a child's
// records only after all of its parent's, an expired iterator resumes from the checkpoint, and
// a new reader of the same consumer resumes where the last one acknowledged.
func TestReaderFollowsShardRollover(t *testing.T) {
	s := testkit.Start(t)
	f := &fakeStream{expire: map[string]bool{}}
	f.add("shardId-1", "", "m1", "A#x", "m2", "m3", "m4", "m5")
	out := &sink{}
	c := stream.Events.To("queue")
	c.Name = "rollover"
	reader := func() *stream.Reader {
		return &stream.Reader{DB: s.DB, StreamARN: "arn:fake", Streams: f, SQS: out, Consumer: c,
			Idle: time.Millisecond, Limit: 2, Refresh: 10 * time.Millisecond}
	}
	stop := run(t, reader())
	eventually(t, "m1..m5", func() bool { return len(out.got()) == 5 })

	f.mu.Lock()
	// The parent gets more records (several batches) and closes while its two children
	// already exist.
	f.add("shardId-1", "", "m6a", "m6b", "m6c", "m6d", "m6")
	f.shard("shardId-1").closed = true
	f.add("shardId-2", "shardId-1", "m7", "A#y", "m8")
	f.add("shardId-3", "shardId-1", "m9")
	f.mu.Unlock()
	eventually(t, "m6..m9", func() bool { return len(out.got()) == 13 })

	f.mu.Lock()
	f.expire["shardId-2"] = true
	f.add("shardId-2", "", "m10")
	f.shard("shardId-2").closed = true
	f.add("shardId-4", "shardId-2", "m11")
	f.mu.Unlock()
	eventually(t, "m10, m11", func() bool { return len(out.got()) == 15 })
	stop()

	// Another reader of the same consumer: it sends only what is new.
	f.mu.Lock()
	f.add("shardId-3", "", "m12")
	f.mu.Unlock()
	stop = run(t, reader())
	eventually(t, "m12", func() bool { return len(out.got()) >= 16 })
	time.Sleep(50 * time.Millisecond)
	stop()

	got := out.got()
	pos := map[string]int{}
	for i, b := range got {
		if _, dup := pos[b]; dup {
			t.Fatalf("%s sent twice: %v", b, got)
		}
		pos[b] = i
	}
	if len(got) != 16 || slices.Contains(got, "ignored") {
		t.Fatalf("sent %v", got)
	}
	for i := 1; i <= 5; i++ {
		if pos["m"+strconv.Itoa(i)] != i-1 {
			t.Fatalf("m1..m5 out of order: %v", got)
		}
	}
	for _, child := range []string{"m7", "m8", "m9", "m10", "m11"} {
		if pos[child] < pos["m6"] {
			t.Fatalf("%s (child shard) sent before m6 (its parent's last): %v", child, got)
		}
	}
	if pos["m11"] < pos["m10"] || pos["m8"] < pos["m7"] {
		t.Fatalf("a shard's records out of order: %v", got)
	}
}

// A record that matches but has no body is skipped (a Pipe would dead-letter it) without
// holding back the records after it.
func TestReaderSkipsMatchingRecordWithoutBody(t *testing.T) {
	s := testkit.Start(t)
	f := &fakeStream{expire: map[string]bool{}}
	f.add("shardId-1", "", "m1")
	f.shards[0].recs[0].Dynamodb.NewImage = nil
	f.add("shardId-1", "", "m2")
	out := &sink{}
	c := stream.Events.To("queue")
	c.Name = "nobody"
	stop := run(t, &stream.Reader{DB: s.DB, StreamARN: "arn:fake", Streams: f, SQS: out, Consumer: c, Idle: time.Millisecond, Log: testkit.Logger()})
	eventually(t, "m2", func() bool { return len(out.got()) == 1 })
	stop()
	if got := out.got(); got[0] != "m2" {
		t.Fatalf("sent %v", got)
	}
}
