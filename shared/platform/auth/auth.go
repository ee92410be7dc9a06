// Package auth verifies bearer tokens. A token's identity (account, principal) is immutable, so
// it may be remembered between requests as a hint; whether the token is still valid never is:
// every request confirms it in the same DynamoDB round trip as the data it reads or writes.
package auth

import (
	"context"
	"errors"
	"sync"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"tunnelapi/shared/platform/api"
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

// AccountItem is the per-account state every authenticated request reads or conditions on:
// principals whose keys are refused (inactive or deleted bots), and the compiled API IP
// restriction, whose version writes condition on.
type AccountItem struct {
	store.Key
	ID      string   `dynamodbav:"id"`
	Revoked []string `dynamodbav:"revoked,stringset,omitempty"`
	// IPXVersion changes (to a fresh random value) whenever the account's API restrictions or
	// the rules they use change; 0 means none. IPX is their compiled state (package iprestrict).
	IPXVersion int64 `dynamodbav:"ipx_v,omitempty"`
	// IPX is the compiled restriction of IPXVersion, kept in its own item (store.IPXKey) and
	// loaded only when needed (LoadIPX).
	IPX     []byte `dynamodbav:"-"`
	Created int64  `dynamodbav:"created"`
}

// IsRevoked reports whether keys owned by principal are refused.
func (a *AccountItem) IsRevoked(principal string) bool {
	for _, p := range a.Revoked {
		if p == principal {
			return true
		}
	}
	return false
}

// Policy is an extra account-level check on every request (the API IP restriction). It sees
// the account item read or conditioned on in the request's own round trip.
type Policy func(r *api.Request, acct *AccountItem) error

// Authenticator resolves and verifies callers.
type Authenticator struct {
	DB     *store.DB
	Policy Policy

	mu    sync.Mutex
	hints map[string]api.Caller
}

const maxHints = 10000

var errUnknownKey = api.Forbidden(api.CodeUnknownKey, "the API key is not valid: it does not exist or has been revoked")

// Resolve returns the caller a request's token claims to be. The identity comes from the hint
// cache or a consistent read of the token item; it is confirmed later, with the data.
func (a *Authenticator) Resolve(ctx context.Context, r *api.Request) (*api.Caller, error) {
	if c := r.Caller(); c != nil {
		return c, nil
	}
	h := store.TokenHash(r.Token)
	a.mu.Lock()
	c, ok := a.hints[h]
	a.mu.Unlock()
	if !ok {
		var t TokenItem
		err := a.DB.Get(ctx, store.TokenKey(h), &t)
		if store.IsNotFound(err) {
			return nil, errUnknownKey
		}
		if err != nil {
			return nil, err
		}
		if t.Kind == KindCredential {
			return nil, api.Forbidden(api.CodeAuthtokenAsKey, "the bearer token is a tunnel authtoken, not an API key")
		}
		if t.Kind != KindAPIKey {
			return nil, errUnknownKey
		}
		c = api.Caller{AccountID: t.AccountID, PrincipalID: t.PrincipalID, Admin: t.Admin, CredentialID: t.ResourceID, TokenHash: h, Subject: t.Subject}
		a.remember(h, c)
	}
	r.SetCaller(&c)
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

// ReadKeys are the items a read must fetch alongside its data to verify the caller.
func ReadKeys(c *api.Caller) []store.Key {
	return []store.Key{store.TokenKey(c.TokenHash), store.AccountKey(c.AccountID)}
}

// ErrNeedAccount is what a Policy returns when it must see the account's compiled restriction
// (this process has not compiled that version yet); the check is repeated once it is loaded.
var ErrNeedAccount = errors.New("auth: policy needs the account's compiled restriction")

// IsPartial reports whether acct has a compiled restriction that has not been loaded.
func (a *AccountItem) IsPartial() bool { return a.IPXVersion != 0 && a.IPX == nil }

// VerifyRead confirms the caller from the token and account items fetched with the data.
// Only after it succeeds may anything read be released.
func (a *Authenticator) VerifyRead(ctx context.Context, r *api.Request, token, account store.Item) error {
	c := r.Caller()
	if c == nil || token == nil || account == nil {
		return errUnknownKey
	}
	var t TokenItem
	var acct AccountItem
	if err := store.Unmarshal(token, &t); err != nil {
		return err
	}
	if err := store.Unmarshal(account, &acct); err != nil {
		return err
	}
	return a.verify(ctx, r, &t, &acct)
}

func (a *Authenticator) verify(ctx context.Context, r *api.Request, t *TokenItem, acct *AccountItem) error {
	c := r.Caller()
	if t.Kind != KindAPIKey || t.AccountID != c.AccountID || t.PrincipalID != c.PrincipalID {
		return errUnknownKey
	}
	if acct.IsRevoked(c.PrincipalID) {
		return errUnknownKey
	}
	if a.Policy != nil {
		err := a.Policy(r, acct)
		if errors.Is(err, ErrNeedAccount) && acct.IsPartial() {
			full, ferr := a.LoadIPX(ctx, acct)
			if ferr != nil {
				return ferr
			}
			return a.verify(ctx, r, t, full)
		}
		if err != nil {
			return err
		}
	}
	r.SetAccountState(acct)
	r.Verified()
	return nil
}

// Account returns the account item r's caller was verified against (with its compiled
// restriction when loadIPX), reading what the request has not read yet (consistently). A write derived
// from it is safe: GuardWrite conditions on the version of the restriction state it carries.
func (a *Authenticator) Account(ctx context.Context, r *api.Request, loadIPX bool) (*AccountItem, error) {
	acct, _ := r.AccountState().(*AccountItem)
	if acct == nil {
		// Nothing was read yet in this request (a create): read the account item now; the write
		// guard conditions on the version read here.
		c := r.Caller()
		if c == nil {
			return nil, errUnknownKey
		}
		acct = &AccountItem{}
		if err := a.DB.Get(ctx, store.AccountKey(c.AccountID), acct); err != nil {
			return nil, err
		}
		r.SetAccountState(acct)
	}
	if !loadIPX || !acct.IsPartial() {
		return acct, nil
	}
	full, err := a.LoadIPX(ctx, acct)
	if err != nil {
		return nil, err
	}
	r.SetAccountState(full)
	return full, nil
}

// LoadIPX returns acct with its compiled restriction loaded. When that version's item is gone
// (a change committed since acct was read), the account item is read again, so the result is
// always a version and its own rules.
func (a *Authenticator) LoadIPX(ctx context.Context, acct *AccountItem) (*AccountItem, error) {
	cur := *acct
	for attempt := 0; attempt < 3; attempt++ {
		if cur.IPXVersion == 0 {
			return &cur, nil
		}
		var blob struct {
			IPX []byte `dynamodbav:"ipx"`
		}
		err := a.DB.Get(ctx, store.IPXKey(cur.ID, cur.IPXVersion), &blob)
		if err == nil {
			cur.IPX = blob.IPX
			return &cur, nil
		}
		if !store.IsNotFound(err) {
			return nil, err
		}
		var fresh AccountItem
		if err := a.DB.Get(ctx, store.AccountKey(cur.ID), &fresh); err != nil {
			return nil, err
		}
		cur = fresh
	}
	return nil, ErrGuardChanged
}

// Labels of the guard conditions in a write transaction.
const (
	labelToken   = "auth.token"
	labelAccount = "auth.account"
)

// ErrUnknownKey is the 403 for a token that does not exist or has been revoked.
var ErrUnknownKey = errUnknownKey

// GuardWrite makes tx conditional on the caller's token still existing and its principal not
// being revoked, and on the account's IP restriction being the one this request was checked
// against (none, unless the request already read the account item).
// When the mutation itself updates the account item (acctUpdate), the guard becomes that
// update's condition, as one transaction may touch an item only once.
func GuardWrite(tx *store.Tx, r *api.Request, acctUpdate *expression.UpdateBuilder) {
	c := r.Caller()
	// A key deleting itself already conditions on its token item existing (see Revoke).
	if !tx.Touches(store.TokenKey(c.TokenHash)) {
		tx.Check(labelToken, store.TokenKey(c.TokenHash), store.Exists())
	}
	ipx := expression.AttributeNotExists(expression.Name("ipx_v"))
	if acct, _ := r.AccountState().(*AccountItem); acct != nil && acct.IPXVersion != 0 {
		ipx = expression.Name("ipx_v").Equal(expression.Value(acct.IPXVersion))
	}
	cond := store.Exists().
		And(expression.Not(expression.Contains(expression.Name("revoked"), c.PrincipalID))).
		And(ipx)
	if acctUpdate != nil {
		tx.Update(labelAccount, store.AccountKey(c.AccountID), *acctUpdate, cond)
		return
	}
	tx.Check(labelAccount, store.AccountKey(c.AccountID), cond)
}

// Commit commits tx guarded by the caller's credentials. When the account guard fails it reads
// the account item, applies the checks a read would, and retries once with that snapshot, so
// accounts without an API restriction pay one round trip and others two.
// build may return an update of the account item to apply in the same transaction.
func (a *Authenticator) Commit(ctx context.Context, r *api.Request, build func(tx *store.Tx) (*expression.UpdateBuilder, error)) error {
	for attempt := 0; attempt < 2; attempt++ {
		tx := &store.Tx{}
		acctUpdate, err := build(tx)
		if err != nil {
			return err
		}
		GuardWrite(tx, r, acctUpdate)
		err = a.DB.Commit(ctx, tx)
		switch {
		case err == nil:
			r.Verified()
			return nil
		case store.ConditionFailed(err, labelToken):
			return errUnknownKey
		case store.ConditionFailed(err, labelAccount):
			items, gerr := a.DB.GetMany(ctx, ReadKeys(r.Caller())...)
			if gerr != nil {
				return gerr
			}
			if err := a.VerifyRead(ctx, r, items[0], items[1]); err != nil {
				return err
			}
			continue
		default:
			return err
		}
	}
	return ErrGuardChanged
}

// ErrGuardChanged reports that the account's auth state changed twice during one write.
var ErrGuardChanged = api.Conflict("the account's access settings changed during the request; retry it")
