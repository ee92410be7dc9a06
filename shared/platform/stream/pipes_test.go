package stream_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	streamtypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	"tunnelapi/shared/app"
	"tunnelapi/shared/platform/config"
	"tunnelapi/shared/platform/stream"
	"tunnelapi/shared/testing/testkit"
)

// root is the checkout, from this package.
const root = "../../.."

// templatePipe is what template.yaml declares for a pipe: its filter and input template
// compiled by the stream package, and its source and target.
type templatePipe struct {
	pattern       string
	inputTemplate string
	source        any
	target        any
}

func templatePipes(t *testing.T) (map[string]templatePipe, map[string]any) {
	resources := testkit.TemplateMap(t, filepath.Join(root, "template.yaml"))["Resources"].(map[string]any)
	out := map[string]templatePipe{}
	for name, res := range resources {
		r := res.(map[string]any)
		if r["Type"] != "AWS::Pipes::Pipe" {
			continue
		}
		filters, _ := testkit.Dig(r, "Properties", "SourceParameters", "FilterCriteria", "Filters").([]any)
		if len(filters) != 1 {
			t.Fatalf("%s: %d filters, want 1", name, len(filters))
		}
		pattern, _ := filters[0].(map[string]any)["Pattern"].(string)
		tmpl, _ := testkit.Dig(r, "Properties", "TargetParameters", "InputTemplate").(string)
		out[name] = templatePipe{pattern: pattern, inputTemplate: tmpl,
			source: testkit.Dig(r, "Properties", "Source"), target: testkit.Dig(r, "Properties", "Target")}
	}
	return out, resources
}

func sameJSON(t *testing.T, a, b string) bool {
	var x, y any
	if err := json.Unmarshal([]byte(a), &x); err != nil {
		t.Fatalf("%q: %v", a, err)
	}
	if err := json.Unmarshal([]byte(b), &y); err != nil {
		t.Fatalf("%q: %v", b, err)
	}
	return reflect.DeepEqual(x, y)
}

// Each Pipe of template.yaml is a consumer in app.Pipes with the same filter pattern and input
// template, which the stream package can evaluate; its source is the table's stream (new images)
// and its target the consumer's queue. The reverse too: no consumer without its Pipe.
func TestPipesMatchTemplate(t *testing.T) {
	pipes, resources := templatePipes(t)
	if v := testkit.Dig(resources["Table"].(map[string]any), "Properties", "StreamSpecification", "StreamViewType"); v != "NEW_IMAGE" {
		t.Errorf("the table streams %v, want NEW_IMAGE (consumers read the committed item from the record)", v)
	}
	seen := map[string]bool{}
	for _, p := range app.Pipes {
		seen[p.Name] = true
		tp, ok := pipes[p.Name]
		if !ok {
			t.Errorf("template.yaml has no AWS::Pipes::Pipe %s", p.Name)
			continue
		}
		if !sameJSON(t, tp.pattern, p.Consumer.Pattern) {
			t.Errorf("%s: template pattern %s, the local reader's %s", p.Name, tp.pattern, p.Consumer.Pattern)
		}
		if tp.inputTemplate != p.Consumer.InputTemplate {
			t.Errorf("%s: template input template %q, the local reader's %q", p.Name, tp.inputTemplate, p.Consumer.InputTemplate)
		}
		if _, err := stream.ParsePattern(tp.pattern); err != nil {
			t.Errorf("%s: %v", p.Name, err)
		}
		if _, err := stream.ParseTemplate(tp.inputTemplate); err != nil {
			t.Errorf("%s: %v", p.Name, err)
		}
		if want := map[string]any{"Fn::GetAtt": []any{"Table", "StreamArn"}}; !reflect.DeepEqual(tp.source, want) {
			t.Errorf("%s: source %v, want the table's stream", p.Name, tp.source)
		}
		if want := map[string]any{"Fn::GetAtt": []any{p.Queue, "Arn"}}; !reflect.DeepEqual(tp.target, want) {
			t.Errorf("%s: target %v, want %s", p.Name, tp.target, p.Queue)
		}
	}
	for name := range pipes {
		if !seen[name] {
			t.Errorf("template.yaml declares the Pipe %s, which app.Pipes lacks (nothing runs it locally)", name)
		}
	}
}

// agree fails unless pipe p's local consumer and its Pipe in template.yaml select the same records
// and make the same message bodies of them; it returns how many records they select.
func agree(t *testing.T, p app.Pipe, tp templatePipe, records []streamtypes.Record) (selected int) {
	t.Helper()
	parse := func(pattern, template string) (*stream.Pattern, stream.Template) {
		pt, err := stream.ParsePattern(pattern)
		if err != nil {
			t.Fatalf("%s: %v", p.Name, err)
		}
		tm, err := stream.ParseTemplate(template)
		if err != nil {
			t.Fatalf("%s: %v", p.Name, err)
		}
		return pt, tm
	}
	cloudPattern, cloudTemplate := parse(tp.pattern, tp.inputTemplate)
	localPattern, localTemplate := parse(p.Consumer.Pattern, p.Consumer.InputTemplate)
	for _, rec := range records {
		removed := rec
		removed.EventName = streamtypes.OperationTypeRemove
		removed.Dynamodb = &streamtypes.StreamRecord{}
		*removed.Dynamodb = *rec.Dynamodb
		removed.Dynamodb.OldImage, removed.Dynamodb.NewImage = rec.Dynamodb.NewImage, nil
		for _, r := range []streamtypes.Record{rec, removed} {
			ev := stream.Event(r)
			cloud, local := cloudPattern.Match(ev), localPattern.Match(ev)
			if cloud != local {
				t.Fatalf("%s: the template's filter says %v, the local one %v, for the %s of record %s", p.Name, cloud, local, r.EventName, aws.ToString(r.Dynamodb.SequenceNumber))
			}
			if !cloud {
				continue
			}
			selected++
			cb, cerr := cloudTemplate.Apply(ev)
			lb, lerr := localTemplate.Apply(ev)
			if cb != lb || (cerr == nil) != (lerr == nil) {
				t.Fatalf("%s: the template makes %q (%v), the local consumer %q (%v)", p.Name, cb, cerr, lb, lerr)
			}
		}
	}
	return selected
}

// Every Pipe of template.yaml selects and shapes the records of real mutations (some for each
// Pipe) exactly as its local consumer does. The events Pipe's filter, taken from template.yaml
// and applied to every record DynamoDB
// Local's stream has after real mutations, selects exactly the committed events, and its input
// template yields each event's envelope: what the events queue receives in AWS is what the
// local reader sends. A TTL expiry of an outbox item (a REMOVE) does not pass.
func TestEventsPipeFilterOnRealStreamRecords(t *testing.T) {
	pipes, _ := templatePipes(t)
	tp := pipes["EventsPipe"]
	pattern, err := stream.ParsePattern(tp.pattern)
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := stream.ParseTemplate(tp.inputTemplate)
	if err != nil {
		t.Fatal(err)
	}
	s := testkit.StartWithEvents(t, app.Families...)
	a := s.NewAccount(t)
	id := a.Do(t, "POST", "/api_keys", map[string]any{"description": "streamed"}).Expect(t, http.StatusCreated)["id"].(string)
	a.Do(t, "PATCH", "/api_keys/"+id, map[string]any{"description": "again"}).Expect(t, http.StatusOK)
	pol := a.Do(t, "POST", "/ip_policies", map[string]any{}).Expect(t, http.StatusCreated)["id"].(string)
	a.Do(t, "DELETE", "/ip_policies/"+pol, nil).Expect(t, http.StatusNoContent)
	a.Do(t, "DELETE", "/api_keys/"+id, nil).Expect(t, http.StatusNoContent)
	// A reserved domain with managed certificates: its create also commits a certificate job.
	a.Do(t, "POST", "/reserved_domains", map[string]any{"domain": fmt.Sprintf("pipes-%d.example.com", time.Now().UnixNano()),
		"certificate_management_policy": map[string]any{"authority": "letsencrypt"}}).Expect(t, http.StatusCreated)

	ctx := t.Context()
	desc, err := s.DB.Client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(s.DB.Table)})
	if err != nil {
		t.Fatal(err)
	}
	c := testkit.Config(t, config.LoadHTTP)
	sc := stream.NewClient(c.AWSConfig(), c.DynamoDBEndpoint)
	ds, err := sc.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: desc.Table.LatestStreamArn})
	if err != nil {
		t.Fatal(err)
	}
	var records []streamtypes.Record
	for _, sh := range ds.StreamDescription.Shards {
		it, err := sc.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{StreamArn: desc.Table.LatestStreamArn,
			ShardId: sh.ShardId, ShardIteratorType: streamtypes.ShardIteratorTypeTrimHorizon})
		if err != nil {
			t.Fatal(err)
		}
		for iter := it.ShardIterator; iter != nil; {
			out, err := sc.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: iter})
			if err != nil {
				t.Fatal(err)
			}
			records = append(records, out.Records...)
			if len(out.Records) == 0 {
				break // the open shard's end, for now
			}
			iter = out.NextShardIterator
		}
	}
	// Every Pipe: the template's filter and input template decide and shape each record (and
	// its removal, as a TTL expiry would stream it) exactly as its local consumer does.
	for _, p := range app.Pipes {
		if agree(t, p, pipes[p.Name], records) == 0 {
			t.Errorf("%s selects none of the %d records: the mutations above make nothing it carries", p.Name, len(records))
		}
	}
	want := map[string]string{}
	for _, it := range s.Outbox(t) {
		want[it.EventID] = it.Payload
	}
	got := map[string]bool{}
	for _, rec := range records {
		ev := stream.Event(rec)
		if !pattern.Match(ev) {
			continue
		}
		body, err := tmpl.Apply(ev)
		if err != nil {
			t.Fatalf("a matched record has no body: %v", err)
		}
		var env struct {
			EventID string `json:"event_id"`
		}
		if err := json.Unmarshal([]byte(body), &env); err != nil || want[env.EventID] != body {
			t.Fatalf("a matched record's body is not a committed event's envelope: %s", body)
		}
		got[env.EventID] = true
		// The same item expiring by TTL: a REMOVE, which must not pass.
		rec.EventName = streamtypes.OperationTypeRemove
		rec.Dynamodb.OldImage, rec.Dynamodb.NewImage = rec.Dynamodb.NewImage, nil
		rec.UserIdentity = &streamtypes.Identity{Type: aws.String("Service"), PrincipalId: aws.String("dynamodb.amazonaws.com")}
		if pattern.Match(stream.Event(rec)) {
			t.Fatal("the TTL removal of an outbox item passes the filter")
		}
	}
	if len(want) != 6 || len(got) != len(want) {
		t.Fatalf("%d of %d records passed the filter, for %d committed events (want 6)", len(got), len(records), len(want))
	}
}
