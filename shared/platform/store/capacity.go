package store

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"

	"tunnelapi/shared/platform/metrics"
)

// meterCapacity is on the middleware stack of the client Open builds: a call made under a
// context carrying a metrics.Tally (a request's or a job's) asks DynamoDB for the capacity it
// consumed (ReturnConsumedCapacity TOTAL, answered in the same round trip) and adds it to the
// tally, reads (GetItem, BatchGetItem, Query) as read units and writes as write units. A call
// without a tally is left as it is.
func meterCapacity(o *dynamodb.Options) {
	o.APIOptions = append(o.APIOptions, func(s *middleware.Stack) error {
		return s.Initialize.Add(middleware.InitializeMiddlewareFunc("meterCapacity",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				t := metrics.TallyOf(ctx)
				if t == nil {
					return next.HandleInitialize(ctx, in)
				}
				askCapacity(in.Parameters)
				out, md, err := next.HandleInitialize(ctx, in)
				if err == nil {
					read, write := consumed(out.Result)
					t.AddCapacity(read, write)
				}
				return out, md, err
			}), middleware.After)
	})
}

const totalCapacity = types.ReturnConsumedCapacityTotal

// askCapacity sets ReturnConsumedCapacity on the input of every call the project makes.
func askCapacity(in any) {
	switch in := in.(type) {
	case *dynamodb.GetItemInput:
		in.ReturnConsumedCapacity = totalCapacity
	case *dynamodb.BatchGetItemInput:
		in.ReturnConsumedCapacity = totalCapacity
	case *dynamodb.QueryInput:
		in.ReturnConsumedCapacity = totalCapacity
	case *dynamodb.PutItemInput:
		in.ReturnConsumedCapacity = totalCapacity
	case *dynamodb.UpdateItemInput:
		in.ReturnConsumedCapacity = totalCapacity
	case *dynamodb.DeleteItemInput:
		in.ReturnConsumedCapacity = totalCapacity
	case *dynamodb.BatchWriteItemInput:
		in.ReturnConsumedCapacity = totalCapacity
	case *dynamodb.TransactWriteItemsInput:
		in.ReturnConsumedCapacity = totalCapacity
	}
}

// consumed is the capacity a call's output reports: read units for reads, write units for
// writes.
func consumed(out any) (read, write float64) {
	switch out := out.(type) {
	case *dynamodb.GetItemOutput:
		return unit(out.ConsumedCapacity), 0
	case *dynamodb.BatchGetItemOutput:
		return units(out.ConsumedCapacity...), 0
	case *dynamodb.QueryOutput:
		return unit(out.ConsumedCapacity), 0
	case *dynamodb.PutItemOutput:
		return 0, unit(out.ConsumedCapacity)
	case *dynamodb.UpdateItemOutput:
		return 0, unit(out.ConsumedCapacity)
	case *dynamodb.DeleteItemOutput:
		return 0, unit(out.ConsumedCapacity)
	case *dynamodb.BatchWriteItemOutput:
		return 0, units(out.ConsumedCapacity...)
	case *dynamodb.TransactWriteItemsOutput:
		return 0, units(out.ConsumedCapacity...)
	}
	return 0, 0
}

func units(ccs ...types.ConsumedCapacity) float64 {
	var sum float64
	for _, cc := range ccs {
		sum += aws.ToFloat64(cc.CapacityUnits)
	}
	return sum
}

func unit(cc *types.ConsumedCapacity) float64 {
	if cc == nil {
		return 0
	}
	return aws.ToFloat64(cc.CapacityUnits)
}
