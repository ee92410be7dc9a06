package cost_test

import (
	"context"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tunnelapi/shared/platform/store"
)

// meter is the service's DynamoDB client with ReturnConsumedCapacity TOTAL on every call it
// makes, summing the capacity DynamoDB reports, but for transactions, which it counts itself.
type meter struct {
	store.Client
	mu          sync.Mutex
	read, write float64
	calls       int
}

func (m *meter) add(ccs ...types.ConsumedCapacity) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls++
	for _, cc := range ccs {
		if cc.ReadCapacityUnits != nil || cc.WriteCapacityUnits != nil {
			m.read += deref(cc.ReadCapacityUnits)
			m.write += deref(cc.WriteCapacityUnits)
		} else {
			// Only the total: reads and writes are told apart by the call (add's caller).
			m.read += deref(cc.CapacityUnits)
		}
	}
}

func (m *meter) addWrite(ccs ...types.ConsumedCapacity) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls++
	for _, cc := range ccs {
		if cc.WriteCapacityUnits != nil {
			m.write += deref(cc.WriteCapacityUnits)
			m.read += deref(cc.ReadCapacityUnits)
		} else {
			m.write += deref(cc.CapacityUnits)
		}
	}
}

// take returns the units consumed since the last take.
func (m *meter) take() (read, write float64, calls int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	read, write, calls = m.read, m.write, m.calls
	m.read, m.write, m.calls = 0, 0, 0
	return
}

func deref(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}

func one(cc *types.ConsumedCapacity) []types.ConsumedCapacity {
	if cc == nil {
		return nil
	}
	return []types.ConsumedCapacity{*cc}
}

const total = types.ReturnConsumedCapacityTotal

func (m *meter) GetItem(ctx context.Context, in *dynamodb.GetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	in.ReturnConsumedCapacity = total
	out, err := m.Client.GetItem(ctx, in, opts...)
	if err == nil {
		m.add(one(out.ConsumedCapacity)...)
	}
	return out, err
}

func (m *meter) BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error) {
	in.ReturnConsumedCapacity = total
	out, err := m.Client.BatchGetItem(ctx, in, opts...)
	if err == nil {
		m.add(out.ConsumedCapacity...)
	}
	return out, err
}

func (m *meter) Query(ctx context.Context, in *dynamodb.QueryInput, opts ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	in.ReturnConsumedCapacity = total
	out, err := m.Client.Query(ctx, in, opts...)
	if err == nil {
		m.add(one(out.ConsumedCapacity)...)
	}
	return out, err
}

func (m *meter) PutItem(ctx context.Context, in *dynamodb.PutItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	in.ReturnConsumedCapacity = total
	out, err := m.Client.PutItem(ctx, in, opts...)
	if err == nil {
		m.addWrite(one(out.ConsumedCapacity)...)
	}
	return out, err
}

func (m *meter) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	in.ReturnConsumedCapacity = total
	out, err := m.Client.UpdateItem(ctx, in, opts...)
	if err == nil {
		m.addWrite(one(out.ConsumedCapacity)...)
	}
	return out, err
}

func (m *meter) DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	in.ReturnConsumedCapacity = total
	out, err := m.Client.DeleteItem(ctx, in, opts...)
	if err == nil {
		m.addWrite(one(out.ConsumedCapacity)...)
	}
	return out, err
}

// TransactWriteItems counts a transaction's write units by DynamoDB's rule, not by what
// DynamoDB Local reports: two units per started KB of each item the transaction puts, updates,
// deletes or checks, at the larger of its size before and after (an absent item counts as one
// KB). DynamoDB Local reports the sum of the distinct per-item values instead (two 1 KB Puts: 2
// units, not 4). The sizes come from consistent reads of each item around the call.
func (m *meter) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, opts ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	before, err := m.sizes(ctx, in)
	if err != nil {
		return nil, err
	}
	out, err := m.Client.TransactWriteItems(ctx, in, opts...)
	if err != nil {
		return out, err
	}
	after, err := m.sizes(ctx, in)
	if err != nil {
		return nil, err
	}
	units := txUnits(before, after)
	m.addWrite(types.ConsumedCapacity{WriteCapacityUnits: &units})
	return out, nil
}

// txUnits is the write units of a transaction whose items had the sizes before and after.
func txUnits(before, after []int) float64 {
	var units float64
	for i := range before {
		kb := max(1, (max(before[i], after[i])+1023)/1024)
		units += 2 * float64(kb)
	}
	return units
}

// sizes reads each item of in's transaction (consistently, past the meter) and returns their
// sizes as DynamoDB accounts them, 0 for an absent one.
func (m *meter) sizes(ctx context.Context, in *dynamodb.TransactWriteItemsInput) ([]int, error) {
	out := make([]int, len(in.TransactItems))
	for i, ti := range in.TransactItems {
		var table *string
		var key map[string]types.AttributeValue
		switch {
		case ti.Put != nil:
			table, key = ti.Put.TableName, map[string]types.AttributeValue{store.AttrPK: ti.Put.Item[store.AttrPK], store.AttrSK: ti.Put.Item[store.AttrSK]}
		case ti.Update != nil:
			table, key = ti.Update.TableName, ti.Update.Key
		case ti.Delete != nil:
			table, key = ti.Delete.TableName, ti.Delete.Key
		case ti.ConditionCheck != nil:
			table, key = ti.ConditionCheck.TableName, ti.ConditionCheck.Key
		}
		got, err := m.Client.GetItem(ctx, &dynamodb.GetItemInput{TableName: table, Key: key, ConsistentRead: aws.Bool(true)})
		if err != nil {
			return nil, err
		}
		out[i] = store.ItemSize(got.Item)
	}
	return out, nil
}
