package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tunnelapi/shared/platform/derrors"
)

// Item is a raw item as DynamoDB returns it; nil means the item does not exist.
type Item = map[string]types.AttributeValue

// Get reads one item with a consistent read; ErrNotFound when absent.
func (db *DB) Get(ctx context.Context, k Key, out any) (err error) {
	defer derrors.Wrap(&err, "store.Get(%s %s)", k.PK, k.SK)
	res, err := db.Client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(db.Table), Key: k.AV(), ConsistentRead: aws.Bool(true),
		ReturnConsumedCapacity: capacity(ctx),
	})
	if err != nil {
		return err
	}
	addRead(ctx, one(res.ConsumedCapacity)...)
	noteReads(ctx, []Key{k}, []Item{res.Item})
	if res.Item == nil {
		return ErrNotFound // wrapped too: callers test it with IsNotFound
	}
	return Unmarshal(res.Item, out)
}

// GetMany reads keys in one round trip (BatchGetItem, every item with a consistent read) and
// returns the items in the same order, nil for each that does not exist. Each item is read
// strongly consistently, though not as one snapshot: callers read independent items (a token,
// its account, a resource), so a change landing between two of them is simply ordered after the
// first. A batch costs half the read units of TransactGetItems. Keys DynamoDB leaves unprocessed
// (throttling) are asked for again.
func (db *DB) GetMany(ctx context.Context, keys ...Key) (_ []Item, err error) {
	defer derrors.Wrap(&err, "store.GetMany(%d keys)", len(keys))
	if len(keys) > MaxBatchGet {
		return nil, fmt.Errorf("%d keys in one read, more than %d", len(keys), MaxBatchGet)
	}
	out := make([]Item, len(keys))
	idx := indexKeys(keys)
	req := make([]map[string]types.AttributeValue, 0, len(keys))
	for i, k := range keys {
		if idx.first(k) == i { // a batch may not name a key twice
			req = append(req, k.AV())
		}
	}
	for attempt := 0; len(req) > 0; attempt++ {
		if attempt == 5 {
			return nil, fmt.Errorf("%d reads left unprocessed", len(req))
		}
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(time.Duration(attempt*attempt) * 10 * time.Millisecond):
			}
		}
		res, err := db.Client.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{
			db.Table: {Keys: req, ConsistentRead: aws.Bool(true)},
		}, ReturnConsumedCapacity: capacity(ctx)})
		if err != nil {
			return nil, err
		}
		addRead(ctx, res.ConsumedCapacity...)
		for _, it := range res.Responses[db.Table] {
			if i := idx.first(keyOf(it)); i < len(keys) {
				out[i] = it
			}
		}
		req = res.UnprocessedKeys[db.Table].Keys
	}
	for i, k := range keys {
		if f := idx.first(k); f != i {
			out[i] = out[f]
		}
	}
	noteReads(ctx, keys, out)
	return out, nil
}

// keyIndex finds the first position of a key in a batch: by scan for the few keys of a
// request's read (on every request, where building a map costs more than the scans), by map for
// larger batches.
type keyIndex struct {
	keys  []Key
	byKey map[Key]int
}

// scanKeys is the largest batch keyIndex scans.
const scanKeys = 8

func indexKeys(keys []Key) keyIndex {
	x := keyIndex{keys: keys}
	if len(keys) > scanKeys {
		x.byKey = make(map[Key]int, len(keys))
		for i := len(keys) - 1; i >= 0; i-- {
			x.byKey[keys[i]] = i
		}
	}
	return x
}

// first returns the index of k's first occurrence (len(keys) if none).
func (x keyIndex) first(k Key) int {
	if x.byKey != nil {
		if i, ok := x.byKey[k]; ok {
			return i
		}
		return len(x.keys)
	}
	for i := range x.keys {
		if x.keys[i] == k {
			return i
		}
	}
	return len(x.keys)
}

// MaxBatchGet is DynamoDB's limit on the keys of one BatchGetItem.
const MaxBatchGet = 100

// Unmarshal decodes an item into a struct with dynamodbav tags.
func Unmarshal(it Item, out any) (err error) {
	defer derrors.Wrap(&err, "store.Unmarshal")
	return attributevalue.UnmarshalMap(it, out)
}

// PageQuery reads one page of a collection newest first: at most limit items whose sort key is
// strictly below before (all when before is ""). more reports whether older items remain.
// DynamoDB ends a Query's answer at 1 MB of items whatever its Limit; PageQuery asks again from
// where an answer ended until it holds the page and the item after it, so a page of large items
// is whole. A page of small items is one Query.
func (db *DB) PageQuery(ctx context.Context, partition, before string, limit int) (items []Item, more bool, err error) {
	defer derrors.Wrap(&err, "store.PageQuery(%s before %q)", partition, before)
	return db.pageQuery(ctx, partition, before, limit, true)
}

// PageQueryStart reads the start of a page as PageQuery does, from one of DynamoDB's answers:
// when that answer ended at 1 MB short of limit items, it returns those with more true, and the
// caller continues after the last one if its page has room. A caller whose page ends by size
// too (a list page ends before api.MaxPageBytes) so reads at most one answer past what it
// shows, rather than limit items of up to 400 KB each. It asks again only for the one item that
// tells more when the answer ended at exactly limit items.
func (db *DB) PageQueryStart(ctx context.Context, partition, before string, limit int) (items []Item, more bool, err error) {
	defer derrors.Wrap(&err, "store.PageQueryStart(%s before %q)", partition, before)
	return db.pageQuery(ctx, partition, before, limit, false)
}

// pageQuery is PageQuery when whole, else PageQueryStart.
func (db *DB) pageQuery(ctx context.Context, partition, before string, limit int, whole bool) (items []Item, more bool, err error) {
	kc := expression.Key(AttrPK).Equal(expression.Value(partition))
	if before != "" {
		kc = kc.And(expression.Key(AttrSK).LessThan(expression.Value(before)))
	}
	e, err := expression.NewBuilder().WithKeyCondition(kc).Build()
	if err != nil {
		return nil, false, err
	}
	in := &dynamodb.QueryInput{
		TableName:                 aws.String(db.Table),
		KeyConditionExpression:    e.KeyCondition(),
		ExpressionAttributeNames:  e.Names(),
		ExpressionAttributeValues: e.Values(),
		ScanIndexForward:          aws.Bool(false),
		ConsistentRead:            aws.Bool(true),
		ReturnConsumedCapacity:    capacity(ctx),
	}
	for {
		// One item past the page tells whether a next page exists without another query.
		ask := *in // each call its own input
		ask.Limit = aws.Int32(int32(limit + 1 - len(items)))
		res, err := db.Client.Query(ctx, &ask)
		if err != nil {
			return nil, false, err
		}
		addRead(ctx, one(res.ConsumedCapacity)...)
		if items == nil {
			items = res.Items
		} else {
			items = append(items, res.Items...)
		}
		switch {
		case len(items) > limit:
			return items[:limit], true, nil
		case res.LastEvaluatedKey == nil:
			return items, false, nil
		case !whole && len(items) < limit:
			return items, true, nil
		}
		// The answer ended by size: the rest of the page follows its last item.
		in.ExclusiveStartKey = res.LastEvaluatedKey
	}
}

// QueryAll reads every item of a partition (for small, bounded collections such as the
// children of one parent), following DynamoDB's answers to the end. attrs, when given, limits
// the attributes read.
func (db *DB) QueryAll(ctx context.Context, partition string, attrs ...string) (_ []Item, err error) {
	defer derrors.Wrap(&err, "store.QueryAll(%s)", partition)
	return db.queryAll(ctx, expression.Key(AttrPK).Equal(expression.Value(partition)), 0, attrs)
}

// QueryBelow reads at most limit items of a partition whose sort key is below bound, in sort
// key order: the items of a time-ordered partition up to a time, and nothing after it.
func (db *DB) QueryBelow(ctx context.Context, partition, bound string, limit int) (_ []Item, err error) {
	defer derrors.Wrap(&err, "store.QueryBelow(%s)", partition)
	return db.queryAll(ctx, expression.Key(AttrPK).Equal(expression.Value(partition)).And(expression.Key(AttrSK).LessThan(expression.Value(bound))), limit, nil)
}

// queryAll reads the items of kc in sort key order, at most limit of them when limit > 0,
// following DynamoDB's answers (each at most 1 MB) and asking each for no more than remain.
func (db *DB) queryAll(ctx context.Context, kc expression.KeyConditionBuilder, limit int, attrs []string) ([]Item, error) {
	b := expression.NewBuilder().WithKeyCondition(kc)
	if len(attrs) > 0 {
		proj := expression.NamesList(expression.Name(attrs[0]))
		for _, a := range attrs[1:] {
			proj = proj.AddNames(expression.Name(a))
		}
		b = b.WithProjection(proj)
	}
	e, err := b.Build()
	if err != nil {
		return nil, err
	}
	in := &dynamodb.QueryInput{
		TableName:                 aws.String(db.Table),
		KeyConditionExpression:    e.KeyCondition(),
		ProjectionExpression:      e.Projection(),
		ExpressionAttributeNames:  e.Names(),
		ExpressionAttributeValues: e.Values(),
		ConsistentRead:            aws.Bool(true),
		ReturnConsumedCapacity:    capacity(ctx),
	}
	var out []Item
	for {
		ask := *in
		if limit > 0 {
			ask.Limit = aws.Int32(int32(limit - len(out)))
		}
		res, err := db.Client.Query(ctx, &ask)
		if err != nil {
			return nil, err
		}
		addRead(ctx, one(res.ConsumedCapacity)...)
		out = append(out, res.Items...)
		if res.LastEvaluatedKey == nil || (limit > 0 && len(out) >= limit) {
			return out, nil
		}
		in.ExclusiveStartKey = res.LastEvaluatedKey
	}
}

// Put writes item unconditionally and outside any transaction. It is for bookkeeping that
// belongs to no account and needs no guard (the stream reader's checkpoints), never for
// resources, which are written in transactions.
func (db *DB) Put(ctx context.Context, item any) (err error) {
	defer derrors.Wrap(&err, "store.Put")
	av, err := attributevalue.MarshalMap(item)
	if err != nil {
		return err
	}
	res, err := db.Client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(db.Table), Item: av, ReturnConsumedCapacity: capacity(ctx)})
	if err != nil {
		return err
	}
	addWrite(ctx, one(res.ConsumedCapacity)...)
	return nil
}

// Add adds delta to the number attribute attr of the item at k (an absent item or attribute
// counts as 0), sets the item's expiry (attribute ttl) to expires and returns the new value: one
// UpdateItem, not a transaction, as DynamoDB applies concurrent additions to one item one after
// another. It is for counters outside any resource (the rate limit's), never for resources.
func (db *DB) Add(ctx context.Context, k Key, attr string, delta int64, expires time.Time) (n int64, err error) {
	defer derrors.Wrap(&err, "store.Add(%s %s)", k.PK, k.SK)
	res, err := db.Client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                aws.String(db.Table),
		Key:                      k.AV(),
		UpdateExpression:         aws.String("ADD #n :d SET #t = :t"),
		ExpressionAttributeNames: map[string]string{"#n": attr, "#t": AttrTTL},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":d": &types.AttributeValueMemberN{Value: strconv.FormatInt(delta, 10)},
			":t": &types.AttributeValueMemberN{Value: strconv.FormatInt(expires.Unix(), 10)},
		},
		ReturnValues:           types.ReturnValueUpdatedNew,
		ReturnConsumedCapacity: capacity(ctx),
	})
	if err != nil {
		return 0, err
	}
	addWrite(ctx, one(res.ConsumedCapacity)...)
	v, ok := res.Attributes[attr].(*types.AttributeValueMemberN)
	if !ok {
		return 0, fmt.Errorf("%s is not a number after the update", attr)
	}
	return strconv.ParseInt(v.Value, 10, 64)
}

// AddUpTo is Add of delta (at least 1) made only while the attribute's new value stays at most
// limit: it returns the new value and true or, when the addition would pass limit, the value as
// it is (0 when absent) and false, having changed nothing. It is one conditional UpdateItem
// (its refusal returns the item as it was), so concurrent additions never pass limit together.
func (db *DB) AddUpTo(ctx context.Context, k Key, attr string, delta, limit int64, expires time.Time) (n int64, ok bool, err error) {
	defer derrors.Wrap(&err, "store.AddUpTo(%s %s)", k.PK, k.SK)
	cond := "#n <= :m"
	if delta <= limit {
		cond = "attribute_not_exists(#n) OR " + cond
	}
	res, err := db.Client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                aws.String(db.Table),
		Key:                      k.AV(),
		UpdateExpression:         aws.String("ADD #n :d SET #t = :t"),
		ConditionExpression:      aws.String(cond),
		ExpressionAttributeNames: map[string]string{"#n": attr, "#t": AttrTTL},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":d": &types.AttributeValueMemberN{Value: strconv.FormatInt(delta, 10)},
			":m": &types.AttributeValueMemberN{Value: strconv.FormatInt(limit-delta, 10)},
			":t": &types.AttributeValueMemberN{Value: strconv.FormatInt(expires.Unix(), 10)},
		},
		ReturnValues:                        types.ReturnValueUpdatedNew,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
		ReturnConsumedCapacity:              capacity(ctx),
	})
	var cf *types.ConditionalCheckFailedException
	if errors.As(err, &cf) {
		n, err := number(cf.Item, attr)
		return n, false, err
	}
	if err != nil {
		return 0, false, err
	}
	addWrite(ctx, one(res.ConsumedCapacity)...)
	n, err = number(res.Attributes, attr)
	return n, err == nil, err
}

// number is the number attribute attr of it; 0 when it or the attribute is absent.
func number(it Item, attr string) (int64, error) {
	v, ok := it[attr]
	if !ok {
		return 0, nil
	}
	nv, ok := v.(*types.AttributeValueMemberN)
	if !ok {
		return 0, fmt.Errorf("%s is not a number", attr)
	}
	return strconv.ParseInt(nv.Value, 10, 64)
}
