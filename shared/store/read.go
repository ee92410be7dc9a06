package store

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Item is a raw item as DynamoDB returns it; nil means the item does not exist.
type Item = map[string]types.AttributeValue

// Get reads one item with a consistent read; ErrNotFound when absent.
func (db *DB) Get(ctx context.Context, k Key, out any) error {
	res, err := db.Client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(db.Table), Key: k.AV(), ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return err
	}
	if res.Item == nil {
		return ErrNotFound
	}
	return Unmarshal(res.Item, out)
}

// GetMany reads keys in one consistent round trip (TransactGetItems) and returns the items
// in the same order, nil for each that does not exist.
func (db *DB) GetMany(ctx context.Context, keys ...Key) ([]Item, error) {
	in := &dynamodb.TransactGetItemsInput{TransactItems: make([]types.TransactGetItem, len(keys))}
	for i, k := range keys {
		in.TransactItems[i] = types.TransactGetItem{Get: &types.Get{TableName: aws.String(db.Table), Key: k.AV()}}
	}
	res, err := db.Client.TransactGetItems(ctx, in)
	if err != nil {
		return nil, err
	}
	out := make([]Item, len(keys))
	for i, r := range res.Responses {
		if i < len(out) && len(r.Item) > 0 {
			out[i] = r.Item
		}
	}
	return out, nil
}

// Unmarshal decodes an item into a struct with dynamodbav tags.
func Unmarshal(it Item, out any) error {
	if err := attributevalue.UnmarshalMap(it, out); err != nil {
		return fmt.Errorf("store: unmarshal: %w", err)
	}
	return nil
}

// PageQuery reads one page of a collection newest first: at most limit items whose sort key is
// strictly below before (all when before is ""). more reports whether older items remain.
func (db *DB) PageQuery(ctx context.Context, partition, before string, limit int) (items []Item, more bool, err error) {
	kc := expression.Key(AttrPK).Equal(expression.Value(partition))
	if before != "" {
		kc = kc.And(expression.Key(AttrSK).LessThan(expression.Value(before)))
	}
	e, err := expression.NewBuilder().WithKeyCondition(kc).Build()
	if err != nil {
		return nil, false, err
	}
	// One extra item tells whether a next page exists without a second query.
	res, err := db.Client.Query(ctx, &dynamodb.QueryInput{
		TableName:                 aws.String(db.Table),
		KeyConditionExpression:    e.KeyCondition(),
		ExpressionAttributeNames:  e.Names(),
		ExpressionAttributeValues: e.Values(),
		ScanIndexForward:          aws.Bool(false),
		ConsistentRead:            aws.Bool(true),
		Limit:                     aws.Int32(int32(limit + 1)),
	})
	if err != nil {
		return nil, false, err
	}
	items = res.Items
	if len(items) > limit {
		return items[:limit], true, nil
	}
	return items, false, nil
}

// QueryAll reads every item of a partition (for small, bounded collections such as the
// children of one parent). It pages internally.
func (db *DB) QueryAll(ctx context.Context, partition string) ([]Item, error) {
	kc := expression.Key(AttrPK).Equal(expression.Value(partition))
	e, err := expression.NewBuilder().WithKeyCondition(kc).Build()
	if err != nil {
		return nil, err
	}
	in := &dynamodb.QueryInput{
		TableName:                 aws.String(db.Table),
		KeyConditionExpression:    e.KeyCondition(),
		ExpressionAttributeNames:  e.Names(),
		ExpressionAttributeValues: e.Values(),
		ConsistentRead:            aws.Bool(true),
	}
	var out []Item
	p := dynamodb.NewQueryPaginator(db.Client, in)
	for p.HasMorePages() {
		res, err := p.NextPage(ctx)
		if err != nil {
			return nil, err
		}
		out = append(out, res.Items...)
	}
	return out, nil
}
