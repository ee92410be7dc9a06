package auth

import (
	"context"
	"errors"
	"net/http"
	"slices"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/derrors"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/store"
)

// Admission is a request's rate-limit decision, being made while the request runs: counting
// the request against its account starts as soon as the account is known (Session.Resolve) and
// runs alongside the request's own reads. Package ratelimit implements it.
type Admission interface {
	// Settle waits for the decision, adds its RateLimit header fields to h and returns the
	// refusal (a 429 *api.Error) or nil. It may be called any number of times.
	Settle(h http.Header) *api.Error
	// Release gives the request's count back when it was admitted: its caller was refused
	// (an unknown or revoked key, a refused address), so it spends none of the account's
	// quota. It waits for the decision, removes the RateLimit field from h, and makes Settle
	// admit without fields from then on. It may be called any number of times.
	Release(h http.Header)
}

// AccountState is what a request's caller was verified against on the account item, kept for
// the rest of the request so that its writes condition on the same state. The zero value means
// the account item has not been read in this request.
type AccountState struct {
	// Read is set once the caller was verified against the account item in this request.
	Read bool
	// Stale is set when a write found the account item changed since it was read: it must be
	// read (and the caller verified) again before the next write.
	Stale bool
	// Restriction is the version of the account's API IP restriction the request was checked
	// against; 0 means none.
	Restriction int64
}

// AttrActive is the attribute of a bot or service user's item that must be true for its keys
// to be accepted: an inactive bot's keys are refused, and so are a deleted bot's (its item is
// gone).
const AttrActive = "active"

// principalKey is the item a request by c must find active, read with the token and account
// items and conditioned on by its writes: a bot or service user's own item. A user cannot be
// deactivated, so a user's keys need none (ok false).
func principalKey(c *api.Caller) (k store.Key, ok bool) {
	if ids.Is(c.PrincipalID, ids.BotUser) || ids.Is(c.PrincipalID, ids.ServiceUser) {
		return store.ResourceKey(c.AccountID, c.PrincipalID), true
	}
	return store.Key{}, false
}

// active reports whether a principal's item (nil when absent) lets its keys in.
func active(it store.Item) bool {
	if it == nil {
		return false
	}
	a := store.Attrs{Item: it}
	return a.Bool(AttrActive) && a.Err() == nil
}

// Session is one request's authentication state: the caller its token resolves to, whether the
// store has confirmed it, the account state it was verified against and its pending rate-limit
// decision. The Server makes it when the request arrives (Authenticator.Session); only its own
// methods change it, and nothing else holds any of it. Package api reads it as an
// api.Authentication; package resource reaches it with Of and calls, for a read, Resolve,
// ReadKeys and VerifyRead, and for a write, Refresh, Assumed, Guard and Committed.
type Session struct {
	// a is nil for a request served without an Authenticator: Resolve refuses it.
	a         *Authenticator
	r         *api.Request
	caller    *api.Caller
	keys      []store.Key // ReadKeys, made once
	verified  bool
	account   AccountState
	admission Admission
}

// Session makes r's authentication state (api.Server calls it when r arrives); it reads
// nothing until Resolve.
func (a *Authenticator) Session(r *api.Request) api.Authentication { return &Session{a: a, r: r} }

// errNoSession is the error of a request whose server has no Authenticator: a programming
// error, which fails closed.
var errNoSession = errors.New("auth: the request has no session: its api.Server has no Authenticator")

// Of returns r's session. A request that has none (its api.Server has no Authenticator, or it
// was made by api.RequestAs) gets one that refuses at Resolve.
func Of(r *api.Request) *Session {
	if s, ok := r.Auth().(*Session); ok {
		return s
	}
	return &Session{r: r}
}

// Caller returns the caller Resolve found (nil before): trusted only once Verified.
func (s *Session) Caller() *api.Caller { return s.caller }

// Verified reports whether the store has confirmed the caller in this request: a read's items
// checked out (VerifyRead) or a guarded write committed (Committed).
func (s *Session) Verified() bool { return s.verified }

// Admit waits for the request's rate-limit decision and returns its refusal, if any. Nothing
// read may be released and nothing written before it returns nil; without a decision pending
// (no limit, or no account known) it returns nil at once.
func (s *Session) Admit() error {
	if s.admission == nil {
		return nil
	}
	if e := s.admission.Settle(s.r.Header()); e != nil {
		return e
	}
	return nil
}

// Forget drops the hint of a token this request deletes, so the process stops remembering it.
func (s *Session) Forget(tokenHash string) {
	if s.a != nil {
		s.a.forget(tokenHash)
	}
}

// Resolve returns the caller the request's token claims to be. The identity comes from the
// hint cache or a consistent read of the token item; it is confirmed later, with the data.
func (s *Session) Resolve(ctx context.Context) (_ *api.Caller, err error) {
	defer derrors.Wrap(&err, "auth.Resolve")
	if s.caller != nil {
		return s.caller, nil
	}
	a := s.a
	if a == nil {
		return nil, errNoSession
	}
	h := store.TokenHash(s.r.Token)
	a.mu.Lock()
	c, ok := a.hints[h]
	a.mu.Unlock()
	if !ok {
		var t TokenItem
		err = a.DB.Get(ctx, store.TokenKey(h), &t)
		if store.IsNotFound(err) {
			return nil, ErrUnknownKey
		}
		if err != nil {
			return nil, err
		}
		if t.Kind == KindCredential {
			return nil, ErrAuthtokenAsKey
		}
		if t.Kind != KindAPIKey {
			return nil, ErrUnknownKey
		}
		c = api.Caller{AccountID: t.AccountID, PrincipalID: t.PrincipalID, Admin: t.Admin, CredentialID: t.ResourceID, TokenHash: h, Subject: t.Subject}
		a.remember(h, c)
	}
	s.caller = &c
	// The one place a request is counted: from here its account is known, and the count runs
	// while the request reads or builds its transaction; Admit (in VerifyRead and Guard) waits
	// for the decision before anything is released or written.
	if a.Limiter != nil {
		s.admission = a.Limiter.Start(ctx, c.AccountID)
	}
	return s.caller, nil
}

// ReadKeys are the items a read must fetch alongside its data to verify the resolved caller:
// its token item, its account item and, for a bot or service user, the principal's own item.
// Before Resolve there are none. The slice is the session's, made once: callers do not change
// it.
func (s *Session) ReadKeys() []store.Key {
	c := s.caller
	if c == nil {
		return nil
	}
	if s.keys == nil {
		s.keys = []store.Key{store.TokenKey(c.TokenHash), store.AccountKey(c.AccountID)}
		if k, ok := principalKey(c); ok {
			s.keys = append(s.keys, k)
		}
		s.keys = slices.Clip(s.keys)
	}
	return s.keys
}

// VerifyRead confirms the caller from the items of ReadKeys fetched with the data (in its
// order, nil when absent) and records the account state they show. Only after it succeeds may
// anything read be released.
func (s *Session) VerifyRead(ctx context.Context, read []store.Item) error {
	if err := s.Admit(); err != nil {
		return err
	}
	c, keys := s.caller, s.ReadKeys()
	if c == nil || len(read) != len(keys) || read[0] == nil || read[1] == nil {
		return s.refused(ErrUnknownKey)
	}
	token, account := read[0], read[1]
	if len(keys) > 2 && !active(read[2]) { // a bot or service user's own item (principalKey)
		return s.refused(ErrUnknownKey)
	}
	t, err := decodeToken(token)
	if err != nil {
		return err
	}
	acct, err := decodeAccount(account)
	if err != nil {
		return err
	}
	if t.Kind != KindAPIKey || t.AccountID != c.AccountID || t.PrincipalID != c.PrincipalID ||
		acct.Status == StatusDeleting {
		return s.refused(ErrUnknownKey)
	}
	if acct.Status != "" {
		return s.refused(ErrSuspended)
	}
	if s.a.Restrictor != nil {
		if err := s.a.Restrictor.Check(ctx, s.r, c.AccountID, acct.Restriction); err != nil {
			if _, refusal := api.AsError(err); refusal && !errors.Is(err, ErrRetry) {
				return s.refused(err)
			}
			return err
		}
	}
	s.account = AccountState{Read: true, Restriction: acct.Restriction}
	s.verified = true
	return nil
}

// refused gives back the request's count against its account's rate limit, as its caller is
// refused with err: only a verified, admitted caller spends the account's quota. It returns
// err.
func (s *Session) refused(err error) error {
	if s.admission != nil {
		s.admission.Release(s.r.Header())
	}
	return err
}

// readAccount returns the account state the caller was verified against, reading the token and
// account items and verifying the caller first when this request has not (or they changed
// since). A write derived from it is safe: its Guard conditions on the same state.
func (s *Session) readAccount(ctx context.Context) (AccountState, error) {
	if st := s.account; st.Read && !st.Stale {
		return st, nil
	}
	if err := s.refresh(ctx); err != nil {
		return AccountState{}, err
	}
	return s.account, nil
}

// Assumed returns the account state the next Guard conditions on, without reading anything:
// the one the caller was verified against or, when the request has not read the account item,
// no API IP restriction (version 0). A write derived from it is as safe as one derived from a
// fresh read: the commit's guard conditions on exactly that state, so when the account has a
// restriction the commit fails with ErrRetry and the retried operation reads it (as every write
// of such an account does). Without a Restrictor the guard does not cover the restriction, so
// it reads the account item first when the request has not.
func (s *Session) Assumed(ctx context.Context) (AccountState, error) {
	if st := s.account; s.a.Restrictor != nil && !st.Stale {
		return st, nil
	}
	return s.readAccount(ctx)
}

// refresh reads the token and account items and verifies the caller against them.
func (s *Session) refresh(ctx context.Context) (err error) {
	defer derrors.Wrap(&err, "auth.refresh")
	if s.caller == nil {
		return ErrUnknownKey
	}
	items, err := s.a.DB.GetMany(ctx, s.ReadKeys()...)
	if err != nil {
		return err
	}
	return s.VerifyRead(ctx, items)
}

// Labels of the guard conditions in a write transaction.
const (
	labelToken     = "auth.token"
	labelAccount   = "auth.account"
	labelPrincipal = "auth.principal"
)

// guard makes tx conditional on the caller's token still existing, a bot or service user's own
// item still existing and being active, and the account's IP restriction being the one this
// request was checked against (none, unless the request read the account item). When the
// mutation itself updates the account item (acctUpdate), the guard becomes that update's
// condition, as one transaction may touch an item only once.
func (s *Session) guard(tx *store.Tx, acctUpdate *expression.UpdateBuilder) {
	c := s.caller
	// A key deleting itself already conditions on its token item existing (see Revoke).
	if !tx.Touches(store.TokenKey(c.TokenHash)) {
		tx.Check(labelToken, store.TokenKey(c.TokenHash), store.Exists())
	}
	// A bot changing or deleting its own item conditions on the version it read, which
	// VerifyRead found active.
	if k, ok := principalKey(c); ok && !tx.Touches(k) {
		tx.Check(labelPrincipal, k, expression.Name(AttrActive).Equal(expression.Value(true)))
	}
	cond := store.Exists().And(expression.AttributeNotExists(expression.Name("status")))
	if s.a.Restrictor != nil {
		cond = cond.And(s.a.Restrictor.Guard(s.account.Restriction))
	}
	if acctUpdate != nil {
		tx.Update(labelAccount, store.AccountKey(c.AccountID), *acctUpdate, cond)
		return
	}
	tx.Check(labelAccount, store.AccountKey(c.AccountID), cond)
}

// Refresh makes the request ready to build a write: when a commit of it failed with ErrRetry
// (its account state is stale), it reads the token and account items and verifies the caller
// against them as they are now, so that the write built next derives from (and Guard
// conditions on) that state; a revoked key or a refused address then gets its own error.
// Otherwise it reads nothing.
func (s *Session) Refresh(ctx context.Context) error {
	if s.account.Stale {
		return s.refresh(ctx)
	}
	return nil
}

// Guard adds to tx the conditions that make it commit only for a caller still valid (see
// guard); acctUpdate, when set, is an update of the account item the write applies in the same
// transaction. It then waits for the request's rate-limit decision (Admit): nothing is written
// for a refused request.
func (s *Session) Guard(tx *store.Tx, acctUpdate *expression.UpdateBuilder) error {
	s.guard(tx, acctUpdate)
	return s.Admit()
}

// Committed interprets err, the result of committing a transaction Guard guarded, as far as
// authentication goes: nil confirms the caller; the token's guard failing is ErrUnknownKey; the
// account's guard failing marks the account state stale and is ErrRetry (the operation is built
// again after Refresh, so accounts without a restriction pay one round trip). Any other error
// is returned as it is, for the writer to interpret.
func (s *Session) Committed(err error) error {
	switch {
	case err == nil:
		s.verified = true
		return nil
	case store.ConditionFailed(err, labelToken), store.ConditionFailed(err, labelPrincipal), errors.Is(err, ErrUnknownKey):
		return s.refused(ErrUnknownKey)
	case store.ConditionFailed(err, labelAccount):
		s.account.Stale = true
		return ErrRetry
	default:
		return err
	}
}
