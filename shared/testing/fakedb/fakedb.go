// Package fakedb is an in-memory, scripted stand-in for the DynamoDB table, implementing
// store.Client, for unit tests of the store, the auth layer and the generic family that run
// without DynamoDB Local. Tests that prove behaviour against DynamoDB itself use the local
// stack instead; this fake is for logic: which condition failed, what a cancellation or a
// throttle turns into, what a transaction wrote.
//
// A Table keeps items per key and evaluates the condition, key, update and projection
// expressions the SDK's expression builder produces. TransactWriteItems is all or nothing and
// reports failed conditions as DynamoDB does, a TransactionCanceledException with one reason
// per item. Failures are scripted per operation:
//
//	db := fakedb.New()
//	st := store.New(db, "test")
//	db.Fail(fakedb.OpTransactWriteItems, fakedb.Canceled(fakedb.ReasonNone, fakedb.ReasonConflict))
//	db.Fail(fakedb.OpGetItem, fakedb.Throttled())
//
// Each scripted error is returned once, by the next call of its operation, in order. Seed
// items with PutItem (or Seed with a struct); read what was written with Item, and inspect the
// calls made with Calls.
package fakedb

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"tunnelapi/shared/platform/derrors"
)

// Operation names, for Fail and Calls.
const (
	OpGetItem            = "GetItem"
	OpPutItem            = "PutItem"
	OpDeleteItem         = "DeleteItem"
	OpUpdateItem         = "UpdateItem"
	OpBatchGetItem       = "BatchGetItem"
	OpBatchWriteItem     = "BatchWriteItem"
	OpQuery              = "Query"
	OpScan               = "Scan"
	OpTransactWriteItems = "TransactWriteItems"
)

// Cancellation reason codes of a TransactionCanceledException, one per item of the
// transaction in order.
const (
	ReasonNone              = "None"
	ReasonConditionalCheck  = "ConditionalCheckFailed"
	ReasonConflict          = "TransactionConflict"
	ReasonThroughput        = "ProvisionedThroughputExceeded"
	ReasonThrottlingError   = "ThrottlingError"
	ReasonValidationFailure = "ValidationError"
)

// Canceled is the error DynamoDB returns for a cancelled transaction, with one reason code per
// item (ReasonNone for items that were fine).
func Canceled(reasons ...string) error {
	e := &types.TransactionCanceledException{Message: aws.String("Transaction cancelled, please refer cancellation reasons for specific reasons [" + strings.Join(reasons, ", ") + "]")}
	for _, r := range reasons {
		e.CancellationReasons = append(e.CancellationReasons, types.CancellationReason{Code: aws.String(r)})
	}
	return e
}

// Throttled is the error DynamoDB returns when a request exceeds the table's throughput.
func Throttled() error {
	return &types.ProvisionedThroughputExceededException{Message: aws.String("The level of configured provisioned throughput for the table was exceeded")}
}

// Call is one request the table received.
type Call struct {
	Op    string
	Input any // the operation's *dynamodb.XxxInput
}

// Table is an in-memory table. The zero value is not usable; call New.
type Table struct {
	mu          sync.Mutex
	items       map[[2]string]item
	fail        map[string][]error
	unprocessed int
	calls       []Call
	// answerItems, when positive, ends every Query's and Scan's answer after that many items.
	answerItems int
}

// New returns an empty table.
func New() *Table {
	return &Table{items: map[[2]string]item{}, fail: map[string][]error{}}
}

// Fail scripts the next len(errs) calls of op to fail with errs, in order, before doing
// anything. A nil entry lets that call through.
func (t *Table) Fail(op string, errs ...error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.fail[op] = append(t.fail[op], errs...)
}

// LeaveUnprocessed makes the next n BatchGetItem or BatchWriteItem calls succeed without
// processing any of their keys (as DynamoDB does when it throttles part of a batch).
func (t *Table) LeaveUnprocessed(n int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.unprocessed += n
}

// EndAnswersAfter makes every later Query and Scan end its answer after n items, with the key to
// continue from, as DynamoDB ends one at 1 MB of items whatever its Limit; 0 ends them by Limit
// only again.
func (t *Table) EndAnswersAfter(n int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.answerItems = n
}

// Calls returns the requests received so far, in order.
func (t *Table) Calls() []Call {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.calls)
}

// Count is how many calls of op the table received.
func (t *Table) Count(op string) int {
	n := 0
	for _, c := range t.Calls() {
		if c.Op == op {
			n++
		}
	}
	return n
}

// Item returns a copy of the item at pk/sk, nil when absent.
func (t *Table) Item(pk, sk string) map[string]types.AttributeValue {
	t.mu.Lock()
	defer t.mu.Unlock()
	return clone(t.items[[2]string{pk, sk}])
}

// Items returns copies of every item, ordered by partition then sort key.
func (t *Table) Items() []map[string]types.AttributeValue {
	t.mu.Lock()
	defer t.mu.Unlock()
	keys := make([][2]string, 0, len(t.items))
	for k := range t.items {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b [2]string) int {
		if c := strings.Compare(a[0], b[0]); c != 0 {
			return c
		}
		return strings.Compare(a[1], b[1])
	})
	out := make([]map[string]types.AttributeValue, len(keys))
	for i, k := range keys {
		out[i] = clone(t.items[k])
	}
	return out
}

// Seed stores v (a struct with dynamodbav tags, including pk and sk) unconditionally.
func (t *Table) Seed(v any) (err error) {
	defer derrors.Wrap(&err, "fakedb.Seed")
	av, err := attributevalue.MarshalMap(v)
	if err != nil {
		return err
	}
	k, err := keyOf(av)
	if err != nil {
		return err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.items[k] = clone(av)
	return nil
}

// begin records a call and returns its scripted failure, if any. t.mu must be held.
func (t *Table) begin(op string, in any) error {
	t.calls = append(t.calls, Call{Op: op, Input: in})
	if q := t.fail[op]; len(q) > 0 {
		t.fail[op] = q[1:]
		return q[0]
	}
	return nil
}

func keyOf(av item) ([2]string, error) {
	pk, ok1 := av["pk"].(*types.AttributeValueMemberS)
	sk, ok2 := av["sk"].(*types.AttributeValueMemberS)
	if !ok1 || !ok2 {
		return [2]string{}, validation("fakedb: the key needs string attributes pk and sk")
	}
	return [2]string{pk.Value, sk.Value}, nil
}

// validation is DynamoDB's error for a malformed request.
func validation(msg string) error {
	return &smithy.GenericAPIError{Code: "ValidationException", Message: msg, Fault: smithy.FaultClient}
}

// conditional returns the key of the item a single write names, or the failure of its
// condition on that item. t.mu must be held.
func (t *Table) conditional(key item, cond *string, names map[string]string, vals map[string]types.AttributeValue) ([2]string, error) {
	k, err := keyOf(key)
	if err != nil {
		return k, err
	}
	ok, err := evalCondition(aws.ToString(cond), names, vals, t.items[k])
	if err == nil && !ok {
		err = &types.ConditionalCheckFailedException{Message: aws.String("The conditional request failed")}
	}
	return k, err
}

// written runs a single-item write: under the lock, once its call is recorded and its condition
// holds on the item at key, apply changes the item at k.
func written[O any](t *Table, op string, in any, key item, cond *string, names map[string]string, vals map[string]types.AttributeValue,
	apply func(k [2]string) (*O, error)) (*O, error) {
	return locked(t, op, in, func() (*O, error) {
		k, err := t.conditional(key, cond, names, vals)
		var cf *types.ConditionalCheckFailedException
		if errors.As(err, &cf) && returnsOld(in) {
			cf.Item = clone(t.items[k])
		}
		if err != nil {
			return nil, err
		}
		return apply(k)
	})
}

// returnsOld reports whether the write in asks for the item as it was when its condition fails.
func returnsOld(in any) bool {
	var rv types.ReturnValuesOnConditionCheckFailure
	switch in := in.(type) {
	case *dynamodb.PutItemInput:
		rv = in.ReturnValuesOnConditionCheckFailure
	case *dynamodb.UpdateItemInput:
		rv = in.ReturnValuesOnConditionCheckFailure
	case *dynamodb.DeleteItemInput:
		rv = in.ReturnValuesOnConditionCheckFailure
	}
	return rv == types.ReturnValuesOnConditionCheckFailureAllOld
}

// updated returns a copy of cur (a new item at key when cur is absent) with the update
// expression applied.
func updated(cur, key item, expr *string, names map[string]string, vals map[string]types.AttributeValue) (item, error) {
	it := clone(cur)
	if it == nil {
		it = item{"pk": key["pk"], "sk": key["sk"]}
	}
	if err := applyUpdate(aws.ToString(expr), names, vals, it); err != nil {
		return nil, err
	}
	return it, nil
}

// GetItem implements store.Client.
func (t *Table) GetItem(_ context.Context, in *dynamodb.GetItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	return locked(t, OpGetItem, in, func() (*dynamodb.GetItemOutput, error) {
		k, err := keyOf(in.Key)
		if err != nil {
			return nil, err
		}
		it, err := project(aws.ToString(in.ProjectionExpression), in.ExpressionAttributeNames, clone(t.items[k]))
		return &dynamodb.GetItemOutput{Item: it}, err
	})
}

// PutItem implements store.Client.
func (t *Table) PutItem(_ context.Context, in *dynamodb.PutItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	return written(t, OpPutItem, in, in.Item, in.ConditionExpression, in.ExpressionAttributeNames, in.ExpressionAttributeValues,
		func(k [2]string) (*dynamodb.PutItemOutput, error) {
			t.items[k] = clone(in.Item)
			return &dynamodb.PutItemOutput{}, nil
		})
}

// DeleteItem implements store.Client.
func (t *Table) DeleteItem(_ context.Context, in *dynamodb.DeleteItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	return written(t, OpDeleteItem, in, in.Key, in.ConditionExpression, in.ExpressionAttributeNames, in.ExpressionAttributeValues,
		func(k [2]string) (*dynamodb.DeleteItemOutput, error) {
			delete(t.items, k)
			return &dynamodb.DeleteItemOutput{}, nil
		})
}

// UpdateItem implements store.Client. ReturnValues UPDATED_NEW returns the whole new item, a
// superset of what DynamoDB returns, which names only the updated attributes.
func (t *Table) UpdateItem(_ context.Context, in *dynamodb.UpdateItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	return written(t, OpUpdateItem, in, in.Key, in.ConditionExpression, in.ExpressionAttributeNames, in.ExpressionAttributeValues,
		func(k [2]string) (*dynamodb.UpdateItemOutput, error) {
			it, err := updated(t.items[k], in.Key, in.UpdateExpression, in.ExpressionAttributeNames, in.ExpressionAttributeValues)
			if err != nil {
				return nil, err
			}
			t.items[k] = it
			out := &dynamodb.UpdateItemOutput{}
			if in.ReturnValues == types.ReturnValueUpdatedNew || in.ReturnValues == types.ReturnValueAllNew {
				out.Attributes = clone(it)
			}
			return out, nil
		})
}

// BatchGetItem implements store.Client.
func (t *Table) BatchGetItem(_ context.Context, in *dynamodb.BatchGetItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error) {
	return locked(t, OpBatchGetItem, in, func() (*dynamodb.BatchGetItemOutput, error) {
		out := &dynamodb.BatchGetItemOutput{Responses: map[string][]map[string]types.AttributeValue{}, UnprocessedKeys: map[string]types.KeysAndAttributes{}}
		if t.unprocessed > 0 {
			t.unprocessed--
			out.UnprocessedKeys = in.RequestItems
			return out, nil
		}
		for table, ka := range in.RequestItems {
			seen := map[[2]string]bool{}
			for _, key := range ka.Keys {
				k, err := keyOf(key)
				if err != nil {
					return nil, err
				}
				if seen[k] {
					return nil, validation("Provided list of item keys contains duplicates")
				}
				seen[k] = true
				if it := t.items[k]; it != nil {
					p, err := project(aws.ToString(ka.ProjectionExpression), ka.ExpressionAttributeNames, clone(it))
					if err != nil {
						return nil, err
					}
					out.Responses[table] = append(out.Responses[table], p)
				}
			}
		}
		return out, nil
	})
}

// BatchWriteItem implements store.Client.
func (t *Table) BatchWriteItem(_ context.Context, in *dynamodb.BatchWriteItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error) {
	return locked(t, OpBatchWriteItem, in, func() (*dynamodb.BatchWriteItemOutput, error) {
		if t.unprocessed > 0 {
			t.unprocessed--
			return &dynamodb.BatchWriteItemOutput{UnprocessedItems: in.RequestItems}, nil
		}
		for _, reqs := range in.RequestItems {
			for _, w := range reqs {
				switch {
				case w.PutRequest != nil:
					k, err := keyOf(w.PutRequest.Item)
					if err != nil {
						return nil, err
					}
					t.items[k] = clone(w.PutRequest.Item)
				case w.DeleteRequest != nil:
					k, err := keyOf(w.DeleteRequest.Key)
					if err != nil {
						return nil, err
					}
					delete(t.items, k)
				}
			}
		}
		return &dynamodb.BatchWriteItemOutput{UnprocessedItems: map[string][]types.WriteRequest{}}, nil
	})
}

// Query implements store.Client: the key condition is evaluated on every item (the table is
// small), sorted by sort key, honouring ScanIndexForward, Limit and ExclusiveStartKey.
func (t *Table) Query(_ context.Context, in *dynamodb.QueryInput, _ ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	return locked(t, OpQuery, in, func() (*dynamodb.QueryOutput, error) {
		var matched []item
		for _, it := range t.items {
			ok, err := evalCondition(aws.ToString(in.KeyConditionExpression), in.ExpressionAttributeNames, in.ExpressionAttributeValues, it)
			if err != nil {
				return nil, err
			}
			if ok {
				matched = append(matched, it)
			}
		}
		items, last, err := t.read(matched, aws.ToBool(in.ScanIndexForward) || in.ScanIndexForward == nil, in.ExclusiveStartKey, in.Limit,
			in.FilterExpression, in.ProjectionExpression, in.ExpressionAttributeNames, in.ExpressionAttributeValues)
		if err != nil {
			return nil, err
		}
		return &dynamodb.QueryOutput{LastEvaluatedKey: last, Items: items, Count: int32(len(items))}, nil
	})
}

// read returns one page of items (see page) as a Query or Scan does: filtered, projected, and
// the key to continue from.
func (t *Table) read(items []item, forward bool, start item, limit *int32,
	filter, projection *string, names map[string]string, vals map[string]types.AttributeValue) ([]item, item, error) {
	page, last, err := t.page(items, forward, start, limit)
	if err != nil {
		return nil, nil, err
	}
	out, err := filtered(page, filter, projection, names, vals)
	return out, last, err
}

// filtered returns the items of a page that pass filter, projected: what a Query or Scan returns.
func filtered(page []item, filter, projection *string, names map[string]string, vals map[string]types.AttributeValue) ([]item, error) {
	var out []item
	for _, it := range page {
		ok, err := evalCondition(aws.ToString(filter), names, vals, it)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		p, err := project(aws.ToString(projection), names, clone(it))
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// Scan implements store.Client, in key order.
func (t *Table) Scan(_ context.Context, in *dynamodb.ScanInput, _ ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error) {
	return locked(t, OpScan, in, func() (*dynamodb.ScanOutput, error) {
		all := make([]item, 0, len(t.items))
		for _, it := range t.items {
			all = append(all, it)
		}
		items, last, err := t.read(all, true, in.ExclusiveStartKey, in.Limit,
			in.FilterExpression, in.ProjectionExpression, in.ExpressionAttributeNames, in.ExpressionAttributeValues)
		if err != nil {
			return nil, err
		}
		return &dynamodb.ScanOutput{LastEvaluatedKey: last, Items: items, Count: int32(len(items))}, nil
	})
}

// page orders items by key, skips to after start, and cuts at limit (or EndAnswersAfter's
// count); last is the key to resume from when items remain.
func (t *Table) page(items []item, forward bool, start item, limit *int32) (page []item, last item, err error) {
	keyed := make([][2]string, len(items))
	for i, it := range items {
		if keyed[i], err = keyOf(it); err != nil {
			return nil, nil, err
		}
	}
	idx := make([]int, len(items))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int {
		c := strings.Compare(keyed[a][0], keyed[b][0])
		if c == 0 {
			c = strings.Compare(keyed[a][1], keyed[b][1])
		}
		if !forward {
			c = -c
		}
		return c
	})
	if start != nil {
		sk, err := keyOf(start)
		if err != nil {
			return nil, nil, err
		}
		i := slices.IndexFunc(idx, func(j int) bool { return keyed[j] == sk })
		if i < 0 {
			return nil, nil, validation("fakedb: ExclusiveStartKey is not an item of this query")
		}
		idx = idx[i+1:]
	}
	n := len(idx)
	if limit != nil && int(*limit) < n {
		n = int(*limit)
	}
	if t.answerItems > 0 && t.answerItems < n {
		n = t.answerItems
	}
	for _, j := range idx[:n] {
		page = append(page, items[j])
	}
	if n < len(idx) && n > 0 {
		k := keyed[idx[n-1]]
		last = item{"pk": &types.AttributeValueMemberS{Value: k[0]}, "sk": &types.AttributeValueMemberS{Value: k[1]}}
	}
	return page, last, nil
}

// TransactWriteItems implements store.Client: every condition is checked against the items as
// they were before the transaction; if any fails, nothing is written and the error carries one
// reason per item.
func (t *Table) TransactWriteItems(_ context.Context, in *dynamodb.TransactWriteItemsInput, _ ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	return locked(t, OpTransactWriteItems, in, func() (*dynamodb.TransactWriteItemsOutput, error) {
		if len(in.TransactItems) > 100 {
			return nil, validation("Member must have length less than or equal to 100")
		}
		reasons := make([]string, len(in.TransactItems))
		failed := false
		next := map[[2]string]item{} // the writes, applied only if every condition holds
		deleted := map[[2]string]bool{}
		for i, w := range in.TransactItems {
			var (
				key   map[string]types.AttributeValue
				cond  *string
				names map[string]string
				vals  map[string]types.AttributeValue
			)
			switch {
			case w.Put != nil:
				key, cond, names, vals = w.Put.Item, w.Put.ConditionExpression, w.Put.ExpressionAttributeNames, w.Put.ExpressionAttributeValues
			case w.Delete != nil:
				key, cond, names, vals = w.Delete.Key, w.Delete.ConditionExpression, w.Delete.ExpressionAttributeNames, w.Delete.ExpressionAttributeValues
			case w.Update != nil:
				key, cond, names, vals = w.Update.Key, w.Update.ConditionExpression, w.Update.ExpressionAttributeNames, w.Update.ExpressionAttributeValues
			case w.ConditionCheck != nil:
				key, cond, names, vals = w.ConditionCheck.Key, w.ConditionCheck.ConditionExpression, w.ConditionCheck.ExpressionAttributeNames, w.ConditionCheck.ExpressionAttributeValues
			default:
				return nil, validation("fakedb: an empty transaction item")
			}
			k, err := keyOf(key)
			if err != nil {
				return nil, err
			}
			if _, dup := next[k]; dup || deleted[k] {
				return nil, validation("Transaction request cannot include multiple operations on one item")
			}
			cur := t.items[k]
			ok, err := evalCondition(aws.ToString(cond), names, vals, cur)
			if err != nil {
				return nil, err
			}
			reasons[i] = ReasonNone
			if !ok {
				reasons[i], failed = ReasonConditionalCheck, true
				next[k] = cur
				continue
			}
			switch {
			case w.Put != nil:
				next[k] = clone(w.Put.Item)
			case w.Delete != nil:
				deleted[k] = true
			case w.Update != nil:
				it, err := updated(cur, key, w.Update.UpdateExpression, names, vals)
				if err != nil {
					return nil, err
				}
				next[k] = it
			default:
				next[k] = cur
			}
		}
		if failed {
			return nil, Canceled(reasons...)
		}
		for k, it := range next {
			if it == nil {
				continue // a check of an absent item
			}
			t.items[k] = it
		}
		for k := range deleted {
			delete(t.items, k)
		}
		return &dynamodb.TransactWriteItemsOutput{}, nil
	})
}

// locked records a call of a table operation and runs it under the table's lock, unless the
// call has a scripted failure.
func locked[O any](t *Table, op string, in any, do func() (*O, error)) (*O, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.begin(op, in); err != nil {
		return nil, err
	}
	return do()
}

// recorded records a call of a table operation and returns out, or its scripted failure.
func recorded[O any](t *Table, op string, in any, out *O) (*O, error) {
	return locked(t, op, in, func() (*O, error) { return out, nil })
}

// CreateTable implements store.Client; the table always exists, so it only records the call.
func (t *Table) CreateTable(_ context.Context, in *dynamodb.CreateTableInput, _ ...func(*dynamodb.Options)) (*dynamodb.CreateTableOutput, error) {
	return recorded(t, "CreateTable", in, &dynamodb.CreateTableOutput{})
}

// DescribeTable implements store.Client: the table is always active.
func (t *Table) DescribeTable(_ context.Context, in *dynamodb.DescribeTableInput, _ ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error) {
	return recorded(t, "DescribeTable", in,
		&dynamodb.DescribeTableOutput{Table: &types.TableDescription{TableName: in.TableName, TableStatus: types.TableStatusActive}})
}

// UpdateTimeToLive implements store.Client; items never expire in the fake.
func (t *Table) UpdateTimeToLive(_ context.Context, in *dynamodb.UpdateTimeToLiveInput, _ ...func(*dynamodb.Options)) (*dynamodb.UpdateTimeToLiveOutput, error) {
	return recorded(t, "UpdateTimeToLive", in, &dynamodb.UpdateTimeToLiveOutput{})
}

// DeleteTable implements store.Client: it removes every item.
func (t *Table) DeleteTable(_ context.Context, in *dynamodb.DeleteTableInput, _ ...func(*dynamodb.Options)) (*dynamodb.DeleteTableOutput, error) {
	return locked(t, "DeleteTable", in, func() (*dynamodb.DeleteTableOutput, error) {
		t.items = map[[2]string]item{}
		return &dynamodb.DeleteTableOutput{}, nil
	})
}
