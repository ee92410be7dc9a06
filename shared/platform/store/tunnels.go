package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tunnelapi/shared/platform/derrors"
)

// TunnelServersPartition is the operator's list of tunnel-server keys, one item per key by id.
const TunnelServersPartition = "N#tunnel_servers"

// TunnelServerKey is the listed item of the tunnel-server key id (tsk_…); the key's secret is
// found through its TokenKey item.
func TunnelServerKey(id string) Key { return Key{PK: TunnelServersPartition, SK: id} }

// LeasePartition holds one entry per tunnel session whose lease the sweep has to look at: its
// sort key begins with the time the lease was last known to end, so the sweep's query reads only
// entries that may have lapsed.
const LeasePartition = "D#lease"

// LeaseKey is the lease entry of account's tunnel session id, due at (Unix seconds).
func LeaseKey(at int64, account, id string) Key {
	return Key{PK: LeasePartition, SK: fmt.Sprintf("%010d#%s#%s", max(at, 0), account, id)}
}

// LeaseBefore is the sort key bound of the lease entries due up to at.
func LeaseBefore(at int64) string { return fmt.Sprintf("%010d#~", max(at, 0)) }

// EndedSessionKey marks account's tunnel session id as ended on purpose (stopped or restarted),
// beside the account item, so that a reconnect carrying its id is answered by what ended it.
func EndedSessionKey(account, id string) Key { return Key{PK: "A#" + account, SK: "ENDED#" + id} }

// SetNumber sets the number attribute attr of the existing item at k to v: one UpdateItem, not
// a transaction, for a value that only its own writer reads back (a tunnel session's lease). It
// returns ErrNotFound when the item does not exist.
func (db *DB) SetNumber(ctx context.Context, k Key, attr string, v int64) (err error) {
	defer derrors.Wrap(&err, "store.SetNumber(%s %s)", k.PK, k.SK)
	res, err := db.Client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(db.Table),
		Key:                       k.AV(),
		UpdateExpression:          aws.String("SET #n = :v"),
		ConditionExpression:       aws.String("attribute_exists(" + AttrPK + ")"),
		ExpressionAttributeNames:  map[string]string{"#n": attr},
		ExpressionAttributeValues: map[string]types.AttributeValue{":v": &types.AttributeValueMemberN{Value: strconv.FormatInt(v, 10)}},
		ReturnConsumedCapacity:    capacity(ctx),
	})
	if err != nil {
		var cf *types.ConditionalCheckFailedException
		if errors.As(err, &cf) {
			return ErrNotFound
		}
		return err
	}
	addWrite(ctx, one(res.ConsumedCapacity)...)
	return nil
}

// SetAndAdd sets the number attribute set of the existing item at k to v and adds 1 to its
// number attribute add and to its version, in one UpdateItem, and returns add's new value (a
// tunnel session's lease and login generation, on a reconnect: a write derived from the item
// read before fails its version condition instead of undoing the count). It returns
// ErrNotFound when the item does not exist.
func (db *DB) SetAndAdd(ctx context.Context, k Key, set string, v int64, add string) (n int64, err error) {
	defer derrors.Wrap(&err, "store.SetAndAdd(%s %s)", k.PK, k.SK)
	res, err := db.Client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                aws.String(db.Table),
		Key:                      k.AV(),
		UpdateExpression:         aws.String("SET #s = :v ADD #a :one, #v :one"),
		ConditionExpression:      aws.String("attribute_exists(" + AttrPK + ")"),
		ExpressionAttributeNames: map[string]string{"#s": set, "#a": add, "#v": AttrVersion},
		ExpressionAttributeValues: map[string]types.AttributeValue{":v": &types.AttributeValueMemberN{Value: strconv.FormatInt(v, 10)},
			":one": &types.AttributeValueMemberN{Value: "1"}},
		ReturnValues:           types.ReturnValueUpdatedNew,
		ReturnConsumedCapacity: capacity(ctx),
	})
	if err != nil {
		var cf *types.ConditionalCheckFailedException
		if errors.As(err, &cf) {
			return 0, ErrNotFound
		}
		return 0, err
	}
	addWrite(ctx, one(res.ConsumedCapacity)...)
	got, ok := res.Attributes[add].(*types.AttributeValueMemberN)
	if !ok {
		return 0, fmt.Errorf("%s is not a number after the update", add)
	}
	return strconv.ParseInt(got.Value, 10, 64)
}
