package benchkit

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tunnelapi/shared/platform/store"
)

// The baselines of request benchmarks are the request's own DynamoDB calls, captured on the
// request path (testkit.Counter.Last) and replayed bare: the same items, expressions and sizes,
// rewritten so the replay acts on a twin resource instead of the one the request changed. A
// replay asks for consumed capacity when the request's call did (the usage line's metering), so
// the baseline is the request's call as DynamoDB received it.

// ReplayTransact returns a copy of a captured transaction in which every string value has each
// key of subst replaced by its value, and every Put that creates an item (no condition, or
// attribute_not_exists) gets suffix on its sort key, as a request's new ids and event ids are
// new each time.
func ReplayTransact(in *dynamodb.TransactWriteItemsInput, subst map[string]string, suffix string) *dynamodb.TransactWriteItemsInput {
	out := &dynamodb.TransactWriteItemsInput{ReturnConsumedCapacity: in.ReturnConsumedCapacity}
	for _, it := range in.TransactItems {
		var c types.TransactWriteItem
		switch {
		case it.Put != nil:
			p := *it.Put
			p.Item = image(p.Item, subst)
			p.ExpressionAttributeValues = image(p.ExpressionAttributeValues, subst)
			if p.ConditionExpression == nil || strings.Contains(*p.ConditionExpression, "attribute_not_exists") {
				if sk, ok := p.Item[store.AttrSK].(*types.AttributeValueMemberS); ok {
					p.Item[store.AttrSK] = &types.AttributeValueMemberS{Value: sk.Value + suffix}
				}
			}
			c.Put = &p
		case it.Update != nil:
			u := *it.Update
			u.Key = image(u.Key, subst)
			u.ExpressionAttributeValues = image(u.ExpressionAttributeValues, subst)
			c.Update = &u
		case it.Delete != nil:
			d := *it.Delete
			d.Key = image(d.Key, subst)
			d.ExpressionAttributeValues = image(d.ExpressionAttributeValues, subst)
			c.Delete = &d
		case it.ConditionCheck != nil:
			k := *it.ConditionCheck
			k.Key = image(k.Key, subst)
			k.ExpressionAttributeValues = image(k.ExpressionAttributeValues, subst)
			c.ConditionCheck = &k
		}
		out.TransactItems = append(out.TransactItems, c)
	}
	return out
}

// ReplayBatchGet returns a copy of a captured batch read with subst applied to its keys.
func ReplayBatchGet(in *dynamodb.BatchGetItemInput, subst map[string]string) *dynamodb.BatchGetItemInput {
	out := &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{}, ReturnConsumedCapacity: in.ReturnConsumedCapacity}
	for table, ka := range in.RequestItems {
		c := ka
		c.Keys = nil
		for _, k := range ka.Keys {
			c.Keys = append(c.Keys, image(k, subst))
		}
		out.RequestItems[table] = c
	}
	return out
}

func image(m map[string]types.AttributeValue, subst map[string]string) map[string]types.AttributeValue {
	if m == nil {
		return nil
	}
	out := make(map[string]types.AttributeValue, len(m))
	for k, v := range m {
		out[k] = value(v, subst)
	}
	return out
}

func value(v types.AttributeValue, subst map[string]string) types.AttributeValue {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		s := v.Value
		for from, to := range subst {
			s = strings.ReplaceAll(s, from, to)
		}
		return &types.AttributeValueMemberS{Value: s}
	case *types.AttributeValueMemberM:
		return &types.AttributeValueMemberM{Value: image(v.Value, subst)}
	case *types.AttributeValueMemberL:
		l := make([]types.AttributeValue, len(v.Value))
		for i, x := range v.Value {
			l[i] = value(x, subst)
		}
		return &types.AttributeValueMemberL{Value: l}
	}
	return v
}

// Replayer replays a request's latest captured calls bare, the baseline of request benchmarks.
type Replayer struct {
	DB *store.DB
	// Last returns the input of the latest call of an operation on the request path
	// (testkit.Counter.Last).
	Last func(operation string) any
	// Capacity, when set, is the ReturnConsumedCapacity the replays send instead of the
	// captured call's: to measure what the ask itself costs.
	Capacity types.ReturnConsumedCapacity
	n        int
}

// Read replays the latest BatchGetItem with subst applied.
func (p *Replayer) Read(tb testing.TB, subst map[string]string) {
	in, ok := p.Last("BatchGetItem").(*dynamodb.BatchGetItemInput)
	if !ok {
		tb.Fatal("benchkit: no BatchGetItem captured")
	}
	c := ReplayBatchGet(in, subst)
	if p.Capacity != "" {
		c.ReturnConsumedCapacity = p.Capacity
	}
	if _, err := p.DB.Client.BatchGetItem(context.Background(), c); err != nil {
		tb.Fatal(err)
	}
}

// Write replays the latest TransactWriteItems with subst applied, its new items under fresh
// sort keys.
func (p *Replayer) Write(tb testing.TB, subst map[string]string) {
	in, ok := p.Last("TransactWriteItems").(*dynamodb.TransactWriteItemsInput)
	if !ok || len(in.TransactItems) == 0 {
		tb.Fatal("benchkit: no TransactWriteItems captured")
	}
	p.n++
	c := ReplayTransact(in, subst, "#bench"+strconv.Itoa(p.n))
	if p.Capacity != "" {
		c.ReturnConsumedCapacity = p.Capacity
	}
	if _, err := p.DB.Client.TransactWriteItems(context.Background(), c); err != nil {
		tb.Fatal(err)
	}
}
