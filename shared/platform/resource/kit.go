package resource

import (
	"context"
	"encoding/json"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"errors"
	"log/slog"
	"strings"
	"time"

	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/audit"
	"tunnelapi/shared/platform/auth"
	"tunnelapi/shared/platform/config"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/metrics"
	"tunnelapi/shared/platform/seal"
	"tunnelapi/shared/platform/store"
)

// Kit holds what every family's handlers share. A request's authentication state is not among
// them: it is the request's own (auth.Of).
type Kit struct {
	DB *store.DB
	// Seal encrypts secrets (private keys, event-target credentials) before they are stored.
	Seal seal.Sealer
	Log  *slog.Logger
	// IdempotencyWindow is how long a create sent with an Idempotency-Key replays its response
	// (DefaultIdempotencyWindow when zero).
	IdempotencyWindow time.Duration
	// Metrics receives a metrics.IdempotentReplay line per replayed create; nil is standard
	// output.
	Metrics *metrics.Emitter
	// Settings are the deployment's settings families read (package config), parsed once at
	// start: a family turns them into its own types when its routes are registered.
	Settings config.FamilySettings
}

// Read fetches keys of r's account in one consistent round trip together with the items that
// verify the caller, and returns them (nil for absent ones) only once the caller is verified.
func (k *Kit) Read(ctx context.Context, r *api.Request, keys ...store.Key) ([]store.Item, error) {
	s := auth.Of(r)
	if _, err := s.Resolve(ctx); err != nil {
		return nil, err
	}
	verify := s.ReadKeys()
	items, err := k.DB.GetMany(ctx, append(verify, keys...)...)
	if err != nil {
		return nil, err
	}
	if err := s.VerifyRead(ctx, items[:len(verify)]); err != nil {
		return nil, err
	}
	return items[len(verify):], nil
}

// Get reads the resource id of kind prefix into out, a zero value; api.ErrNotFound when it
// is absent, of another kind, or of another account.
func (k *Kit) Get(ctx context.Context, r *api.Request, prefix, id string, out store.Resource) error {
	_, err := k.getWith(ctx, r, prefix, id, out, nil)
	return err
}

// getWith is Get reading extra keys in the same round trip; it returns what it read of them, by
// key (absent items included, as nil).
func (k *Kit) getWith(ctx context.Context, r *api.Request, prefix, id string, out store.Resource, extra []store.Key) (map[store.Key]store.Item, error) {
	valid := ids.Is(id, prefix)
	s := auth.Of(r)
	c, err := s.Resolve(ctx)
	if err != nil {
		return nil, err
	}
	var keys []store.Key
	if valid {
		keys = append(keys, store.ResourceKey(c.AccountID, id))
	}
	if len(keys)+len(extra)+len(s.ReadKeys()) > store.MaxBatchGet {
		extra = nil // the hook reads them itself
	}
	items, err := k.Read(ctx, r, append(keys, extra...)...)
	if err != nil {
		return nil, err
	}
	if !valid || items[0] == nil {
		return nil, api.ErrNotFound
	}
	var read map[store.Key]store.Item // a plain Get reads no extra keys: no map to make
	if len(extra) > 0 {
		read = make(map[store.Key]store.Item, len(extra))
		for i, key := range extra {
			read[key] = items[len(keys)+i]
		}
	}
	return read, store.Decode(items[0], out)
}

// Page reads the start of one list page of a collection of r's account (store.PageQueryStart:
// fewer than p.Limit items with more true when they took more than DynamoDB answers at once).
// The caller check runs in parallel with the query; nothing is returned unless it succeeds.
func (k *Kit) Page(ctx context.Context, r *api.Request, prefix string, p api.Page) ([]store.Item, bool, error) {
	c, err := auth.Of(r).Resolve(ctx)
	if err != nil {
		return nil, false, err
	}
	type result struct {
		items []store.Item
		more  bool
		err   error
	}
	ch := make(chan result, 1)
	go func() {
		items, more, err := k.DB.PageQueryStart(ctx, store.Collection(c.AccountID, prefix), p.BeforeID, p.Limit)
		ch <- result{items, more, err}
	}()
	_, authErr := k.Read(ctx, r)
	res := <-ch
	if authErr != nil {
		return nil, false, authErr
	}
	return res.items, res.more, res.err
}

// Mutation is one transaction being built: its writes and the audit events they imply.
type Mutation struct {
	*store.Tx
	ctx  context.Context
	kit  *Kit
	r    *api.Request
	auth *auth.Session
	// object is the resource as the mutation's event shows it: the wire form whose largest
	// member is named when the mutation is too large to store.
	object     json.RawMessage
	acctUpdate *expression.UpdateBuilder
	retry      map[string]bool
	// read holds the items read ahead with the operation's own read (UpdateReader), by key.
	read map[store.Key]store.Item
	// assumed holds the facts the mutation used (Facts.Assume), by the label of their check.
	assumed map[string]assumption
	// after are the steps to run once the transaction committed (AfterCommit).
	after []func(context.Context) error
}

// AfterCommit adds f to what runs once m's transaction committed, in order: work that must
// see the commit (a revocation written onto what a consistent query finds after it). The
// commit stands whatever f returns: a failure is logged, and what f does must be backed by
// another path.
func (m *Mutation) AfterCommit(f func(context.Context) error) { m.after = append(m.after, f) }

// GetMany returns the items at keys (nil for absent ones) as GetMany of package store does:
// from what the operation read ahead in its own round trip when that holds every key, else
// with a read of its own.
func (m *Mutation) GetMany(ctx context.Context, keys ...store.Key) ([]store.Item, error) {
	out := make([]store.Item, len(keys))
	for i, k := range keys {
		it, ok := m.read[k]
		if !ok {
			return m.kit.DB.GetMany(ctx, keys...)
		}
		out[i] = it
	}
	return out, nil
}

// RetryOn marks the write labelled label as one whose failed condition means the state the
// mutation was derived from changed under it: the whole operation is read and built again
// (bounded, like version conflicts) instead of failing.
func (m *Mutation) RetryOn(label string) {
	if m.retry == nil {
		m.retry = map[string]bool{}
	}
	m.retry[label] = true
}

// errRetry reports a commit that failed on a RetryOn label.
var errRetry = errors.New("resource: state changed during the mutation")

// Account returns the account state the commit's guard conditions on (see
// auth.Session.Assumed), for writes derived from it: the state the caller was verified
// against, or none when the operation has not read the account item, without reading it (a
// commit that finds the account restricted after all is read and built again).
func (m *Mutation) Account() (auth.AccountState, error) {
	return m.auth.Assumed(m.ctx)
}

// UpdateAccount applies upd to the caller's account item in this transaction (it is merged
// with the auth guard on that item). Successive calls replace the update.
func (m *Mutation) UpdateAccount(upd expression.UpdateBuilder) { m.acctUpdate = &upd }

// Event records an audit event for this mutation, in its transaction.
func (m *Mutation) Event(eventType string, object any) error {
	env, err := audit.Record(m.Tx, m.r, eventType, object)
	if err != nil {
		return err
	}
	m.object = env.Object
	return nil
}

// Reference adds delta to the reference count (Meta.Refs) of the resource id in the caller's
// account, in m's transaction, and bumps its version (see Touch): a referrer can never be
// created against an item whose deletion commits first, and the item's delete, which reads Refs
// and conditions on its version, can never succeed while a referrer exists. When the item is
// missing or cond does not hold, the commit returns missing when it is set; otherwise the whole
// operation is read and built again, so the caller decides from a fresh read.
func (m *Mutation) Reference(id string, delta int64, missing error, cond ...expression.ConditionBuilder) {
	label := "ref:" + id
	m.Touch(label, store.ResourceKey(m.r.Caller().AccountID, id),
		expression.Add(expression.Name(store.AttrRefs), expression.Value(delta)), cond...)
	if missing != nil {
		m.Refuse(label, missing)
	}
}

// begin starts one attempt of a write by r's caller: the caller resolved, and verified again
// when its account state is stale (auth.Session.Refresh), so that what the write derives from
// the account is fresh. read holds the items the operation read ahead (Mutation.GetMany).
func (k *Kit) begin(ctx context.Context, r *api.Request, read map[store.Key]store.Item) (*Mutation, error) {
	s := auth.Of(r)
	if _, err := s.Resolve(ctx); err != nil {
		return nil, err
	}
	if err := s.Refresh(ctx); err != nil {
		return nil, err
	}
	return &Mutation{Tx: &store.Tx{}, ctx: ctx, kit: k, r: r, auth: s, read: read}, nil
}

// commit commits the built mutation m in one round trip, guarded by the caller's credentials
// (auth.Session.Guard), and interprets the result: authentication's own failures as auth
// classifies them, then a transaction too large to store (the 400 naming the member), a failed
// fact (learned, and the operation built again) or a failed RetryOn write (built again). Its
// events leave with the commit: the table's stream carries them on.
func (m *Mutation) commit() error {
	if err := m.auth.Guard(m.Tx, m.acctUpdate); err != nil {
		return err
	}
	err := m.auth.Committed(m.kit.DB.Commit(m.ctx, m.Tx))
	var c *store.CanceledError
	var big *store.TooLargeError
	switch {
	case err == nil:
		for _, f := range m.after {
			if err := f(m.ctx); err != nil {
				m.kit.logger().Warn("a step after a commit failed", "op", m.r.OpID, "err", err.Error())
			}
		}
		return nil
	case errors.As(err, &big):
		return m.tooLarge(big)
	case errors.As(err, &c):
		m.learnFailed(c)
		for _, l := range c.Failed {
			if m.retry[l] {
				return errRetry
			}
		}
	}
	return err
}

// tooLarge is the 400 for a mutation DynamoDB could not store (store.TooLargeError): it names
// the largest member of the resource as the event shows it, the input that made it large.
func (m *Mutation) tooLarge(big *store.TooLargeError) error {
	field, size := "body", 0
	var members map[string]json.RawMessage
	if json.Unmarshal(m.object, &members) == nil {
		for name, v := range members {
			if len(v) > size {
				field, size = name, len(v)
			}
		}
	}
	what := "the resource's " + big.Label + " item"
	switch {
	case big.Label == labelItem:
		what = "the resource"
	case strings.HasPrefix(big.Label, "event."):
		what = "the resource's audit event"
	case big.Label == "":
		what = "the resource with everything written with it"
	}
	return api.Invalid(field, "%s is too large to store: with it %s takes %d bytes, more than the %d DynamoDB stores; make %s smaller",
		field, what, big.Bytes, big.Limit, field)
}

func (k *Kit) logger() *slog.Logger {
	if k.Log != nil {
		return k.Log
	}
	return slog.Default()
}
