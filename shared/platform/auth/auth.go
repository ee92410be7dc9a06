package auth

import (
	"context"
	"errors"
	"sync"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/derrors"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/store"
)

// Token kinds: what a stored token hash authenticates.
const (
	KindAPIKey     = "api_key"
	KindCredential = "credential"
)

// TokenItem maps a token hash to the principal it acts as. It is written and deleted in the
// same transaction as the key or credential it belongs to.
type TokenItem struct {
	store.Key
	Kind        string `dynamodbav:"kind"`
	AccountID   string `dynamodbav:"account"`
	PrincipalID string `dynamodbav:"principal"`
	Subject     string `dynamodbav:"subject"`
	Admin       bool   `dynamodbav:"admin"`
	ResourceID  string `dynamodbav:"rid"`
}

// AccountItem is the per-account state every authenticated request reads or conditions on: the
// version of the account's API IP restriction. It holds nothing per principal, so it stays the
// same size however many principals come and go: whether a bot's keys are refused is its own
// item's (AttrActive).
type AccountItem struct {
	store.Key
	ID string `dynamodbav:"id"`
	// Restriction is the version of the account's API IP restriction, which the Restrictor
	// checks requests against and writes when it changes; 0 (absent) means none.
	Restriction int64 `dynamodbav:"ipx_v,omitempty"`
	Created     int64 `dynamodbav:"created"`
	// Status is set by the operator: StatusSuspended or StatusDeleting refuse every key of the
	// account; absent is active.
	Status string `dynamodbav:"status,omitempty"`
}

// Account statuses the operator sets (package operator); an active account has none.
const (
	StatusSuspended = "suspended"
	StatusDeleting  = "deleting"
)

// ErrSuspended is the 403 for a key of a suspended account.
var ErrSuspended = api.Forbidden(api.CodeSuspended, "the account is suspended: its API keys are refused until the operator resumes it")

// decodeToken is store.Unmarshal of a token item without reflection: VerifyRead decodes one on
// every request.
func decodeToken(it store.Item) (_ TokenItem, err error) {
	defer derrors.Wrap(&err, "auth.decodeToken")
	a := store.Attrs{Item: it}
	t := TokenItem{Key: a.Key(), Kind: a.String("kind"), AccountID: a.String("account"),
		PrincipalID: a.String("principal"), Subject: a.String("subject"), Admin: a.Bool("admin"),
		ResourceID: a.String("rid")}
	if err := a.Err(); err != nil {
		return TokenItem{}, err
	}
	return t, nil
}

// decodeAccount is store.Unmarshal of an account item without reflection: VerifyRead decodes
// one on every request.
func decodeAccount(it store.Item) (_ AccountItem, err error) {
	defer derrors.Wrap(&err, "auth.decodeAccount")
	a := store.Attrs{Item: it}
	acct := AccountItem{Key: a.Key(), ID: a.String("id"), Restriction: a.Int("ipx_v"), Created: a.Int("created"),
		Status: a.String("status")}
	if err := a.Err(); err != nil {
		return AccountItem{}, err
	}
	return acct, nil
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

// Restrictor is the account's API IP restriction as authentication uses it. Package iprestrict
// implements it: the check, the cache of compiled versions and the stored versions are its own.
type Restrictor interface {
	// Check applies version v (0: none) of account's restriction to r's source address: an
	// error refuses the request (ErrRetry when that version no longer exists); a warning may be
	// added to r's response headers.
	Check(ctx context.Context, r *api.Request, account string, v int64) error
	// Guard is the condition on the account item that holds while its restriction is still
	// version v (0: none).
	Guard(v int64) expression.ConditionBuilder
}

// Limiter is the per-account rate limit as authentication uses it. Package ratelimit
// implements it: the counters and the decision are its own.
type Limiter interface {
	// Start counts one request against account and returns its pending decision at once: the
	// count runs concurrently with the request's own reads, and r.Admit waits for it.
	Start(ctx context.Context, account string) api.Admission
}

// Authenticator resolves and verifies callers.
type Authenticator struct {
	DB *store.DB
	// Restrictor checks every request against the account's API IP restriction; nil enforces
	// none.
	Restrictor Restrictor
	// Limiter counts every request whose token names an account against that account's rate
	// limit; nil limits nothing.
	Limiter Limiter

	mu    sync.Mutex
	hints map[string]api.Caller
}

const maxHints = 10000

// ErrUnknownKey is the 403 for a token that does not exist or has been revoked.
var ErrUnknownKey = api.Forbidden(api.CodeUnknownKey, "the API key is not valid: it does not exist or has been revoked")

// ErrAuthtokenAsKey is the 403 for a tunnel authtoken sent as an API key.
var ErrAuthtokenAsKey = api.Forbidden(api.CodeAuthtokenAsKey, "the bearer token is a tunnel authtoken, not an API key")

// ErrRetry reports that the account's access settings changed while the request was served:
// the operation must be built again from a fresh read. Package resource's retry policy does
// that; a path without one answers with this 429 (api.TooConcurrent).
var ErrRetry = api.TooConcurrent("the account's access settings changed while the request ran; nothing was changed: retry it")

// Resolve returns the caller a request's token claims to be. The identity comes from the hint
// cache or a consistent read of the token item; it is confirmed later, with the data.
func (a *Authenticator) Resolve(ctx context.Context, r *api.Request) (_ *api.Caller, err error) {
	defer derrors.Wrap(&err, "auth.Resolve")
	if c := r.Caller(); c != nil {
		return c, nil
	}
	h := store.TokenHash(r.Token)
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
	r.SetCaller(&c)
	// The one place a request is counted: from here its account is known, and the count runs
	// while the request reads or builds its transaction; Admit (in VerifyRead and Guard) waits
	// for the decision before anything is released or written.
	if a.Limiter != nil {
		r.SetAdmission(a.Limiter.Start(ctx, c.AccountID))
	}
	return &c, nil
}

func (a *Authenticator) remember(h string, c api.Caller) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.hints == nil || len(a.hints) >= maxHints {
		a.hints = make(map[string]api.Caller)
	}
	a.hints[h] = c
}

// Forget drops a token's hint (after the token is deleted by this process).
func (a *Authenticator) Forget(hash string) {
	a.mu.Lock()
	delete(a.hints, hash)
	a.mu.Unlock()
}

// ReadKeys are the items a read must fetch alongside its data to verify the caller: its token
// item, its account item and, for a bot or service user, the principal's own item.
func ReadKeys(c *api.Caller) []store.Key {
	keys := []store.Key{store.TokenKey(c.TokenHash), store.AccountKey(c.AccountID)}
	if k, ok := principalKey(c); ok {
		keys = append(keys, k)
	}
	return keys
}

// VerifyRead confirms the caller from the items of ReadKeys fetched with the data (in its
// order, nil when absent) and records the account state on r. Only after it succeeds may
// anything read be released.
func (a *Authenticator) VerifyRead(ctx context.Context, r *api.Request, read []store.Item) error {
	if err := r.Admit(); err != nil {
		return err
	}
	c := r.Caller()
	if c == nil || len(read) != len(ReadKeys(c)) || read[0] == nil || read[1] == nil {
		return refused(r, ErrUnknownKey)
	}
	token, account := read[0], read[1]
	if _, ok := principalKey(c); ok && !active(read[2]) {
		return refused(r, ErrUnknownKey)
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
		return refused(r, ErrUnknownKey)
	}
	if acct.Status != "" {
		return refused(r, ErrSuspended)
	}
	if a.Restrictor != nil {
		if err := a.Restrictor.Check(ctx, r, c.AccountID, acct.Restriction); err != nil {
			if _, refusal := api.AsError(err); refusal && !errors.Is(err, ErrRetry) {
				return refused(r, err)
			}
			return err
		}
	}
	r.SetAccountState(api.AccountState{Read: true, Restriction: acct.Restriction})
	r.Verified()
	return nil
}

// refused gives back r's count against its account's rate limit, as r's caller is refused with
// err: only a verified, admitted caller spends the account's quota. It returns err.
func refused(r *api.Request, err error) error {
	r.Uncount()
	return err
}

// Account returns the account state r's caller was verified against, reading the token and
// account items and verifying the caller first when this request has not (or they changed
// since). A write derived from it is safe: its Guard conditions on the same state.
func (a *Authenticator) Account(ctx context.Context, r *api.Request) (api.AccountState, error) {
	if s := r.AccountState(); s.Read && !s.Stale {
		return s, nil
	}
	if err := a.refresh(ctx, r); err != nil {
		return api.AccountState{}, err
	}
	return r.AccountState(), nil
}

// Assumed returns the account state r's next Guard conditions on, without reading anything: the
// one r's caller was verified against or, when r has not read the account item, no API IP
// restriction (version 0). A write derived from it is as safe as one derived from Account: the
// commit's guard conditions on exactly that state, so when the account has a restriction the
// commit fails with ErrRetry and the retried operation reads it (as every write of such an
// account does). Without a Restrictor the guard does not cover the restriction, so it reads as
// Account does.
func (a *Authenticator) Assumed(ctx context.Context, r *api.Request) (api.AccountState, error) {
	if s := r.AccountState(); a.Restrictor != nil && !s.Stale {
		return s, nil
	}
	return a.Account(ctx, r)
}

// refresh reads the token and account items and verifies the caller against them.
func (a *Authenticator) refresh(ctx context.Context, r *api.Request) (err error) {
	defer derrors.Wrap(&err, "auth.refresh")
	c := r.Caller()
	if c == nil {
		return ErrUnknownKey
	}
	items, err := a.DB.GetMany(ctx, ReadKeys(c)...)
	if err != nil {
		return err
	}
	return a.VerifyRead(ctx, r, items)
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
func (a *Authenticator) guard(tx *store.Tx, r *api.Request, acctUpdate *expression.UpdateBuilder) {
	c := r.Caller()
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
	if a.Restrictor != nil {
		cond = cond.And(a.Restrictor.Guard(r.AccountState().Restriction))
	}
	if acctUpdate != nil {
		tx.Update(labelAccount, store.AccountKey(c.AccountID), *acctUpdate, cond)
		return
	}
	tx.Check(labelAccount, store.AccountKey(c.AccountID), cond)
}

// Refresh makes r ready to build a write: when a commit of r failed with ErrRetry (its account
// state is stale), it reads the token and account items and verifies the caller against them
// as they are now, so that the write built next derives from (and Guard conditions on) that
// state; a revoked key or a refused address then gets its own error. Otherwise it reads nothing.
func (a *Authenticator) Refresh(ctx context.Context, r *api.Request) error {
	if s := r.AccountState(); s.Stale {
		return a.refresh(ctx, r)
	}
	return nil
}

// Guard adds to tx the conditions that make it commit only for a caller still valid (see
// guard); acctUpdate, when set, is an update of the account item the write applies in the same
// transaction. It then waits for the request's rate-limit decision (api.Request.Admit): nothing
// is written for a refused request.
func (a *Authenticator) Guard(r *api.Request, tx *store.Tx, acctUpdate *expression.UpdateBuilder) error {
	a.guard(tx, r, acctUpdate)
	return r.Admit()
}

// Committed interprets err, the result of committing a transaction Guard guarded, as far as
// authentication goes: nil confirms the caller; the token's guard failing is ErrUnknownKey; the
// account's guard failing marks r's account state stale and is ErrRetry (the operation is built
// again after Refresh, so accounts without a restriction pay one round trip). Any other error
// is returned as it is, for the writer to interpret.
func (a *Authenticator) Committed(r *api.Request, err error) error {
	switch {
	case err == nil:
		r.Verified()
		return nil
	case store.ConditionFailed(err, labelToken), store.ConditionFailed(err, labelPrincipal), errors.Is(err, ErrUnknownKey):
		return refused(r, ErrUnknownKey)
	case store.ConditionFailed(err, labelAccount):
		s := r.AccountState()
		s.Stale = true
		r.SetAccountState(s)
		return ErrRetry
	default:
		return err
	}
}
