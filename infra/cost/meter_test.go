package cost_test

import (
	"context"
	"sync"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tunnelapi/shared/platform/store"
)

// meter is the service's DynamoDB client with ReturnConsumedCapacity TOTAL on every call it
// makes, summing the capacity DynamoDB reports.
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

func (m *meter) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, opts ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	in.ReturnConsumedCapacity = total
	out, err := m.Client.TransactWriteItems(ctx, in, opts...)
	if err == nil {
		m.addWrite(out.ConsumedCapacity...)
	}
	return out, err
}
