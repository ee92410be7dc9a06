package tunnels

import (
	"context"
	"errors"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"tunnelapi/shared/families/tunnels/lease"
	"tunnelapi/shared/platform/auth"
	"tunnelapi/shared/platform/derrors"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/store"
)

// Revocations written onto the sessions they end, so that a heartbeat reads the session item
// alone. Each runs after the revoking write commits: a login's Start condition-checks what the
// revocation removes (Start), so a session either fails to start or committed before the
// revocation, and the consistent query that follows it finds the session. A crash between the
// two is caught by the full read a heartbeat does when it renews the lease.

// ErrRevoked reports that Start found the credential deleted, the account suspended or being
// deleted, or the server's key revoked: the login is refused.
var ErrRevoked = errors.New("tunnels: the credential, account or server key was revoked meanwhile")

// Revoke marks the sessions of account, only those of credential when it is not "", as
// revoked for reason: each one's next heartbeat is refused with reason and ends it.
func Revoke(ctx context.Context, db *store.DB, account, credential, reason string) (err error) {
	defer derrors.Wrap(&err, "tunnels.Revoke(%s %s)", account, credential)
	items, err := db.QueryAll(ctx, store.Collection(account, ids.TunnelSession), store.AttrPK, store.AttrSK, "credential")
	if err != nil {
		return err
	}
	for _, raw := range items {
		a := store.Attrs{Item: raw}
		if credential != "" && a.String("credential") != credential {
			continue
		}
		k := a.Key()
		if err := a.Err(); err != nil {
			return err
		}
		if err := mark(ctx, db, k, expression.Set(expression.Name("revoked"), expression.Value(reason)), store.Exists()); err != nil {
			return err
		}
	}
	return nil
}

// ForgetServer removes the key hash that the sessions of the tunnel server key id (whose
// secret's hash is hash) were logged in with: their heartbeats then read the server's key
// again, and the revoked key's are refused (401).
func ForgetServer(ctx context.Context, db *store.DB, id, hash string) (err error) {
	defer derrors.Wrap(&err, "tunnels.ForgetServer(%s)", id)
	items, err := db.QueryAll(ctx, store.LeasePartition)
	if err != nil {
		return err
	}
	kh := expression.Name("key_hash")
	for _, raw := range items {
		var l lease.EntryItem
		if err := store.Unmarshal(raw, &l); err != nil {
			return err
		}
		if l.Server != id {
			continue
		}
		if err := mark(ctx, db, lease.SessionKey(l.AccountID, l.ID), expression.Remove(kh), kh.Equal(expression.Value(hash))); err != nil {
			return err
		}
	}
	return nil
}

// mark applies upd to the session k when cond holds; a session gone or changed otherwise is
// left as it is.
func mark(ctx context.Context, db *store.DB, k store.Key, upd expression.UpdateBuilder, cond expression.ConditionBuilder) error {
	tx := &store.Tx{}
	tx.Update("session", k, upd, cond)
	if err := db.Commit(ctx, tx); err != nil && !store.ConditionFailed(err, "session") {
		return err
	}
	return nil
}

// startChecks adds to tx, for the new session it, the checks that what its login was admitted
// on still holds: its credential, its account neither suspended nor being deleted, and the
// server's key it logged in with (each when the session records one: a login always does).
func startChecks(tx *store.Tx, it *lease.SessionItem) {
	if it.CredentialID != "" {
		tx.Check("credential", store.ResourceKey(it.AccountID, it.CredentialID), store.Exists())
	}
	st := expression.Name("status")
	tx.Check("account", store.AccountKey(it.AccountID), store.Exists().And(expression.Or(expression.AttributeNotExists(st),
		expression.And(st.NotEqual(expression.Value(auth.StatusSuspended)), st.NotEqual(expression.Value(auth.StatusDeleting))))))
	if it.KeyHash != "" {
		tx.Check("server", store.TokenKey(it.KeyHash), store.Exists())
	}
}

// revokedMeanwhile reports whether err is a failed check of startChecks.
func revokedMeanwhile(err error) bool {
	return store.ConditionFailed(err, "credential") || store.ConditionFailed(err, "account") || store.ConditionFailed(err, "server")
}
