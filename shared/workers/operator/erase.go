package operator

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"tunnelapi/shared/families/tunnels"
	"tunnelapi/shared/platform/auth"
	"tunnelapi/shared/platform/derrors"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/resource"
	"tunnelapi/shared/platform/store"
)

// ErrUnfinished reports an erasure that ran out of time with items left: calling Erase again
// resumes it.
var ErrUnfinished = errors.New("operator: the tenant's erasure is not finished")

// eraseMargin is the part of a deadline an erasure leaves unused, to answer in.
const eraseMargin = 2 * time.Second

// erasePage is how many items an erasure reads at once, or fewer: each read is one of
// DynamoDB's answers (store.PageQueryStart), at most about 1 MB, so a partition of large items
// is erased a megabyte at a time.
const erasePage = 100

// Erase deletes every item of the tenant account: first its status becomes deleting, which
// refuses its keys from that moment; then each resource of each collection of o.Collections, and the
// account's users, with what it holds outside the account's partitions (tokens, uniqueness
// guards, certificate due entries: its family's Release) in one transaction per resource, so an interrupted erasure leaves nothing held by a
// deleted resource; then the audit log with the outbox items of its events, the rate counters,
// idempotency records and certificate jobs, the account item and last the tenant's entry. It
// reads only the account's own partitions, so it costs in proportion to the tenant's items. It
// stops with ErrUnfinished shortly before ctx's deadline; called again, it resumes.
func (o *Operator) Erase(ctx context.Context, account string) error {
	if err := o.markDeleting(ctx, account); err != nil {
		return err
	}
	for _, c := range o.Collections {
		if err := o.eraseResources(ctx, account, c.Prefix, c.Release); err != nil {
			return err
		}
	}
	// The account's users are written by its bootstrap and served by no family.
	if err := o.eraseResources(ctx, account, ids.User, nil); err != nil {
		return err
	}
	parts := store.AccountPartitions(account)
	if err := o.eraseLog(ctx, account, parts[1]); err != nil {
		return err
	}
	for _, p := range append(parts[2:], parts[0]) {
		if err := o.erasePartition(ctx, p, store.AccountKey(account)); err != nil {
			return err
		}
	}
	tx := &store.Tx{}
	tx.Delete("account", store.AccountKey(account))
	tx.Delete("tenant", store.TenantKey(account))
	return o.DB.Commit(ctx, tx)
}

// markDeleting sets the account's status to deleting (its tenant entry's too), then marks its
// tunnel sessions revoked; an account item already gone is an erasure resumed after it.
func (o *Operator) markDeleting(ctx context.Context, account string) error {
	status := expression.Set(expression.Name("status"), expression.Value(auth.StatusDeleting))
	tx := &store.Tx{}
	tx.Update("account", store.AccountKey(account), status, store.Exists())
	tx.Update("tenant", store.TenantKey(account), status)
	err := o.DB.Commit(ctx, tx)
	if store.ConditionFailed(err, "account") {
		return nil
	} else if err != nil {
		return err
	}
	return tunnels.Revoke(ctx, o.DB, account, "", "the account of this tunnel session is being deleted")
}

// timeLeft reports whether ctx leaves time for more work.
func timeLeft(ctx context.Context) error {
	if d, ok := ctx.Deadline(); ok && time.Until(d) < eraseMargin {
		return ErrUnfinished
	}
	return ctx.Err()
}

// eraseResources deletes every resource of account in the collection of prefix, each in a
// transaction with what release frees of it.
func (o *Operator) eraseResources(ctx context.Context, account, prefix string, release resource.Releaser) (err error) {
	defer derrors.Wrap(&err, "operator.eraseResources(%s)", prefix)
	for {
		items, _, err := o.DB.PageQueryStart(ctx, store.Collection(account, prefix), "", erasePage)
		if err != nil || len(items) == 0 {
			return err
		}
		for _, it := range items {
			if err := timeLeft(ctx); err != nil {
				return err
			}
			a := store.Attrs{Item: it}
			tx := &store.Tx{}
			tx.Delete("resource", a.Key())
			if release != nil {
				if err := release.Release(ctx, o.DB, it, tx); err != nil {
					return fmt.Errorf("release %s: %w", a.Key().SK, err)
				}
			}
			if err := o.DB.Commit(ctx, tx); err != nil && !store.IsConflict(err) {
				return fmt.Errorf("erase %s: %w", a.Key().SK, err)
			}
		}
	}
}

// eraseLog deletes the audit log of account with the outbox item of each of its events (kept
// shorter than the log, so every outbox item's event is in it).
func (o *Operator) eraseLog(ctx context.Context, account, partition string) (err error) {
	defer derrors.Wrap(&err, "operator.eraseLog")
	for {
		items, _, err := o.DB.PageQueryStart(ctx, partition, "", erasePage/2)
		if err != nil || len(items) == 0 {
			return err
		}
		if err := timeLeft(ctx); err != nil {
			return err
		}
		tx := &store.Tx{}
		for _, it := range items {
			a := store.Attrs{Item: it}
			resource.Free(tx, account, store.OutboxKey(a.Key().SK))
			tx.Delete("log."+a.Key().SK, a.Key())
		}
		if err := o.DB.Commit(ctx, tx); err != nil {
			return err
		}
	}
}

// erasePartition deletes every item of partition but keep.
func (o *Operator) erasePartition(ctx context.Context, partition string, keep store.Key) (err error) {
	defer derrors.Wrap(&err, "operator.erasePartition(%s)", partition)
	before := ""
	for {
		items, more, err := o.DB.PageQueryStart(ctx, partition, before, erasePage)
		if err != nil {
			return err
		}
		if err := timeLeft(ctx); err != nil {
			return err
		}
		tx := &store.Tx{}
		for _, it := range items {
			k := (&store.Attrs{Item: it}).Key()
			before = k.SK
			if k != keep {
				tx.Delete("item."+k.SK, k)
			}
		}
		if tx.Len() > 0 {
			if err := o.DB.Commit(ctx, tx); err != nil {
				return err
			}
		}
		if !more {
			return nil
		}
	}
}
