package store

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"tunnelapi/shared/platform/derrors"
)

// QueryBetween reads every item of a partition whose sort key is between from and to, both
// included, in sort key order.
func (db *DB) QueryBetween(ctx context.Context, partition, from, to string) (_ []Item, err error) {
	defer derrors.Wrap(&err, "store.QueryBetween(%s %s..%s)", partition, from, to)
	return db.queryAll(ctx, expression.Key(AttrPK).Equal(expression.Value(partition)).And(expression.Key(AttrSK).Between(expression.Value(from), expression.Value(to))), 0, nil)
}
