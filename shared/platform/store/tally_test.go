package store_test

import (
	"context"
	"testing"

	"tunnelapi/shared/platform/metrics"
	"tunnelapi/shared/platform/store"
	"tunnelapi/shared/testing/testkit"
)

// Against DynamoDB Local: calls under a context carrying a tally add the capacity DynamoDB
// reported for them, and a committed transaction counts the resources it created (a Put
// conditioned on Absent alone in a collection) less those it deleted; other items (a guard, an
// overwrite) count as none; a call without a tally asks for nothing.
func TestTallyCountsCapacityAndResources(t *testing.T) {
	s := testkit.Start(t)
	tally := &metrics.Tally{}
	ctx := metrics.WithTally(context.Background(), tally)
	a, b := newThing("acct", 1), newThing("acct", 2)
	tx := &store.Tx{}
	tx.Put("a", a, store.Absent())
	tx.Put("b", b, store.Absent())
	tx.Put("guard", struct {
		store.Key
	}{store.GuardKey("thing", "n1")}, store.Absent())
	if err := s.DB.Commit(ctx, tx); err != nil {
		t.Fatal(err)
	}
	var u metrics.Usage
	tally.Fill(&u)
	if u.Items != 2 || u.Mutation != 1 || u.WriteUnits <= 0 || u.ReadUnits != 0 {
		t.Fatalf("after creating two: %+v", u)
	}
	var got thing
	if err := s.DB.Get(ctx, a.Key, &got); err != nil {
		t.Fatal(err)
	}
	tx = &store.Tx{}
	a.Name = "changed"
	tx.Put("a", a, store.AtVersion(1))
	tx.Delete("b", b.Key)
	tx.Delete("guard", store.GuardKey("thing", "n1"))
	if err := s.DB.Commit(ctx, tx); err != nil {
		t.Fatal(err)
	}
	before := u
	tally.Fill(&u)
	if u.Items != 1 || u.ReadUnits <= 0 || u.WriteUnits <= before.WriteUnits {
		t.Fatalf("after a read, an overwrite and a delete: %+v (before %+v)", u, before)
	}
	if err := s.DB.Get(context.Background(), a.Key, &got); err != nil {
		t.Fatal(err)
	}
	var after metrics.Usage
	tally.Fill(&after)
	if after != u {
		t.Fatalf("a call without the tally changed it: %+v, was %+v", after, u)
	}
}
