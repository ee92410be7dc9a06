package tunnels

import (
	"context"
	"maps"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"tunnelapi/shared/families/endpoints/view"
	"tunnelapi/shared/families/tunnels/lease"
	"tunnelapi/shared/platform/audit"
	"tunnelapi/shared/platform/derrors"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/store"
)

// What the tunnel server's reports do to sessions and tunnels: each is one transaction with
// the events it records, on behalf of the session's credential owner (lease.SessionItem.Behalf).

// Start stores the new session it (its Meta, fields and Behalf set), with its lease entry, on
// the condition that its credential exists, its account is neither suspended nor being deleted
// and its server's key (KeyHash) is not revoked; ErrRevoked when one fails.
func Start(ctx context.Context, db *store.DB, it *lease.SessionItem, term time.Duration) (err error) {
	defer derrors.Wrap(&err, "tunnels.Start(%s)", it.ID)
	it.LeaseUntil = time.Now().Add(term).Unix()
	it.Generation = 1
	lk := store.LeaseKey(it.LeaseUntil, it.AccountID, it.ID)
	it.LeaseSK = lk.SK
	if it.Tunnels == nil {
		it.Tunnels = map[string]string{}
	}
	tx := &store.Tx{}
	tx.Put("session", it, store.Absent())
	tx.Put("lease", lease.EntryItem{Key: lk, AccountID: it.AccountID, ID: it.ID, Server: it.ServerID})
	startChecks(tx, it)
	r := it.Behalf.Request(it.AccountID)
	if _, err := audit.Record(tx, r, audit.Type(lease.SessionKind, "created"), lease.RenderSession(r, it)); err != nil {
		return err
	}
	if err := db.Commit(ctx, tx); revokedMeanwhile(err) {
		return ErrRevoked
	} else if err != nil {
		return err
	}
	return nil
}

// Renew extends the session's lease to now+term with one write of its item (its lease entry
// stays: the sweep moves it when it comes due and the lease has not lapsed).
func Renew(ctx context.Context, db *store.DB, it *lease.SessionItem, now time.Time, term time.Duration) error {
	return db.SetNumber(ctx, it.Key, "lease_until", now.Add(term).Unix())
}

// Reconnect renews the session's lease for a new connection of its agent (a login carrying the
// session's id) and returns the connection's generation, one more than the last; one write of
// the session's item, which bumps its version.
func Reconnect(ctx context.Context, db *store.DB, it *lease.SessionItem, now time.Time, term time.Duration) (generation int64, err error) {
	return db.SetAndAdd(ctx, it.Key, "lease_until", now.Add(term).Unix(), "generation")
}

// Renewable reports whether a heartbeat at now should renew the session's lease: once less
// than half of term is left, so a heartbeat costs no write most of the time.
func Renewable(it *lease.SessionItem, now time.Time, term time.Duration) bool {
	return time.Unix(it.LeaseUntil, 0).Sub(now) < term/2
}

// Endpoint is the ephemeral endpoint of the tunnel t of session it: its public URL, in the
// account's endpoint collection beside the cloud endpoints, so that GET /endpoints lists and
// pages both kinds as one collection; ok is false for a public URL that is no endpoint URL.
func Endpoint(it *lease.SessionItem, t *lease.TunnelItem, now time.Time) (ep *view.EndpointItem, ok bool) {
	u, err := view.ParseURL(t.PublicURL)
	if err != nil {
		return nil, false
	}
	id := ids.NewAt(ids.Endpoint, now.UTC())
	ep = &view.EndpointItem{Meta: store.Meta{Key: store.ResourceKey(t.AccountID, id), ID: id, AccountID: t.AccountID, CreatedAt: now.Unix(), Version: 1},
		URL: u.String(), Type: view.TypeEphemeral, Bindings: []string{view.BindingPublic}, PrincipalID: it.Behalf.PrincipalID,
		UpdatedAt: now.Unix(), TunnelID: t.ID, SessionID: it.ID, Region: t.Region}
	ep.Metadata = t.Metadata
	return ep, true
}

// Open records the tunnel t (its Meta and fields set) on the session it, which must still be at
// the version read, with its ephemeral endpoint (Endpoint).
func Open(ctx context.Context, db *store.DB, it *lease.SessionItem, t *lease.TunnelItem) (err error) {
	defer derrors.Wrap(&err, "tunnels.Open(%s %s)", it.ID, t.ProxyName)
	tx := &store.Tx{}
	if ep, ok := Endpoint(it, t, time.Now()); ok {
		t.EndpointID = ep.ID
		tx.Put("endpoint", ep, store.Absent())
	}
	next := *it
	next.Tunnels = maps.Clone(it.Tunnels)
	if next.Tunnels == nil {
		next.Tunnels = map[string]string{}
	}
	next.Tunnels[t.ProxyName] = t.ID
	next.Version++
	tx.Put("session", &next, store.AtVersion(it.Version))
	tx.Put("tunnel", t, store.Absent())
	r := it.Behalf.Request(it.AccountID)
	if _, err := audit.Record(tx, r, audit.Type(lease.TunnelKind, "created"), lease.RenderTunnel(r, t)); err != nil {
		return err
	}
	return lease.Commit(ctx, db, tx)
}

// Adopt records that the connection of generation gen reopened the session's tunnel of proxy
// name after a reconnect: the tunnel goes on, and only a close of that connection or a newer
// one ends it. The session must still be at the version read.
func Adopt(ctx context.Context, db *store.DB, it *lease.SessionItem, proxy string, gen int64) (err error) {
	defer derrors.Wrap(&err, "tunnels.Adopt(%s %s)", it.ID, proxy)
	tx := &store.Tx{}
	tx.Update("session", it.Key, expression.Add(expression.Name(store.AttrVersion), expression.Value(1)), store.AtVersion(it.Version))
	g := expression.Name("generation")
	tx.Update("tunnel", store.ResourceKey(it.AccountID, it.Tunnels[proxy]), expression.Set(g, expression.Value(gen)),
		store.Exists().And(expression.Or(expression.AttributeNotExists(g), g.LessThan(expression.Value(gen)))))
	if err := lease.Commit(ctx, db, tx); !store.ConditionFailed(err, "tunnel") {
		return err
	}
	return nil // a connection as new or newer adopted it already
}

// Close deletes the session's tunnel of proxy name, with its endpoint, when it has one and the
// close comes from the connection of generation gen that opened it or a newer one: a late close
// of a connection a reconnect replaced leaves the tunnel its successor reopened.
func Close(ctx context.Context, db *store.DB, it *lease.SessionItem, proxy string, gen int64) (err error) {
	defer derrors.Wrap(&err, "tunnels.Close(%s %s)", it.ID, proxy)
	id, ok := it.Tunnels[proxy]
	if !ok {
		return nil
	}
	var t lease.TunnelItem
	if err := db.Get(ctx, store.ResourceKey(it.AccountID, id), &t); err != nil && !store.IsNotFound(err) {
		return err
	}
	if t.Generation > gen {
		return nil
	}
	tx := &store.Tx{}
	next := *it
	next.Tunnels = maps.Clone(it.Tunnels)
	delete(next.Tunnels, proxy)
	next.Version++
	tx.Put("session", &next, store.AtVersion(it.Version))
	if t.ID != "" {
		tx.Delete("tunnel", t.Key)
		if t.EndpointID != "" {
			tx.Delete("endpoint", store.ResourceKey(t.AccountID, t.EndpointID))
		}
		r := it.Behalf.Request(it.AccountID)
		if _, err := audit.Record(tx, r, audit.Type(lease.TunnelKind, "deleted"), lease.RenderTunnel(r, &t)); err != nil {
			return err
		}
	}
	return lease.Commit(ctx, db, tx)
}
