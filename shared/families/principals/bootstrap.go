package principals

import (
	"context"
	"time"

	"tunnelapi/shared/platform/auth"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/resource"
	"tunnelapi/shared/platform/store"
)

// Bootstrapped is what Bootstrap made: a new account, its admin user and that user's API key.
type Bootstrapped struct {
	AccountID string `json:"account_id"`
	UserID    string `json:"user_id"`
	APIKeyID  string `json:"api_key_id"`
	Token     string `json:"token"`
}

// TenantItem is an account's entry in the operator's list of tenants (store.TenantKey), written
// with the account and changed with its status, so tenants are listed without a scan.
type TenantItem struct {
	store.Key
	ID      string `dynamodbav:"id"`
	Email   string `dynamodbav:"email"`
	Created int64  `dynamodbav:"created"`
	// Status is the account item's (auth.AccountItem.Status): absent while active.
	Status string `dynamodbav:"status,omitempty"`
}

// Bootstrap creates an account with an admin user and an API key owned by that user, and the
// account's entry in the list of tenants, in one transaction. It is how a tenant comes to exist
// (the operator's create, and the local stack's first account).
func Bootstrap(ctx context.Context, db *store.DB, email, description string) (*Bootstrapped, error) {
	now := time.Now().UTC()
	acct := ids.NewAt(ids.Account, now)
	user := ids.NewAt(ids.User, now)
	key := ids.NewAt(ids.APIKey, now)
	token := ids.NewToken(key)
	hash := store.TokenHash(token)
	tx := &store.Tx{}
	tx.Put("tenant", TenantItem{Key: store.TenantKey(acct), ID: acct, Email: email, Created: now.Unix()}, store.Absent())
	tx.Put("account", auth.AccountItem{Key: store.AccountKey(acct), ID: acct, Created: now.Unix()}, store.Absent())
	tx.Put("user", UserItem{Meta: meta(acct, user, now), Email: email, Admin: true}, store.Absent())
	tx.Put("key", APIKeyItem{SecretBase: SecretBase{Meta: meta(acct, key, now), Described: resource.Described{Description: description},
		OwnerID: user, TokenHash: hash}}, store.Absent())
	tx.Put("token", auth.TokenItem{Key: store.TokenKey(hash), Kind: auth.KindAPIKey, AccountID: acct,
		PrincipalID: user, Subject: email, Admin: true, ResourceID: key}, store.Absent())
	if err := db.Commit(ctx, tx); err != nil {
		return nil, err
	}
	return &Bootstrapped{AccountID: acct, UserID: user, APIKeyID: key, Token: token}, nil
}

func meta(account, id string, now time.Time) store.Meta {
	return store.Meta{Key: store.ResourceKey(account, id), ID: id, AccountID: account, CreatedAt: now.Unix(), Version: 1}
}

// IssueAdminKey creates an API key of account's first admin user (the one Bootstrap made),
// as the operator does for an export or an import: its token is returned once, and it is
// refused, as every key is, while the account is suspended or being deleted.
func IssueAdminKey(ctx context.Context, db *store.DB, account, description string) (*Bootstrapped, error) {
	users, err := db.QueryAll(ctx, store.Collection(account, ids.User))
	if err != nil {
		return nil, err
	}
	var admin *UserItem
	for _, it := range users {
		var u UserItem
		if err := store.Unmarshal(it, &u); err != nil {
			return nil, err
		}
		if u.Admin && (admin == nil || u.ID < admin.ID) {
			admin = &u
		}
	}
	if admin == nil {
		return nil, store.ErrNotFound
	}
	now := time.Now().UTC()
	key := ids.NewAt(ids.APIKey, now)
	token := ids.NewToken(key)
	hash := store.TokenHash(token)
	tx := &store.Tx{}
	tx.Check("account", store.AccountKey(account), store.Exists())
	tx.Put("key", APIKeyItem{SecretBase: SecretBase{Meta: meta(account, key, now), Described: resource.Described{Description: description},
		OwnerID: admin.ID, TokenHash: hash}}, store.Absent())
	tx.Put("token", auth.TokenItem{Key: store.TokenKey(hash), Kind: auth.KindAPIKey, AccountID: account,
		PrincipalID: admin.ID, Subject: admin.Email, Admin: true, ResourceID: key}, store.Absent())
	if err := db.Commit(ctx, tx); err != nil {
		return nil, err
	}
	return &Bootstrapped{AccountID: account, UserID: admin.ID, APIKeyID: key, Token: token}, nil
}
