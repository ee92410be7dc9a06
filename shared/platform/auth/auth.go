package auth

import (
	"context"
	"sync"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/derrors"
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
	// count runs concurrently with the request's own reads, and Session.Admit waits for it.
	Start(ctx context.Context, account string) Admission
}

// Authenticator makes each request's Session, which resolves and verifies its caller; it holds
// what outlives a request: the store, the restriction and rate limit, and the hints.
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

func (a *Authenticator) remember(h string, c api.Caller) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.hints == nil || len(a.hints) >= maxHints {
		a.hints = make(map[string]api.Caller)
	}
	a.hints[h] = c
}

// forget drops a token's hint (Session.Forget).
func (a *Authenticator) forget(hash string) {
	a.mu.Lock()
	delete(a.hints, hash)
	a.mu.Unlock()
}
