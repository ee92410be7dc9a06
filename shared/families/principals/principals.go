package principals

import (
	"context"

	"tunnelapi/shared/platform/api"
	"tunnelapi/shared/platform/auth"
	"tunnelapi/shared/platform/ids"
	"tunnelapi/shared/platform/resource"
	"tunnelapi/shared/platform/store"
)

// User is a human member of an account. Users are made by bootstrap; admins may manage every
// resource of the account and assign owners.
type User struct {
	store.Meta
	Email string `dynamodbav:"email"`
	Admin bool   `dynamodbav:"admin"`
}

// Owner is a principal that a new key or credential will belong to.
type Owner struct {
	ID      string
	Admin   bool
	Subject string
}

// ResolveOwner returns the owner of a new secret: the caller by default; another user or bot
// of the account only when the caller is an admin (630). The owner's existence is also made a
// condition of m, so it cannot vanish between this read and the commit.
func ResolveOwner(ctx context.Context, k *resource.Kit, r *api.Request, m *resource.Mutation, supplied *string) (Owner, error) {
	c := r.Caller()
	if supplied == nil || *supplied == c.PrincipalID {
		return Owner{ID: c.PrincipalID, Admin: c.Admin, Subject: c.Subject}, nil
	}
	id := *supplied
	if !ids.Is(id, ids.User) && !ids.Is(id, ids.BotUser) {
		return Owner{}, api.Invalid("owner_id", "owner_id %s is not the id of a user (usr_…) or bot user (bot_…)", api.Describe(id))
	}
	if !c.Admin {
		return Owner{}, api.BadRequest(api.CodeOwnerNeedsAdmin, "owner_id", "only an admin may set owner_id to a principal other than itself")
	}
	notFound := api.Invalid("owner_id", "owner_id %s is not a user or bot user of this account", api.Describe(id))
	key := store.ResourceKey(c.AccountID, id)
	var o Owner
	if ids.Is(id, ids.User) {
		var u User
		if err := k.DB.Get(ctx, key, &u); store.IsNotFound(err) {
			return Owner{}, notFound
		} else if err != nil {
			return Owner{}, err
		}
		o = Owner{ID: id, Admin: u.Admin, Subject: u.Email}
	} else {
		var b BotUser
		if err := k.DB.Get(ctx, key, &b); store.IsNotFound(err) {
			return Owner{}, notFound
		} else if err != nil {
			return Owner{}, err
		}
		o = Owner{ID: id, Subject: b.Name}
	}
	m.Check("owner", key, store.Exists())
	m.Refuse("owner", notFound)
	return o, nil
}

// IssueToken makes the bearer secret of resource id (an API key or credential) owned by o, adds
// its hash item to m, and returns the secret (shown once) and its hash (stored on the resource).
func IssueToken(m *resource.Mutation, kind, accountID, id string, o Owner) (token, hash string) {
	token = ids.NewToken(id)
	hash = store.TokenHash(token)
	m.Put("token", auth.TokenItem{Key: store.TokenKey(hash), Kind: kind, AccountID: accountID,
		PrincipalID: o.ID, Subject: o.Subject, Admin: o.Admin, ResourceID: id}, store.Absent())
	return token, hash
}
