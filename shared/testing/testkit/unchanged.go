package testkit

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tunnelapi/shared/platform/store"
)

// Snapshot is the stored state a refused request must leave as it was: every item of one
// account (its resources and its audit log) and every guard of some kinds, with all their
// attributes, by "<pk> <sk>".
type Snapshot struct {
	guardKinds []string
	Items      map[string]map[string]any
}

// Snapshot reads every item of the account and every guard (store.GuardKey) of guardKinds,
// such as the guards a refused create would have claimed: guards are not in any account's
// partitions.
func (a *Account) Snapshot(t testing.TB, guardKinds ...string) Snapshot {
	t.Helper()
	items, err := a.s.Items(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := Snapshot{guardKinds: guardKinds, Items: map[string]map[string]any{}}
	for _, it := range items {
		pk, _ := it[store.AttrPK].(*types.AttributeValueMemberS)
		sk, _ := it[store.AttrSK].(*types.AttributeValueMemberS)
		if pk == nil || sk == nil || !a.holds(pk.Value, guardKinds) {
			continue
		}
		var m map[string]any
		if err := attributevalue.UnmarshalMap(it, &m); err != nil {
			t.Fatal(err)
		}
		out.Items[pk.Value+" "+sk.Value] = m
	}
	return out
}

// holds reports whether the partition pk is one of the account's or a guard of guardKinds.
func (a *Account) holds(pk string, guardKinds []string) bool {
	if strings.HasPrefix(pk, "A#"+a.AccountID+"#") || pk == store.EventLogKey(a.AccountID, "").PK {
		return true
	}
	for _, kind := range guardKinds {
		if strings.HasPrefix(pk, store.GuardKey(kind, "").PK) {
			return true
		}
	}
	return false
}

// Unchanged fails the test, naming what, for every item of before's kind that was added,
// changed or removed since before was taken: a refused request stores nothing.
func (a *Account) Unchanged(t testing.TB, before Snapshot, what string) {
	t.Helper()
	after := a.Snapshot(t, before.guardKinds...)
	for k, v := range after.Items {
		if !reflect.DeepEqual(before.Items[k], v) {
			t.Errorf("%s changed %s: %v → %v", what, k, before.Items[k], v)
		}
	}
	for k := range before.Items {
		if _, ok := after.Items[k]; !ok {
			t.Errorf("%s removed %s", what, k)
		}
	}
}
