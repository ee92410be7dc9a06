package store

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tunnelapi/shared/platform/metrics"
)

// Each call the store makes under a context carrying a metrics.Tally (a request's or a job's)
// asks DynamoDB for the capacity it consumed (ReturnConsumedCapacity TOTAL, answered in the same
// round trip) and adds it to the tally: reads (GetItem, BatchGetItem, Query) as read units,
// writes as write units. A call without a tally asks for nothing. The calls do it themselves,
// rather than a middleware on the client, so a function links no call it never makes.

// capacity is the ReturnConsumedCapacity of a call under ctx.
func capacity(ctx context.Context) types.ReturnConsumedCapacity {
	if metrics.TallyOf(ctx) == nil {
		return ""
	}
	return types.ReturnConsumedCapacityTotal
}

// addRead adds the read units a call under ctx consumed (ccs, as its output reports them) to
// ctx's tally, if any.
func addRead(ctx context.Context, ccs ...types.ConsumedCapacity) {
	if t := metrics.TallyOf(ctx); t != nil {
		t.AddCapacity(units(ccs), 0)
	}
}

// addWrite is addRead for a write's units.
func addWrite(ctx context.Context, ccs ...types.ConsumedCapacity) {
	if t := metrics.TallyOf(ctx); t != nil {
		t.AddCapacity(0, units(ccs))
	}
}

// one is a single-table call's ConsumedCapacity as a list (none when absent).
func one(cc *types.ConsumedCapacity) []types.ConsumedCapacity {
	if cc == nil {
		return nil
	}
	return []types.ConsumedCapacity{*cc}
}

func units(ccs []types.ConsumedCapacity) float64 {
	var sum float64
	for _, cc := range ccs {
		sum += aws.ToFloat64(cc.CapacityUnits)
	}
	return sum
}
