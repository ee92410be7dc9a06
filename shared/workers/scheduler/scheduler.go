package scheduler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"tunnelapi/shared/families/domains"
	"tunnelapi/shared/families/tunnels/lease"
	"tunnelapi/shared/platform/auth"
	"tunnelapi/shared/platform/config"
	"tunnelapi/shared/platform/derrors"
	"tunnelapi/shared/platform/store"
)

// DefaultScheduleBatch bounds the due entries one scheduler run takes.
const DefaultScheduleBatch = 500

// Scheduler requests the jobs that have come due: renewals (renews_at passed) and retries of
// failed jobs (retries_at passed). It reads only the due entries (one query of the due
// partition, whose sort keys begin with the time), never the resources that are not due.
type Scheduler struct {
	DB *store.DB
	// Batch bounds the entries one run takes (DefaultScheduleBatch); the next run takes the rest.
	Batch int
	// Log is where Main reports each run.
	Log *slog.Logger
}

// target is the part of a reserved domain or an agent ingress the scheduler reads.
type target struct {
	store.Meta
	domains.CertManagement
}

// Run requests a job for every entry due by now and returns how many it requested. Taking an
// entry is one transaction: the resource's pending job set on the condition that its due entry
// is still this one, the entry deleted and the job's item written. So a run concurrent with
// another, or a second run while the job is pending, requests nothing more.
func (s *Scheduler) Run(ctx context.Context, now time.Time) (requested int, err error) {
	defer derrors.Wrap(&err, "scheduler.Run")
	limit := s.Batch
	if limit <= 0 {
		limit = DefaultScheduleBatch
	}
	items, err := s.DB.QueryBelow(ctx, store.CertDuePartition, store.CertDueBefore(now.Unix()), limit)
	if err != nil {
		return 0, err
	}
	for _, raw := range items {
		var d domains.CertDueItem
		if err := store.Unmarshal(raw, &d); err != nil {
			return requested, err
		}
		ok, err := s.request(ctx, d, now)
		if err != nil {
			return requested, fmt.Errorf("%s: %w", d.ResourceID, err)
		}
		if ok {
			requested++
		}
	}
	return requested, nil
}

func (s *Scheduler) request(ctx context.Context, d domains.CertDueItem, now time.Time) (bool, error) {
	var t target
	items, err := s.DB.GetMany(ctx, store.ResourceKey(d.AccountID, d.ResourceID), store.AccountKey(d.AccountID))
	if err != nil {
		return false, err
	}
	if items[0] == nil {
		err = store.ErrNotFound
	} else if err := store.Unmarshal(items[0], &t); err != nil {
		return false, err
	}
	tx := &store.Tx{}
	tx.Delete("cert.due.taken", d.Key, store.Exists())
	if items[1] != nil && (&store.Attrs{Item: items[1]}).String("status") == auth.StatusSuspended && err == nil && t.DueSK == d.SK {
		// A suspended account's renewals wait: the entry comes due again after PauseDelay.
		t.DueSK = ""
		t.MoveDue(tx, t.AccountID, t.ID, store.CertDueKey(now.Add(PauseDelay).Unix(), t.AccountID, t.ID).SK)
		tx.Update("cert.target", t.Key, expression.Set(expression.Name("cert_due"), expression.Value(t.DueSK)),
			expression.Name("cert_due").Equal(expression.Value(d.SK)))
		_, err := s.commit(ctx, tx)
		return false, err
	}
	if err != nil || t.Policy == nil || t.DueSK != d.SK || len(t.Names) == 0 {
		// The resource is gone, no longer managed, or due at another time: a stale entry.
		_, err := s.commit(ctx, tx)
		return false, err
	}
	reason := domains.ReasonRenewal
	if t.Job != nil {
		reason = domains.ReasonRetry
	}
	order := t.Request(reason, now)
	// The taken entry is deleted above; the job gets its own, in case no worker takes it.
	t.DueSK = ""
	t.MoveDue(tx, t.AccountID, t.ID, store.CertDueKey(now.Add(domains.JobGrace).Unix(), t.AccountID, t.ID).SK)
	tx.Update("cert.target", t.Key, expression.Set(expression.Name("cert_pending"), expression.Value(order)).
		Set(expression.Name("cert_due"), expression.Value(t.DueSK)).Add(expression.Name(store.AttrVersion), expression.Value(1)),
		expression.Name("cert_due").Equal(expression.Value(d.SK)))
	domains.EnqueueCertJob(tx, domains.CertJobMessage{JobID: order.JobID, AccountID: t.AccountID, ResourceID: t.ID}, now)
	lost, err := s.commit(ctx, tx)
	return !lost && err == nil, err
}

// PauseDelay is how long a suspended account's due renewal waits before it is looked at again.
const PauseDelay = time.Hour

// commit applies tx; losing to a concurrent run (the entry already taken, the resource changed)
// is no error: that run requested the job.
func (s *Scheduler) commit(ctx context.Context, tx *store.Tx) (lost bool, err error) {
	err = s.DB.Commit(ctx, tx)
	if store.ConditionFailed(err, "cert.due.taken") || store.ConditionFailed(err, "cert.target") || store.IsConflict(err) {
		return true, nil
	}
	return false, err
}

// Sweep ends the tunnel sessions whose lease lapsed by now (lease.Sweep), at most Batch.
func (s *Scheduler) Sweep(ctx context.Context, now time.Time) (int, error) {
	limit := s.Batch
	if limit <= 0 {
		limit = DefaultScheduleBatch
	}
	return lease.Sweep(ctx, s.DB, now, limit)
}

// FromConfig builds the scheduler configured by c with no network I/O.
func FromConfig(ctx context.Context, c config.Scheduler, log *slog.Logger) (*Scheduler, error) {
	db, err := store.Open(ctx, c.StoreOptions())
	if err != nil {
		return nil, err
	}
	return &Scheduler{DB: db, Log: log}, nil
}

// Main is the scheduler Lambda's whole main: each scheduled invocation requests the jobs due by
// then.
func Main() {
	s := config.Start(config.LoadScheduler, FromConfig)
	lambda.Start(func(ctx context.Context) error {
		n, err := s.Run(ctx, time.Now())
		s.Log.Info("scheduled certificate jobs", "requested", n)
		ended, serr := s.Sweep(ctx, time.Now())
		s.Log.Info("swept tunnel sessions", "ended", ended)
		return errors.Join(err, serr)
	})
}
