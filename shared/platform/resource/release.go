package resource

import (
	"context"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"tunnelapi/shared/platform/store"
)

// Releaser frees what a stored resource of a family holds outside its account's partitions
// (Descriptor.Release): Release adds the writes that free what the stored item it holds to tx.
// A family implements it with an exported empty struct type (principals.TokenRelease), which the
// operator's generated main names.
type Releaser interface {
	Release(ctx context.Context, db *store.DB, it store.Item, tx *store.Tx) error
}

// Free adds to tx the deletion of each of keys, items held by a resource of account outside the
// account's partitions (a Descriptor's Release): each is deleted unless it names another account
// (its account attribute), so an erasure never frees what someone else holds, and one already
// gone is no failure.
func Free(tx *store.Tx, account string, keys ...store.Key) {
	for _, k := range keys {
		acct := expression.Name("account")
		tx.Delete("release."+strconv.Itoa(tx.Len()), k,
			expression.Or(expression.AttributeNotExists(acct), acct.Equal(expression.Value(account))))
	}
}
