package lease

import (
	"context"
	"errors"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"tunnelapi/shared/platform/derrors"
	"tunnelapi/shared/platform/store"
)

// Sweep ends the sessions whose lease lapsed by now (their tunnel server stopped sending
// heartbeats: killed, or cut off), taking at most limit lease entries: one query of the entries
// due, then per entry one read of its session and one transaction. An entry whose session's
// heartbeats renewed the lease moves to the lease's new end; one whose session is gone is
// deleted. It returns how many sessions it ended.
func Sweep(ctx context.Context, db *store.DB, now time.Time, limit int) (ended int, err error) {
	defer derrors.Wrap(&err, "lease.Sweep")
	items, err := db.QueryBelow(ctx, store.LeasePartition, store.LeaseBefore(now.Unix()), limit)
	if err != nil {
		return 0, err
	}
	for _, raw := range items {
		var l EntryItem
		if err := store.Unmarshal(raw, &l); err != nil {
			return ended, err
		}
		done, err := sweepOne(ctx, db, l, now)
		if err != nil && !errors.Is(err, ErrChanged) && !store.ConditionFailed(err, "session") {
			return ended, err
		}
		if done {
			ended++
		}
	}
	return ended, nil
}

// sweepOne looks at one lease entry due: it ends its session, moves it, or deletes it.
func sweepOne(ctx context.Context, db *store.DB, l EntryItem, now time.Time) (bool, error) {
	got, err := db.GetMany(ctx, SessionKey(l.AccountID, l.ID))
	if err != nil {
		return false, err
	}
	var it SessionItem
	if got[0] != nil {
		if err := store.Unmarshal(got[0], &it); err != nil {
			return false, err
		}
	}
	tx := &store.Tx{}
	switch {
	case got[0] == nil || it.LeaseSK != l.SK:
		tx.Delete("lease", l.Key) // a stale entry: its session ended, or has another entry
	case it.LeaseUntil > now.Unix():
		next := store.LeaseKey(it.LeaseUntil, it.AccountID, it.ID)
		tx.Delete("lease", l.Key)
		tx.Put("lease.next", EntryItem{Key: next, AccountID: it.AccountID, ID: it.ID, Server: it.ServerID})
		tx.Update("session", it.Key, expression.Set(expression.Name("lease_sk"), expression.Value(next.SK)),
			expression.Name("lease_sk").Equal(expression.Value(l.SK)))
	default:
		return true, End(ctx, db, &it, "", now)
	}
	return false, Commit(ctx, db, tx)
}
